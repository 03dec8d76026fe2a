package mcp

import (
	"bytes"
	"encoding/json"
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
		`{"jsonrpc":"2.0","id":1,"method":`, `[]`, ``, `null`, `{"jsonrpc":"1.0"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _, err := ParseBody(body)
		if err != nil {
			return
		}
		for _, m := range msgs {
			env := Envelope(m, Context{Transport: "http", Server: "s"}, "id")
			// An accepted message, re-encoded, parses to an equal message and envelope.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			m2, err := ParseMessage(b)
			if err != nil {
				t.Fatalf("re-encoded message rejected: %v\n%s", err, b)
			}
			env2 := Envelope(m2, Context{Transport: "http", Server: "s"}, "id")
			e1, _ := json.Marshal(env)
			e2, _ := json.Marshal(env2)
			if !bytes.Equal(e1, e2) && !reflect.DeepEqual(env, env2) {
				t.Fatalf("envelope changed across a round trip:\n%s\n%s", e1, e2)
			}
			if env.Method != m.Method {
				t.Fatalf("envelope method %q, message %q", env.Method, m.Method)
			}
		}
	})
}

func TestParseBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		err   error
		batch bool
		n     int
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, false, 1},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, nil, true, 2},
		{"empty", `  `, ErrEmpty, false, 0},
		{"empty batch", `[]`, ErrEmptyBatch, true, 0},
		{"not json", `{`, ErrNotJSON, false, 0},
		{"bad version", `{"jsonrpc":"1.0","id":1,"method":"x"}`, ErrBadVersion, false, 0},
		{"no method", `{"jsonrpc":"2.0","id":1}`, ErrNoMethod, false, 0},
		{"scalar params", `{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`, ErrBadParams, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, batch, err := ParseBody([]byte(tc.body))
			if tc.err != nil {
				if err == nil || !errorsIs(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || batch != tc.batch || len(msgs) != tc.n {
				t.Fatalf("got %d msgs batch=%v err=%v", len(msgs), batch, err)
			}
		})
	}
}

func TestEnvelopeTargets(t *testing.T) {
	m, _ := ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-env","arguments":{"name":"HOME"},"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2"}}}}`))
	env := Envelope(m, Context{Server: "s", Session: "x"}, "a1")
	if env.Tool != "get-env" || string(env.Arguments) != `{"name":"HOME"}` || env.Agent != "claude-code" || env.Client.Version != "2" {
		t.Fatalf("envelope %+v", env)
	}
	m, _ = ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`))
	if env := Envelope(m, Context{}, "a"); env.URI != "file:///x" || env.Tool != "" {
		t.Fatalf("resources/read envelope %+v", env)
	}
	m, _ = ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}}}`))
	if env := Envelope(m, Context{}, "a"); env.Prompt != "p" {
		t.Fatalf("prompts/get envelope %+v", env)
	}
	if tok := ProgressToken(json.RawMessage(`{"_meta":{"progressToken":"t1"}}`)); string(tok) != `"t1"` {
		t.Fatalf("progress token %s", tok)
	}
}
