//lint:file-ignore SA1019 MCP sampling is deprecated from protocol 2026-07-28 but still served for older sessions, and these tests exercise it.

package gateway_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJudgeSamplesTheClient: where a rule says sample, the judge asks the connected client's own
// model through MCP sampling/createMessage (the client declared the capability), with the tool
// call fenced as untrusted data, and the client's answer decides.
func TestJudgeSamplesTheClient(t *testing.T) {
	ns := testenv.StartNATS(t)
	direct := testenv.StartEverything(t)
	ext, err := gateway.ParseFile([]byte("llm: {providers: [{name: client, kind: mcp}], preference: [client], timeout: 10s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Bundle: testenv.ExampleBundle(t),
		Upstreams: []config.Upstream{{Name: "everything", URL: direct}}, NATS: config.NATS{URL: ns.ClientURL()},
		Plugins: config.Plugins{CacheDir: testenv.CacheDir()}}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: ext.Sections})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })

	var asked atomic.Int32
	var prompt atomic.Value
	answer := atomic.Value{}
	answer.Store(`{"decision":"deny","confidence":0.9,"reasons":["the sum smuggles a command"]}`)
	cs := connect(t, "http://"+g.Addr()+"/mcp", &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					prompt.Store(tc.Text)
				}
			}
			return &mcp.CreateMessageResult{Model: "client-model", Role: "assistant", Content: &mcp.TextContent{Text: answer.Load().(string)}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
	d := denied(t, err)
	if d.Stage != "judge" || asked.Load() != 1 {
		t.Fatalf("deny by %q, client asked %d times", d.Stage, asked.Load())
	}
	p, _ := prompt.Load().(string)
	if !strings.Contains(p, "get-sum") || !strings.Contains(strings.ToLower(p), "untrusted") {
		t.Fatalf("the client's model was not shown the call fenced as untrusted data:\n%s", p)
	}
	answer.Store(`{"decision":"allow","confidence":0.95,"reasons":["plain arithmetic"]}`)
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 20, "b": 22}})
	if err != nil || !strings.Contains(text(r), "42") {
		t.Fatalf("allowed by the client's model: %v", err)
	}
}
