package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/added060/palisade/host/proxy"
)

// Messages whose keys different JSON parsers read differently are refused, never forwarded: the
// helper server exits with code 3 if forbidden_tool ever reaches it.
func TestStdioRefusesAmbiguousMessages(t *testing.T) {
	e := agentsEngine(t, &sink{})
	pr, cw := io.Pipe()
	cr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c, err := proxy.RunStdio(context.Background(), proxy.StdioOptions{Engine: e, Server: "helper",
			Command: os.Args[0], Args: []string{"-test.run=^TestHelperStdioServer$"}, Env: append(os.Environ(), "PALISADE_HELPER_SERVER=1"),
			Stdin: pr, Stdout: pw, Stderr: os.Stderr})
		if err != nil {
			t.Error(err)
		}
		pw.Close()
		code <- c
	}()
	lines := bufio.NewScanner(cr)
	lines.Buffer(nil, 1<<20)
	send := func(s string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s, `"id"`) {
			return nil
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s", s)
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", lines.Bytes(), err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range []struct{ name, line string }{
		{"case-folded param", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","Name":"forbidden_tool","arguments":{"text":"x"}}}`},
		{"escaped duplicate", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","n\u0061me":"forbidden_tool","arguments":{}}}`},
		{"duplicate argument", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}`},
		{"case-folded method", `{"jsonrpc":"2.0","id":5,"method":"ping","METHOD":"tools/call","params":{"name":"forbidden_tool"}}`},
		{"long s folds to s", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","ſtext":"b","TEXT":"c"}}}`},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forbidden_tool","arguments":{}}}]`},
		{"not json", `{"jsonrpc":"2.0","id":8,"method":"tools/call",`},
		{"nested past the limit", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"forbidden_tool","arguments":{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.line, `"id":`) {
				t.Fatal("row needs an id")
			}
			m := send(tc.line)
			if m["error"] == nil || m["result"] != nil {
				t.Fatalf("%s was not refused: %v", tc.name, m)
			}
		})
	}
	m := send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still fine"}}}`)
	if b, _ := json.Marshal(m["result"]); !strings.Contains(string(b), "still fine") {
		t.Fatalf("a clean call after the refusals: %v", m)
	}
	cw.Close()
	if c := <-code; c != 0 {
		t.Fatalf("helper exited %d (3 = an ambiguous call reached it)", c)
	}
}

func TestAmbiguousKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"a":1,"b":{"a":2}}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":{"x":[{"k":1,"K":2}]}}`, true},
		{`[{"a":1},{"a":1}]`, false},
		{`{"ſ":1,"s":2}`, true},
		{`{"K":1,"k":2}`, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			err := proxy.AmbiguousKeys([]byte(tc.in))
			if got := errors.Is(err, proxy.ErrAmbiguousKeys); got != tc.want {
				t.Errorf("AmbiguousKeys(%s) = %v", tc.in, err)
			}
		})
	}
}

func FuzzAmbiguousKeys(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"A":2}`, `[1,{"x":[]}]`, `{"a":`, `"s"`, `{"a":{"b":{"c":1,"c":2}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := proxy.AmbiguousKeys(b)
		if err == nil && !json.Valid(b) {
			// Trailing data after one value is tolerated by the walker; the transports parse
			// the message first, which rejects it.
			var v any
			if json.Unmarshal(b, &v) == nil {
				t.Fatalf("accepted invalid JSON %q", b)
			}
		}
	})
}
