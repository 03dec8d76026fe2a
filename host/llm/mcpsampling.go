package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

func init() { Register("mcp", newMCPSampling) }

// ClientSampler sends an MCP sampling/createMessage request to the connected client and returns
// the JSON-RPC result. The gateway's transports implement it per session for clients that
// declared the "sampling" capability, and put it in the context with WithClientSampler.
type ClientSampler interface {
	CreateMessage(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
}

// ErrNoClientSampler means the request's context carries no ClientSampler (the client did not
// declare sampling, or the transport cannot reach it). It wraps ErrUnavailable.
var ErrNoClientSampler = fmt.Errorf("%w: no MCP client sampler for this session", ErrUnavailable)

type samplerKey struct{}

// WithClientSampler returns ctx carrying s for the mcp provider.
func WithClientSampler(ctx context.Context, s ClientSampler) context.Context {
	return context.WithValue(ctx, samplerKey{}, s)
}

// ClientSamplerFrom returns the ClientSampler in ctx, if any.
func ClientSamplerFrom(ctx context.Context) (ClientSampler, bool) {
	s, ok := ctx.Value(samplerKey{}).(ClientSampler)
	return s, ok && s != nil
}

// mcpSampling asks the connected MCP client's model through sampling/createMessage.
type mcpSampling struct{ cfg ProviderConfig }

func newMCPSampling(cfg ProviderConfig, _ Env) (Provider, error) {
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 512
	}
	return &mcpSampling{cfg: cfg}, nil
}

func (p *mcpSampling) Name() string { return p.cfg.Name }

type mcpText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type mcpMessage struct {
	Role    string  `json:"role"`
	Content mcpText `json:"content"`
}

type mcpHint struct {
	Name string `json:"name"`
}

type mcpModelPreferences struct {
	Hints                []mcpHint `json:"hints,omitempty"`
	IntelligencePriority float64   `json:"intelligencePriority"`
}

type mcpCreateMessageParams struct {
	Messages         []mcpMessage         `json:"messages"`
	ModelPreferences *mcpModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string               `json:"systemPrompt"`
	IncludeContext   string               `json:"includeContext"`
	Temperature      float64              `json:"temperature"`
	MaxTokens        int                  `json:"maxTokens"`
}

// params returns the sampling/createMessage params the provider sends for pr.
func (p *mcpSampling) params(pr Prompt) mcpCreateMessageParams {
	m := mcpCreateMessageParams{
		Messages:       []mcpMessage{{Role: "user", Content: mcpText{Type: "text", Text: pr.User}}},
		SystemPrompt:   pr.System,
		IncludeContext: "none", // the judge must not see the agent's conversation
		Temperature:    pr.Temperature,
		MaxTokens:      p.cfg.MaxTokens,
	}
	if p.cfg.Model != "" {
		m.ModelPreferences = &mcpModelPreferences{Hints: []mcpHint{{Name: p.cfg.Model}}, IntelligencePriority: 0.8}
	}
	return m
}

func (p *mcpSampling) Complete(ctx context.Context, pr Prompt) (Answer, error) {
	s, ok := ClientSamplerFrom(ctx)
	if !ok {
		return Answer{}, fmt.Errorf("llm: provider %s: %w", p.cfg.Name, ErrNoClientSampler)
	}
	params, err := json.Marshal(p.params(pr))
	if err != nil {
		return Answer{}, fmt.Errorf("llm: provider %s: encode params: %w", p.cfg.Name, err)
	}
	raw, err := s.CreateMessage(ctx, params)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return Answer{}, fmt.Errorf("llm: provider %s: %w", p.cfg.Name, err)
		}
		return Answer{}, fmt.Errorf("llm: provider %s: %w: sampling/createMessage: %w", p.cfg.Name, ErrUnavailable, err)
	}
	var res struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return Answer{}, fmt.Errorf("llm: provider %s: %w: decode result: %v", p.cfg.Name, ErrUnavailable, err)
	}
	// content is one block, or (protocol 2025-11-25) an array of blocks.
	var blocks []mcpText
	if c := strings.TrimSpace(string(res.Content)); strings.HasPrefix(c, "[") {
		if err := json.Unmarshal(res.Content, &blocks); err != nil {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: decode content: %v", p.cfg.Name, ErrUnavailable, err)
		}
	} else {
		var b mcpText
		if err := json.Unmarshal(res.Content, &b); err != nil {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: decode content: %v", p.cfg.Name, ErrUnavailable, err)
		}
		blocks = []mcpText{b}
	}
	var text strings.Builder
	for _, b := range blocks {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	a := Answer{Text: text.String(), Model: res.Model, StopReason: res.StopReason}
	if res.StopReason == "refusal" {
		a.Refusal = "stopReason refusal"
	}
	return a, nil
}

// Health is always nil: whether a client can sample is known per request (see Complete).
func (p *mcpSampling) Health(context.Context) error { return nil }
