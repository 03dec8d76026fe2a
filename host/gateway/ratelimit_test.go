package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/added060/palisade/host/config"
	pmcp "github.com/added060/palisade/host/mcp"
)

// TestRateLimitPerPrincipalAndTool: limits.per_principal gives each principal (verified by
// authn) its own budget of 3 calls; limits.tools overrides it for get-env (1 call per
// principal); a call over a limit is a JSON-RPC -32000 error naming the limit, and the session
// goes on.
func TestRateLimitPerPrincipalAndTool(t *testing.T) {
	e := startAuthnLimits(t, config.Limits{
		PerPrincipal: &config.RateLimit{PerMinute: 1, Burst: 3},
		Tools:        []config.ToolRateLimit{{Tool: "get-env", PerMinute: 1, Burst: 1}},
	})
	sre := connectAs(t, e.resource, e.token(t, authnSRE))
	dev := connectAs(t, e.resource, e.token(t, authnDev))
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) error {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		return err
	}
	limited := func(err error, limit string) bool {
		var je *jsonrpc.Error
		return errors.As(err, &je) && je.Code == pmcp.CodeRateLimited && strings.Contains(je.Message, limit)
	}
	for i := range 3 {
		if err := call(sre, "go__echo", map[string]any{"message": "hi"}); err != nil {
			t.Fatalf("sre call %d: %v", i, err)
		}
	}
	if err := call(sre, "go__echo", map[string]any{"message": "hi"}); !limited(err, "limits.per_principal allows 1 calls per minute (burst 3)") {
		t.Fatalf("sre's 4th call: %v, want -32000 naming limits.per_principal", err)
	}
	// dev has its own budget.
	if err := call(dev, "go__get-env", map[string]any{"name": "HOME"}); err != nil {
		t.Fatalf("dev's first get-env: %v", err)
	}
	if err := call(dev, "go__get-env", map[string]any{"name": "HOME"}); !limited(err, "limits.tools[0] (get-env)") {
		t.Fatalf("dev's second get-env: %v, want -32000 naming limits.tools[0]", err)
	}
	// get-env has its own budget per principal, apart from per_principal (spent by sre).
	if err := call(sre, "go__get-env", map[string]any{"name": "HOME"}); err != nil {
		t.Fatalf("sre's first get-env: %v", err)
	}
}
