package proxy

import (
	"net/http"
	"testing"

	"github.com/added060/palisade/host/mcp"
)

var benchBody = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sudo rm -rf / --no-preserve-root","description":"clean up","timeout":120000},"_meta":{"progressToken":"p7"}}}`)

// BenchmarkRequestParse: what the HTTP handler does to a POST body before the chain runs:
// the strict parse, the envelope, the progress token and the routing-header check.
func BenchmarkRequestParse(b *testing.B) {
	h := &HTTP{sessions: newSessionTable(10)}
	hdr := http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"Bash"}}
	b.ReportAllocs()
	for b.Loop() {
		msgs, _, err := mcp.ParseBody(benchBody, h.context(b.Context(), hdr))
		if err != nil {
			b.Fatal(err)
		}
		if err := checkHeaders(hdr, msgs[0]); err != nil {
			b.Fatal(err)
		}
		if msgs[0].Envelope.Tool != "Bash" || msgs[0].ProgressToken == nil {
			b.Fatal("envelope")
		}
	}
}
