package proxy_test

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConnectDoesNotWaitForUpstreamEvents: the official Go SDK client opens the standalone GET
// stream inside Connect and waits for its response headers. The gateway sends them as soon as
// the upstream has answered with its own, not with the upstream's first event: here the
// upstream sends no event at all until the test ends, and Connect still returns.
func TestConnectDoesNotWaitForUpstreamEvents(t *testing.T) {
	up := &hostileHTTP{silentGET: true, gets: make(chan struct{}, 4)}
	url := startGatewayHTTP(t, responseEngine(t, "closed", nil), nil, startHostileHTTP(t, up))
	// The deadline only bounds a failing run: a gateway that waits for the first event never
	// returns before it, since the upstream sends none while the test runs.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "connect-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	select {
	case <-up.gets: // the client did open the GET stream (and the upstream sent it nothing)
	case <-ctx.Done():
		t.Fatal("the client never opened the GET stream")
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "clean", Arguments: map[string]any{}})
	if err != nil || res.IsError || text(res) != "all good" {
		t.Fatalf("call after Connect: %v %v", res, err)
	}
}
