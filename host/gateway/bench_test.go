package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
)

// BenchmarkGatewayToolsCall measures one tools/call through the gateway (rules stage, audit
// publish) to a fast Go SDK upstream; compare with BenchmarkDirectToolsCall.
func BenchmarkGatewayToolsCall(b *testing.B) {
	ns := testenv.StartNATS(b)
	up := testenv.StartGoServer(b, true)
	g := startGatewayB(b, ns.ClientURL(), testenv.ExampleBundle(b), config.Upstream{Name: "go", URL: up})
	benchCalls(b, "http://"+g.Addr()+"/mcp")
}

// BenchmarkDirectToolsCall is the same call to the upstream directly.
func BenchmarkDirectToolsCall(b *testing.B) {
	benchCalls(b, testenv.StartGoServer(b, true))
}

func benchCalls(b *testing.B, url string) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"}}}`, i)
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

func startGatewayB(b *testing.B, natsURL, bundleDir string, ups ...config.Upstream) interface{ Addr() string } {
	return startGatewayTB(b, natsURL, bundleDir, ups...)
}
