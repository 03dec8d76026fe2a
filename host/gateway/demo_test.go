//lint:file-ignore SA1019 the demo server exercises MCP sampling, deprecated by the SDK (SEP-2577) but served by server-everything

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demoDenied are the server-everything tools the example policy denies on purpose.
var demoDenied = map[string]bool{"get-env": true}

// demoAsked says which tools the example policy holds for a person on purpose (its rule
// ask-before-sampling): the test approves them as a person would.
func demoAsked(tool string) bool { return strings.HasPrefix(tool, "trigger-sampling-request") }

// demoValues are realistic values for the arguments of server-everything's tools, by property
// name: what a person or an agent would pass. A tool with a required property missing here
// fails the test, so a new tool of the demo server gets a value before it is judged.
var demoValues = map[string]any{
	"message":      "Hello from the Palisade demo, how are you today?",
	"prompt":       "Write a two-line poem about autumn leaves.",
	"topic":        "how solar panels store energy for the night",
	"url":          "https://example.com/docs/getting-started",
	"name":         "README.md.gz",
	"data":         "https://raw.githubusercontent.com/modelcontextprotocol/servers/main/README.md",
	"a":            3,
	"b":            4,
	"steps":        2,
	"duration":     1,
	"resourceId":   2,
	"count":        2,
	"ambiguity":    "clear",
	"includeImage": true,
}

// demoCalls returns the calls to make for tool: one with realistic values, and one per value
// of every enum property (each is an ordinary call: "success", "error", "debug").
func demoCalls(t *testing.T, tool *mcp.Tool) []map[string]any {
	t.Helper()
	var schema struct {
		Properties map[string]struct {
			Type    any   `json:"type"`
			Enum    []any `json:"enum"`
			Default any   `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	b, _ := json.Marshal(tool.InputSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("%s: input schema %s: %v", tool.Name, b, err)
	}
	base := map[string]any{}
	var enums []string
	for name, p := range schema.Properties {
		switch v, ok := demoValues[name]; {
		case len(p.Enum) > 0:
			base[name] = p.Enum[0]
			enums = append(enums, name)
		case ok:
			base[name] = v
		case p.Default != nil:
			base[name] = p.Default
		case slices.Contains(schema.Required, name):
			t.Fatalf("%s: no realistic value for required argument %q: add one to demoValues", tool.Name, name)
		}
	}
	calls := []map[string]any{base}
	sort.Strings(enums)
	for _, name := range enums {
		for _, v := range schema.Properties[name].Enum[1:] {
			c := map[string]any{}
			for k, x := range base {
				c[k] = x
			}
			c[name] = v
			calls = append(calls, c)
		}
	}
	return calls
}

// TestDemoServerPassesThroughTheExampleBundle: through `make run`'s gateway (the example bundle
// in front of the npm server-everything), every tool of the demo server, called with realistic
// arguments by a client that declares sampling, elicitation and roots, gets its answer; only
// what the example policy denies on purpose (get-env) is left out of tools/list (the bundle
// hides what it always denies) and is denied when called anyway. Tools whose answers carry a
// base64 PNG, enum values or annotations, sampling and elicitation round trips included.
func TestDemoServerPassesThroughTheExampleBundle(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartEverything(t)
	g := approvalsGateway(t, "demo", ns.ClientURL(), testenv.ExampleBundle(t), up, "llm: {providers: [{name: local, kind: local}], preference: [local]}\n")
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "demo-model",
				Content: &mcp.TextContent{Text: "Golden leaves drift down,\nthe maple lets the season go."}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}
	cs := connect(t, "http://"+g.Addr()+"/mcp", opts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list through the gateway: %v", err)
	}
	if len(tools.Tools) < 10 {
		t.Fatalf("server-everything lists %d tools through the gateway; want its whole list", len(tools.Tools))
	}
	calls := 0
	for _, tool := range tools.Tools {
		for _, args := range demoCalls(t, tool) {
			label := fmt.Sprintf("%s %v", tool.Name, args)
			var res *mcp.CallToolResult
			var err error
			if demoAsked(tool.Name) {
				// Held as the policy says: a person approves it, and the sampling round trip
				// (the client's sampled answer judged on its way up) completes.
				ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
				held := waitHeld(t, g, demoValues["prompt"].(string))
				if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"by": "erin"}, nil); code != 200 {
					t.Fatalf("approve %s: HTTP %d", label, code)
				}
				r := wait(t, ch)
				res, err = r.res, r.err
				if err == nil && !strings.Contains(text(res), "Golden leaves") {
					t.Errorf("%s: the sampled answer did not come back: %s", label, text(res))
				}
			} else {
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
			}
			calls++
			var we *jsonrpc.Error
			isDeny := errors.As(err, &we) && we.Code == pmcp.CodeDenied
			switch {
			case demoDenied[tool.Name]:
				t.Errorf("%s: the example policy always denies it, yet tools/list advertised it", label)
			case isDeny:
				t.Errorf("%s: denied through the gateway: %v", label, err)
			case err != nil:
				t.Errorf("%s: denied or failed through the gateway: %v", label, err)
			case res.IsError && strings.Contains(text(res), "denied"):
				t.Errorf("%s: %s", label, text(res))
			}
		}
	}
	// A client that calls a hidden tool anyway is denied by the same rule.
	for name := range demoDenied {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"name": "HOME"}})
		if d := denied(t, err); d.Rule != "deny-"+name {
			t.Errorf("%s called though hidden: %+v, want the example policy's deny", name, d)
		}
	}
	t.Logf("%d calls of %d tools through the example bundle", calls, len(tools.Tools))
}
