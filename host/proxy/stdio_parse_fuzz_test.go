package proxy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/added060/palisade/host/mcp"
)

// FuzzParseExact: a message the strict parse accepts (mcp.Parse, which builds the envelope the
// chain judges) reads the same under exact keys (parseExact, as JavaScript or Python would) and
// under Go's case-insensitive decoding (mcp.ParseMessage, mcp.Target), so a Go, JavaScript or
// Python server sees the method, tool and arguments the chain judged.
func FuzzParseExact(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"evil"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"file:///etc/passwd"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"p":"1","p":"2"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0065cho"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := mcp.Parse(b, mcp.Context{})
		if err != nil {
			return
		}
		m, err := parseExact(b)
		if err != nil {
			t.Fatalf("parseExact refuses what Parse accepts: %q: %v", b, err)
		}
		if m.Method != p.Message.Method || !bytes.Equal(m.Params, p.Message.Params) {
			t.Fatalf("exact keys read %q %s, Parse %q %s", m.Method, m.Params, p.Message.Method, p.Message.Params)
		}
		g, err := mcp.ParseMessage(b)
		if err != nil {
			t.Fatalf("parseExact accepted what ParseMessage refuses: %q: %v", b, err)
		}
		if g.Method != m.Method || !bytes.Equal(bytes.TrimSpace(g.ID), bytes.TrimSpace(m.ID)) {
			t.Fatalf("method/id differ: exact %q %s, Go %q %s", m.Method, m.ID, g.Method, g.ID)
		}
		env := p.Envelope
		name, uri, args := mcp.Target(g)
		if m.Method == mcp.MethodToolsCall && (env.Tool != name || !jsonEqual(env.Arguments, args)) {
			t.Fatalf("tool differs: exact %q %s, Go %q %s", env.Tool, env.Arguments, name, args)
		}
		if m.Method == mcp.MethodResourcesRead && env.URI != uri {
			t.Fatalf("uri differs: exact %q, Go %q", env.URI, uri)
		}
	})
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
