package proxy_test

import (
	"context"

	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/added060/palisade/host/audit"

	"github.com/added060/palisade/host/proxy"
	"github.com/labstack/echo/v4"
)

// BenchmarkHTTPRequestPath: one tools/call through the Streamable HTTP handler, from the body to
// the answer: parse, header checks, envelope, the request phase (the agents bundle's rules
// plugin, one stage), deny and audit event. The rules deny the call, so no upstream is involved
// and the numbers are the gateway's own request-side work.
func BenchmarkHTTPRequestPath(b *testing.B) {
	eng := agentsEngine(b, discard{})
	h, err := proxy.NewHTTP(proxy.HTTPOptions{Upstreams: []proxy.Upstream{{Name: "fs", URL: "http://127.0.0.1:1/mcp"}}, Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	e := echo.New()
	h.Register(e)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sudo rm -rf / --no-preserve-root","description":"clean up","timeout":120000},"_meta":{"progressToken":"p7"}}}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "Bash")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "-32001") {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// discard is a Recorder that drops events.
type discard struct{}

func (discard) Record(context.Context, audit.Event) {}
