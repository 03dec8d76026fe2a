package proxy

import (
	"encoding/json"
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
