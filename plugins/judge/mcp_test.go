package main_test

//lint:file-ignore SA1019 MCP sampling is deprecated from protocol 2026-07-28 (SEP-2577) but clients on <= 2025-11-25 still serve it; the mcp provider targets them.

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/added060/palisade/host/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientSampler forwards sampling/createMessage to an official Go SDK client session.
type clientSampler struct {
	ss    *mcp.ServerSession
	calls atomic.Int64
}

func (s *clientSampler) CreateMessage(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	s.calls.Add(1)
	var p mcp.CreateMessageParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	res, err := s.ss.CreateMessage(ctx, &p)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// TestJudgePluginSamplesTheConnectedClient: the per-request context given to the plugin call
// carries the session's ClientSampler; the sample host function receives that context, so the
// mcp provider reaches the agent's own model.
func TestJudgePluginSamplesTheConnectedClient(t *testing.T) {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "palisade", Version: "0"}, nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			decision := "allow"
			if strings.Contains(text, "rm -rf") {
				decision = "deny"
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "agent-model",
				Content: &mcp.TextContent{Text: `{"decision":"` + decision + `","confidence":0.88,"reasons":["client model judged it"]}`}}, nil
		},
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer ss.Close()

	j, err := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Name: "client", Kind: "mcp"}, {Name: "local", Kind: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, []string{"sample"}, j, `{}`)
	cs2 := &clientSampler{ss: ss}
	out, err := p.Evaluate(llm.WithClientSampler(ctx, cs2), envelope("run", `{"cmd":"rm -rf /srv"}`, sampleRule))
	if err != nil {
		t.Fatal(err)
	}
	if cs2.calls.Load() != 1 || !strings.Contains(string(out), `"action":"deny"`) || !strings.Contains(string(out), `"provider":"client"`) {
		t.Fatalf("verdict = %s, client calls %d", out, cs2.calls.Load())
	}
	// Without a sampler in the context the next provider answers.
	out, err = p.Evaluate(ctx, envelope("run", `{"cmd":"ls"}`, sampleRule))
	if err != nil || !strings.Contains(string(out), `"provider":"local"`) {
		t.Fatalf("verdict = %s, %v", out, err)
	}
}
