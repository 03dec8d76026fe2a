package llm_test

//lint:file-ignore SA1019 MCP sampling is deprecated from protocol 2026-07-28 (SEP-2577) but clients on <= 2025-11-25 still serve it; the mcp provider targets them.

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/added060/palisade/host/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkSampler adapts a Go SDK ServerSession to llm.ClientSampler, as a gateway transport would
// for a session whose client declared the sampling capability.
type sdkSampler struct{ ss *mcp.ServerSession }

func (s sdkSampler) CreateMessage(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
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

// startSampling connects an official Go SDK client that declares sampling (answering with
// answer) to a server, over in-memory transports, and returns the server session.
func startSampling(t *testing.T, answer func(*mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) *mcp.ServerSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	server := mcp.NewServer(&mcp.Implementation{Name: "palisade-test", Version: "0"}, nil)
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return answer(req)
		},
	})
	// Sampling during a request is a session feature (protocol <= 2025-11-25); the stateless
	// 2026-07-28 protocol replaces it with input requests (SEP-2322), which this provider does
	// not speak.
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return ss
}

func TestMCPSamplingWithGoSDKClient(t *testing.T) {
	var mu sync.Mutex
	var seen *mcp.CreateMessageParams
	ss := startSampling(t, func(req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		mu.Lock()
		seen = req.Params
		mu.Unlock()
		return &mcp.CreateMessageResult{
			Role:       "assistant",
			Model:      "client-model",
			StopReason: "endTurn",
			Content:    &mcp.TextContent{Text: `{"decision":"ask","confidence":0.6,"reasons":["reads an env var"]}`},
		}, nil
	})
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Name: "client", Kind: "mcp", Model: "claude-sonnet"}}})

	ctx := llm.WithClientSampler(context.Background(), sdkSampler{ss})
	resp, err := j.Sample(ctx, secretReq)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Decision != "ask" || resp.Provider != "client" || resp.Confidence != 0.6 {
		t.Fatalf("resp = %+v", resp)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen == nil || seen.SystemPrompt == "" || seen.MaxTokens != 512 || len(seen.Messages) != 1 || seen.IncludeContext != "none" {
		t.Fatalf("client saw params %+v", seen)
	}
	if tc, ok := seen.Messages[0].Content.(*mcp.TextContent); !ok || !contains(tc.Text, "BEGIN UNTRUSTED") {
		t.Fatalf("message content = %#v", seen.Messages[0].Content)
	}
	if seen.ModelPreferences == nil || len(seen.ModelPreferences.Hints) != 1 || seen.ModelPreferences.Hints[0].Name != "claude-sonnet" {
		t.Fatalf("model preferences = %+v", seen.ModelPreferences)
	}
}

func TestMCPSamplingClientErrorFailsOver(t *testing.T) {
	ss := startSampling(t, func(*mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("user rejected sampling request")
	})
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Name: "client", Kind: "mcp"}, {Kind: "local"}}})
	resp, err := j.Sample(llm.WithClientSampler(context.Background(), sdkSampler{ss}), secretReq)
	if err != nil || resp.Provider != "local" {
		t.Fatalf("resp = %+v err = %v, want local after client refused", resp, err)
	}
}

func TestMCPSamplingWithoutClientIsUnavailable(t *testing.T) {
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Name: "client", Kind: "mcp"}}})
	_, err := j.Sample(context.Background(), secretReq)
	if !errors.Is(err, llm.ErrNoClientSampler) || !errors.Is(err, llm.ErrNoProvider) {
		t.Fatalf("err = %v", err)
	}
}
