package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

func init() { Register("openai", newOpenAI) }

// openAI speaks OpenAI chat completions (POST {base}/chat/completions), which vLLM, Ollama
// (base http://host:11434/v1) and llama.cpp server also serve.
type openAI struct {
	cfg  ProviderConfig
	key  string
	http *http.Client
	hdr  map[string]string
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
	hdr := map[string]string{}
	for k, v := range cfg.Headers {
		hdr[k] = v
	}
	if key != "" {
		hdr["Authorization"] = "Bearer " + key
	}
	return &openAI{cfg: cfg, key: key, http: env.HTTPClient, hdr: hdr}, nil
}

func (p *openAI) Name() string { return p.cfg.Name }

type oaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type oaRequest struct {
	Model          string      `json:"model"`
	Messages       []oaMessage `json:"messages"`
	Temperature    float64     `json:"temperature"`
	MaxTokens      int         `json:"max_tokens,omitempty"`
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Stream bool `json:"stream,omitempty"`
}

type oaError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

func (p *openAI) Complete(ctx context.Context, pr Prompt) (Answer, error) {
	body := oaRequest{
		Model:       p.cfg.Model,
		Messages:    []oaMessage{{Role: "system", Content: pr.System}, {Role: "user", Content: pr.User}},
		Temperature: pr.Temperature,
		MaxTokens:   p.cfg.MaxTokens,
		Stream:      p.cfg.Stream,
	}
	body.ResponseFormat.Type = "json_object"
	resp, err := post(ctx, p.http, p.cfg.Name, p.cfg.BaseURL+"/chat/completions", p.hdr, body, p.key)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	if p.cfg.Stream {
		return p.readStream(resp.Body)
	}
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Error *oaError `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBodyBytes)).Decode(&out); err != nil {
		return Answer{}, fmt.Errorf("llm: provider %s: %w: decode reply: %v", p.cfg.Name, ErrUnavailable, err)
	}
	if out.Error != nil {
		return Answer{}, fmt.Errorf("llm: provider %s: %w: %s", p.cfg.Name, ErrUnavailable, redact(out.Error.Message, p.key))
	}
	if len(out.Choices) == 0 {
		return Answer{}, fmt.Errorf("llm: provider %s: %w: no choices", p.cfg.Name, ErrUnavailable)
	}
	c := out.Choices[0]
	a := Answer{Model: out.Model, StopReason: c.FinishReason}
	if c.Message.Content != nil {
		a.Text = *c.Message.Content
	}
	if c.Message.Refusal != nil && *c.Message.Refusal != "" {
		a.Refusal = *c.Message.Refusal
	} else if c.FinishReason == "content_filter" {
		a.Refusal = "content_filter"
	}
	return a, nil
}

func (p *openAI) readStream(r io.Reader) (Answer, error) {
	var a Answer
	var text, refusal strings.Builder
	err := readSSE(p.cfg.Name, r, func(_, data string) (bool, error) {
		if strings.TrimSpace(data) == "[DONE]" {
			return true, nil
		}
		var ch struct {
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
					Refusal *string `json:"refusal"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error *oaError `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return false, fmt.Errorf("llm: provider %s: %w: bad stream chunk: %v", p.cfg.Name, ErrUnavailable, err)
		}
		if ch.Error != nil {
			return false, fmt.Errorf("llm: provider %s: %w: stream error: %s", p.cfg.Name, ErrUnavailable, redact(ch.Error.Message, p.key))
		}
		if ch.Model != "" {
			a.Model = ch.Model
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				text.WriteString(*c.Delta.Content)
			}
			if c.Delta.Refusal != nil {
				refusal.WriteString(*c.Delta.Refusal)
			}
			if c.FinishReason != nil {
				a.StopReason = *c.FinishReason
			}
		}
		if text.Len()+refusal.Len() > maxAnswerBytes*4 {
			return false, fmt.Errorf("llm: provider %s: %w: answer too long", p.cfg.Name, ErrInvalidAnswer)
		}
		return false, nil
	})
	if err != nil {
		return Answer{}, err
	}
	a.Text, a.Refusal = text.String(), refusal.String()
	if a.Refusal == "" && a.StopReason == "content_filter" {
		a.Refusal = "content_filter"
	}
	return a, nil
}

func (p *openAI) Health(ctx context.Context) error {
	return get(ctx, p.http, p.cfg.Name, p.cfg.BaseURL+"/models", p.hdr, p.key)
}
