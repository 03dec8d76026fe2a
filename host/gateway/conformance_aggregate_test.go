package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConformanceSuiteThroughAggregate runs the official MCP conformance suite against the Go
// SDK's conformance everything-server directly and through the gateway's aggregated /mcp, where
// it is one of two upstreams (names as given: `aggregate: {names: refuse}`, the second server's
// one tool collides with nothing): every scenario that passes directly passes through the
// aggregate too.
func TestConformanceSuiteThroughAggregate(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(t), "testdata", "conformance", "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "conformance")); err != nil {
		if os.Getenv("PALISADE_REQUIRE_NPM") != "" {
			t.Fatalf("the MCP conformance suite is not installed (%v): run `make setup-conformance`", err)
		}
		t.Skip("the MCP conformance suite is not installed; `make setup-conformance` installs it (PALISADE_REQUIRE_NPM=1 makes this a failure)")
	}
	ns := testenv.StartNATS(t)
	up := startGoConformanceServer(t)
	other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	mcp.AddTool(other, &mcp.Tool{Name: "aggregate_probe", Description: "the second upstream's only tool"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "probe"}}}, struct{}{}, nil
		})
	g := startAggregate(t, ns.ClientURL(), testenv.ExampleBundle(t), "refuse",
		config.Upstream{Name: "everything", URL: up}, config.Upstream{Name: "other", URL: testenv.ServeGo(t, other, false)})
	conformanceThrough(t, bin, up, "http://"+g.Addr()+"/mcp")
}
