package proxy

import (
	"encoding/json"
	"math/big"
	"strconv"
	"testing"
)

func TestIDKey(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`1`, `1.0`, true}, {`1`, `1e0`, true}, {`10`, `1e1`, true}, {`0`, `-0`, true},
		{`1`, `"1"`, false}, {`"a"`, `"\u0061"`, true}, {`"1"`, `"1.0"`, false},
		{`9007199254740993`, `9007199254740992`, false}, {`1`, `2`, false}, {` 7 `, `7`, true},
	} {
		t.Run(tc.a+" "+tc.b, func(t *testing.T) {
			if got := sameID(json.RawMessage(tc.a), json.RawMessage(tc.b)); got != tc.same {
				t.Errorf("sameID(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
			}
		})
	}
}

// TestSmallIntKey: idKey's integer shortcut gives the key math/big gives, for every integer it
// takes and at the edges of what it refuses.
func TestSmallIntKey(t *testing.T) {
	var lits []string
	for i := -1000; i <= 1000; i++ {
		lits = append(lits, strconv.Itoa(i))
	}
	for i := 1; i <= 999999; i += 997 {
		lits = append(lits, strconv.Itoa(i), strconv.Itoa(-i))
	}
	lits = append(lits, "-0", "00", "01", "-01", "999999", "-999999", "1000000", "-1000000",
		"1234567", "100000", "-", "1.0", "1e3", "0x1", "1 ", "")
	for _, lit := range lits {
		k, ok := smallIntKey([]byte(lit))
		if !ok {
			continue
		}
		if want := bigKey(t, lit); k != want {
			t.Errorf("smallIntKey(%q) = %q, math/big says %q", lit, k, want)
		}
	}
	for _, lit := range []string{"1000000", "1234567", "01", "-", "1.0", "1e3", ""} {
		if _, ok := smallIntKey([]byte(lit)); ok {
			t.Errorf("smallIntKey(%q) took a literal it must leave to math/big", lit)
		}
	}
}

// bigKey is idKey's numeric path without the shortcut.
func bigKey(t *testing.T, lit string) string {
	t.Helper()
	f, _, err := big.ParseFloat(lit, 10, 256, big.ToNearestEven)
	if err != nil {
		t.Fatalf("ParseFloat(%q): %v", lit, err)
	}
	if f.Sign() == 0 {
		return "n:0"
	}
	return "n:" + f.Text('g', -1)
}

// FuzzUpstreamMessages: splitting what an upstream sent never panics, a message it accepts has
// no ambiguous keys, and an accepted response's id is the same value as itself re-encoded.
func FuzzUpstreamMessages(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}},{"jsonrpc":"2.0","method":"notifications/message"}]`,
		`{"jsonrpc":"2.0","id":"1","error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"result":{}}`,
		`[`, `[1,2]`, `{"jsonrpc":"1.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1e400,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := upstreamMessages(b, 0)
		if err != nil {
			return
		}
		if AmbiguousKeys(b) != nil {
			t.Fatalf("accepted ambiguous keys: %q", b)
		}
		for _, um := range ms {
			if um.err != nil || !um.msg.IsResponse() {
				continue
			}
			var v any
			if json.Unmarshal(um.msg.ID, &v) != nil {
				continue
			}
			re, _ := json.Marshal(v)
			if _, isNum := v.(float64); !isNum && !sameID(um.msg.ID, re) {
				t.Fatalf("id %s and its re-encoding %s differ", um.msg.ID, re)
			}
		}
	})
}

// BenchmarkSameID: matching an upstream answer's id to its request's, as relay does for every
// answer (the same bytes, the usual case), and with a spelling only math/big can equate.
func BenchmarkSameID(b *testing.B) {
	for _, tc := range []struct{ name, a, b string }{
		{"same bytes", `17`, `17`}, {"int and float", `17`, `17.0`}, {"strings", `"call-17"`, `"call-17"`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			x, y := json.RawMessage(tc.a), json.RawMessage(tc.b)
			b.ReportAllocs()
			for b.Loop() {
				if !sameID(x, y) {
					b.Fatal("not the same")
				}
			}
		})
	}
}
