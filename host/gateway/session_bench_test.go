package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
)

// BenchmarkSessionEverything measures a whole official Go SDK client session (connect, list
// tools, one call, close) against the npm server-everything, directly and through the gateway:
// the client opens the standalone GET stream inside Connect and waits for its headers, which
// the gateway must not hold back until the upstream's first event (a keepalive every 15 s).
func BenchmarkSessionEverything(b *testing.B) {
	ns := testenv.StartNATS(b)
	up := testenv.StartEverything(b)
	g := startGatewayB(b, ns.ClientURL(), testenv.ExampleBundle(b), config.Upstream{Name: "everything", URL: up})
	for _, tc := range []struct{ name, url string }{{"direct", up}, {"gateway", "http://" + g.Addr() + "/mcp"}} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				session(b, tc.url)
				lat = append(lat, time.Since(start))
			}
			testenv.Latencies(lat).Report(b, "", "-ms", time.Millisecond)
		})
	}
}

func session(b *testing.B, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "session-bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "m"}})
	if err != nil || res.IsError {
		b.Fatalf("echo: %v %v", res, err)
	}
	if err := cs.Close(); err != nil {
		b.Fatal(err)
	}
}
