package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func init() { Register("openai", newOpenAI) }

// openAI speaks OpenAI chat completions (POST {base}/chat/completions) through the official
// client (github.com/openai/openai-go), which vLLM, Ollama (base http://host:11434/v1) and
// llama.cpp server also serve. The client's own retries are off: the Judge's breaker, retry
// and fallback to the next provider decide what a failure means.
type openAI struct {
	cfg    ProviderConfig
	key    string
	client openai.Client
}

func newOpenAI(cfg ProviderConfig, env Env) (Provider, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("openai: model is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com/v1"
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
		option.WithBaseURL(cfg.BaseURL + "/"),
		option.WithHTTPClient(env.HTTPClient),
		option.WithMaxRetries(0),
		// Only what the config names: never OPENAI_API_KEY or OPENAI_BASE_URL from the
		// environment the client library would otherwise read.
		option.WithAPIKey(key),
	}
	if key == "" {
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &openAI{cfg: cfg, key: key, client: openai.NewClient(opts...)}, nil
}

func (p *openAI) Name() string { return p.cfg.Name }

func (p *openAI) params(pr Prompt) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:          shared.ChatModel(p.cfg.Model),
		Messages:       []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(pr.System), openai.UserMessage(pr.User)},
		Temperature:    openai.Float(pr.Temperature),
		MaxTokens:      openai.Int(int64(p.cfg.MaxTokens)),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	}
}

func (p *openAI) Complete(ctx context.Context, pr Prompt) (Answer, error) {
	if p.cfg.Stream {
		return p.stream(ctx, pr)
	}
	out, err := p.client.Chat.Completions.New(ctx, p.params(pr))
	if err != nil {
		return Answer{}, providerError(p.cfg.Name, p.key, err)
	}
	if len(out.Choices) == 0 {
		if e, ok := out.JSON.ExtraFields["error"]; ok {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: %s", p.cfg.Name, ErrUnavailable, redact(errorMessage([]byte(`{"error":`+e.Raw()+`}`)), p.key))
		}
		return Answer{}, fmt.Errorf("llm: provider %s: %w: no choices", p.cfg.Name, ErrUnavailable)
	}
	c := out.Choices[0]
	a := Answer{Model: out.Model, StopReason: string(c.FinishReason), Text: c.Message.Content, Refusal: c.Message.Refusal}
	if a.Refusal == "" && c.FinishReason == "content_filter" {
		a.Refusal = "content_filter"
	}
	return a, nil
}

// stream reads a streamed completion with the client's SSE reader and accumulator. A stream
// that ends without a finish reason (cut) or carries an error event is unavailable.
func (p *openAI) stream(ctx context.Context, pr Prompt) (Answer, error) {
	s := p.client.Chat.Completions.NewStreaming(ctx, p.params(pr))
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		ch := s.Current()
		if e, ok := ch.JSON.ExtraFields["error"]; ok && len(ch.Choices) == 0 {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: stream error: %s", p.cfg.Name, ErrUnavailable, redact(errorMessage([]byte(`{"error":`+e.Raw()+`}`)), p.key))
		}
		if !acc.AddChunk(ch) {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: bad stream chunk", p.cfg.Name, ErrUnavailable)
		}
		if len(acc.Choices) > 0 && len(acc.Choices[0].Message.Content)+len(acc.Choices[0].Message.Refusal) > maxAnswerBytes*4 {
			return Answer{}, fmt.Errorf("llm: provider %s: %w: answer too long", p.cfg.Name, ErrInvalidAnswer)
		}
	}
	if err := s.Err(); err != nil {
		return Answer{}, providerError(p.cfg.Name, p.key, err)
	}
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return Answer{}, fmt.Errorf("llm: provider %s: %w: the stream ended before the answer did", p.cfg.Name, ErrUnavailable)
	}
	c := acc.Choices[0]
	a := Answer{Model: acc.Model, StopReason: string(c.FinishReason), Text: c.Message.Content, Refusal: c.Message.Refusal}
	if a.Refusal == "" && c.FinishReason == "content_filter" {
		a.Refusal = "content_filter"
	}
	return a, nil
}

func (p *openAI) Health(ctx context.Context) error {
	if _, err := p.client.Models.List(ctx); err != nil {
		return providerError(p.cfg.Name, p.key, err)
	}
	return nil
}
