package proxy

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzKeyChecker: the byte scanner agrees with the encoding/json reference on every valid JSON
// input about whether keys are ambiguous.
func FuzzKeyChecker(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"A":2}`, `{"a":{"b":1,"b":2}}`, `[{"x":1},{"x":1}]`, `{"k":"v","K\u0041":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"\"}"}}}`,
		`{"\u0061":1,"a":2}`, `{"ß":1,"SS":2}`, `{}`, `[]`, `"s"`, `{"a":[1,{"b":{"c":[{"d":1,"D":2}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		slow := ambiguousKeysSlow(b)
		k := keyChecker{b: b}
		fast := k.check(false)
		if errors.Is(slow, ErrAmbiguousKeys) != errors.Is(fast, ErrAmbiguousKeys) {
			t.Fatalf("%s: reference %v, scanner %v", b, slow, fast)
		}
		if fast != nil && !errors.Is(fast, ErrAmbiguousKeys) {
			t.Fatalf("%s is valid JSON but the scanner says %v", b, fast)
		}
	})
}

func TestStrictMessageTable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool // accepted
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"evil"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","pArAms":{"name":"evil"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"evil"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"Name":"fine","path":"/a"}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":1,"p":2}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a"},"extra":{"Uri":1}}`, true},
	} {
		_, err := StrictMessage([]byte(tc.in))
		if (err == nil) != tc.want {
			t.Errorf("StrictMessage(%s) = %v, want accepted=%v", tc.in, err, tc.want)
		}
	}
}

func BenchmarkStrictMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/home/dev/project/README.md","encoding":"utf-8","lines":[1,2,3],"opts":{"follow":true,"max":4096}},"_meta":{"progressToken":"t"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StrictMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}
