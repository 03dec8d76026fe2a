package llm

import (
	"context"
	"fmt"
	"strings"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

func init() { Register("anthropic", newAnthropic) }

// AnthropicVersion is the anthropic-version header sent with every request.
const AnthropicVersion = "2023-06-01"

// anthropic speaks the Messages API (POST {base}/v1/messages) through the official client
// (github.com/anthropics/anthropic-sdk-go). Its own retries are off: the Judge's breaker,
// retry and fallback decide what a failure means.
type anthropic struct {
	cfg    ProviderConfig
	key    string
	client anthropicsdk.Client
}

func newAnthropic(cfg ProviderConfig, env Env) (Provider, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("anthropic: model is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.anthropic.com"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 512
	}
	key, err := cfg.apiKey()
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		// Only what the config names: no ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL or profile on
		// disk that the client library would otherwise read.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL + "/"),
		option.WithHTTPClient(env.HTTPClient),
		option.WithMaxRetries(0),
		option.WithHeader("anthropic-version", AnthropicVersion),
	}
	if key != "" {
		opts = append(opts, option.WithHeader("X-Api-Key", key)) // the Messages API's key header
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &anthropic{cfg: cfg, key: key, client: anthropicsdk.NewClient(opts...)}, nil
}

func (p *anthropic) Name() string { return p.cfg.Name }

func (p *anthropic) params(pr Prompt) anthropicsdk.MessageNewParams {
	return anthropicsdk.MessageNewParams{
		Model:     anthropicsdk.Model(p.cfg.Model),
		MaxTokens: int64(p.cfg.MaxTokens),
		System:    []anthropicsdk.TextBlockParam{{Text: pr.System}},
		Messages:  []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock(pr.User))},
	}
}

func (p *anthropic) Complete(ctx context.Context, pr Prompt) (Answer, error) {
	var m *anthropicsdk.Message
	if p.cfg.Stream {
		s := p.client.Messages.NewStreaming(ctx, p.params(pr))
		defer s.Close()
		acc := anthropicsdk.Message{}
		stopped := false
		for s.Next() {
			ev := s.Current()
			if ev.Type == "message_stop" {
				stopped = true
			}
			if err := acc.Accumulate(ev); err != nil {
				return Answer{}, fmt.Errorf("llm: provider %s: %w: bad stream event: %v", p.cfg.Name, ErrUnavailable, err)
			}
			if n := len(textOf(&acc)); n > maxAnswerBytes*4 {
				return Answer{}, fmt.Errorf("llm: provider %s: %w: answer too long", p.cfg.Name, ErrInvalidAnswer)
			}
		}
		if err := s.Err(); err != nil {
			return Answer{}, providerError(p.cfg.Name, p.key, err)
		}
		if !stopped {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: the stream ended before message_stop", p.cfg.Name, ErrUnavailable)
		}
		m = &acc
	} else {
		var err error
		if m, err = p.client.Messages.New(ctx, p.params(pr)); err != nil {
			return Answer{}, providerError(p.cfg.Name, p.key, err)
		}
	}
	a := Answer{Model: string(m.Model), StopReason: string(m.StopReason), Text: textOf(m)}
	if a.StopReason == "refusal" {
		a.Refusal = "stop_reason refusal"
		if a.Text != "" {
			a.Refusal = a.Text
		}
	}
	return a, nil
}

// textOf joins the message's text blocks.
func textOf(m *anthropicsdk.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func (p *anthropic) Health(ctx context.Context) error {
	if _, err := p.client.Models.List(ctx, anthropicsdk.ModelListParams{}); err != nil {
		return providerError(p.cfg.Name, p.key, err)
	}
	return nil
}
