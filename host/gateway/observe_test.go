package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestObserveMode: the example bundle in observe mode in front of the npm server-everything
// lets a call its policy denies through (get-env answers), holds nobody, and the audit event
// says what would have happened and why.
func TestObserveMode(t *testing.T) {
	dir := testenv.ExampleBundle(t)
	man := filepath.Join(dir, "bundle.yaml")
	b, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(man, []byte("mode: observe\n"+string(b)), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := testenv.StartNATS(t)
	up := testenv.StartEverything(t)
	g := startGateway(t, ns.ClientURL(), dir, config.Upstream{Name: "everything", URL: up})
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil || r.IsError || !strings.Contains(text(r), "PATH") {
		t.Fatalf("get-env in observe mode: %v %v, want the environment", err, r)
	}
	// ask-before-sampling would hold the call for a person: observe mode holds nobody.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "hi there"}}); err != nil && strings.Contains(err.Error(), "denied") {
		t.Fatalf("a call the policy asks about was denied in observe mode: %v", err)
	}
	var env, sampling bool
	testenv.Eventually(t, 20*time.Second, "the observed events", func() bool {
		for _, ev := range events(t, ns.ClientURL(), 2) {
			d := string(ev.Detail)
			switch {
			case ev.Tool == "get-env":
				env = ev.Action == "allow" && strings.Contains(d, `"observed"`) && strings.Contains(d, `"action":"deny"`) && strings.Contains(d, "deny-get-env")
			case ev.Tool == "trigger-sampling-request":
				sampling = ev.Action == "allow" && ev.Approval == nil && strings.Contains(d, `"action":"ask"`)
			}
		}
		return env && sampling
	})
}
