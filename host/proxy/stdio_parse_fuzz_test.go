package proxy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/added060/palisade/host/mcp"
)

// FuzzParseExact: a message the stdio proxy accepts (parseExact and AmbiguousKeys) reads the same
// under Go's case-insensitive decoding (mcp.ParseMessage, mcp.Target) as under exact keys, so a
// Go, JavaScript or Python server sees the method, tool and arguments the chain judged.
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
		m, err := parseExact(b)
		if err != nil || AmbiguousKeys(b) != nil {
			return
		}
		g, err := mcp.ParseMessage(b)
		if err != nil {
			t.Fatalf("parseExact accepted what ParseMessage refuses: %q: %v", b, err)
		}
		if g.Method != m.Method || !bytes.Equal(bytes.TrimSpace(g.ID), bytes.TrimSpace(m.ID)) {
			t.Fatalf("method/id differ: exact %q %s, Go %q %s", m.Method, m.ID, g.Method, g.ID)
		}
		env := exactEnvelope(m, mcp.Context{})
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
