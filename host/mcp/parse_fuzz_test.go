package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzParseBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1,"io.modelcontextprotocol/clientInfo":{"name":"c"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c"},"capabilities":{"sampling":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","Name":"y"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[[[[{"b":1,"b":2}]]]]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":`, `[]`, ``, `null`, `{"jsonrpc":"1.0"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":5}`,
		`[[[[[[[[[[[[[[[[`, `{"a":{"a":{"a":{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _, err := ParseBody(body, Context{Transport: "http", Server: "s"})
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if err := ambiguousKeysSlow(body); err != nil {
			t.Fatalf("accepted ambiguous keys %q: %v", body, err)
		}
		for _, p := range msgs {
			m := p.Message
			// An accepted message, re-encoded, parses to an equal message and envelope.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			p2, err := Parse(b, Context{Transport: "http", Server: "s"})
			if err != nil {
				t.Fatalf("re-encoded message rejected: %v\n%s", err, b)
			}
			e1, _ := json.Marshal(p.Envelope)
			e2, _ := json.Marshal(p2.Envelope)
			if !bytes.Equal(e1, e2) && !reflect.DeepEqual(p.Envelope, p2.Envelope) {
				t.Fatalf("envelope changed across a round trip:\n%s\n%s", e1, e2)
			}
			if p.Envelope != nil && p.Envelope.Method != m.Method {
				t.Fatalf("envelope method %q, message %q", p.Envelope.Method, m.Method)
			}
			// encoding/json, which matches keys case-insensitively, reads the same message.
			var g Message
			if err := json.Unmarshal(b, &g); err != nil || g.Method != p2.Message.Method || !bytes.Equal(g.Params, p2.Message.Params) {
				t.Fatalf("encoding/json reads %+v (err %v), the scan %+v", g, err, p2.Message)
			}
		}
	})
}

// FuzzCheck: the scanner agrees with encoding/json on validity (up to MaxDepth) and with the
// token-walking reference on ambiguous keys.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"A":2}`, `{"a":{"b":1,"b":2}}`, `[{"x":1},{"x":1}]`, `{"k":"v","K\u0041":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"\"}"}}}`,
		`{"\u0061":1,"a":2}`, `{"ß":1,"SS":2}`, `{}`, `[]`, `"s"`, `{"a":[1,{"b":{"c":[{"d":1,"D":2}]}}]}`,
		`-0.5e+3`, `01`, `1.`, `"\ud800"`, "\"\xff\"", `{"a":1}x`, `tru`, ` [ 1 , 2 ] `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b)
		if errors.Is(err, ErrTooDeep) {
			return
		}
		valid := json.Valid(b)
		if err == nil && !valid {
			t.Fatalf("Check accepted invalid JSON %q", b)
		}
		if !valid || !utf8Valid(b) {
			return // invalid UTF-8 in a string is refused on purpose: parsers disagree on it
		}
		slow := ambiguousKeysSlow(b)
		if errors.Is(slow, ErrAmbiguousKeys) != errors.Is(err, ErrAmbiguousKeys) {
			t.Fatalf("%s: reference %v, scanner %v", b, slow, err)
		}
		if err != nil && !errors.Is(err, ErrAmbiguousKeys) {
			t.Fatalf("%s is valid JSON but Check says %v", b, err)
		}
	})
}
