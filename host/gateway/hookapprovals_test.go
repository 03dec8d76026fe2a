package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/proxy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHookAsksWithoutHolding: on a gateway with approvals on, /v1/hook answers a rule's ask at
// once (Claude Code's prompt asks the person) and leaves nothing in the approvals queue; a grant
// a person gave through approvals (scope minutes) then allows the same call through the hook.
func TestHookAsksWithoutHolding(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-hook", ns.ClientURL(), approvalsBundle(t), up, "")
	hc := proxy.HookClient{URL: "http://" + g.Addr(), Timeout: 30e9} // far below the rule's 2m hold
	in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s-1", "cwd": t.TempDir(),
		"tool_name": "mcp__up__echo", "tool_input": map[string]any{"message": "hold the door"}})

	out, err := hc.Decide(t.Context(), in)
	if err != nil || out.Decision() != "ask" || !strings.Contains(out.Reason(), "rule hold-echo") {
		t.Fatalf("hook answer = %+v, %v; want ask by hold-echo", out, err)
	}
	if held := g.Approvals().List(); len(held) != 0 {
		t.Fatalf("the hook left %d calls in the approvals queue: %+v", len(held), held)
	}

	// A person approves the same call from an MCP client for 15 minutes: the hook allows it.
	cs := mcpSession(t, g, nil)
	ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold the door"}})
	held := waitHeld(t, g, "hold the door")
	if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"by": "erin", "scope": "minutes"}, nil); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	if r := wait(t, ch); r.err != nil || text(r.res) != "Echo: hold the door" {
		t.Fatalf("approved call = %v %v", r.res, r.err)
	}
	out, err = hc.Decide(t.Context(), in)
	if err != nil || out.Decision() != "allow" {
		t.Fatalf("hook answer after a grant = %+v, %v; want allow", out, err)
	}
	if held := g.Approvals().List(); len(held) != 0 {
		t.Errorf("approvals queue after the grant: %+v", held)
	}
}
