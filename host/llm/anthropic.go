package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

func init() { Register("anthropic", newAnthropic) }

// AnthropicVersion is the anthropic-version header sent with every request.
const AnthropicVersion = "2023-06-01"

// anthropic speaks the Anthropic Messages API (POST {base}/v1/messages).
type anthropic struct {
	cfg  ProviderConfig
	key  string
	http *http.Client
	hdr  map[string]string
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
	hdr := map[string]string{"anthropic-version": AnthropicVersion}
	for k, v := range cfg.Headers {
		hdr[k] = v
	}
	if key != "" {
		hdr["x-api-key"] = key
	}
	return &anthropic{cfg: cfg, key: key, http: env.HTTPClient, hdr: hdr}, nil
}

func (p *anthropic) Name() string { return p.cfg.Name }

type anMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anRequest struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      string      `json:"system,omitempty"`
	Messages    []anMessage `json:"messages"`
	Temperature float64     `json:"temperature"`
	Stream      bool        `json:"stream,omitempty"`
}

type anError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (p *anthropic) Complete(ctx context.Context, pr Prompt) (Answer, error) {
	body := anRequest{
		Model:       p.cfg.Model,
		MaxTokens:   p.cfg.MaxTokens,
		System:      pr.System,
		Messages:    []anMessage{{Role: "user", Content: pr.User}},
		Temperature: pr.Temperature,
		Stream:      p.cfg.Stream,
	}
	resp, err := post(ctx, p.http, p.cfg.Name, p.cfg.BaseURL+"/v1/messages", p.hdr, body, p.key)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	if p.cfg.Stream {
		return p.readStream(resp.Body)
	}
	var out struct {
		Type    string `json:"type"`
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string   `json:"stop_reason"`
		Error      *anError `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBodyBytes)).Decode(&out); err != nil {
		return Answer{}, fmt.Errorf("llm: provider %s: %w: decode reply: %v", p.cfg.Name, ErrUnavailable, err)
	}
	if out.Type == "error" || out.Error != nil {
		msg := ""
		if out.Error != nil {
			msg = out.Error.Type + ": " + out.Error.Message
		}
		return Answer{}, fmt.Errorf("llm: provider %s: %w: %s", p.cfg.Name, ErrUnavailable, redact(msg, p.key))
	}
	var text strings.Builder
	for _, c := range out.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	a := Answer{Text: text.String(), Model: out.Model, StopReason: out.StopReason}
	if out.StopReason == "refusal" {
		a.Refusal = "stop_reason refusal"
		if a.Text != "" {
			a.Refusal = a.Text
		}
	}
	return a, nil
}

func (p *anthropic) readStream(r io.Reader) (Answer, error) {
	var a Answer
	var text strings.Builder
	err := readSSE(p.cfg.Name, r, func(event, data string) (bool, error) {
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				Model string `json:"model"`
			} `json:"message"`
			Delta struct {
				Type       string `json:"type"`
				Text       string `json:"text"`
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
			Error *anError `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return false, fmt.Errorf("llm: provider %s: %w: bad stream event %q: %v", p.cfg.Name, ErrUnavailable, event, err)
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "message_start":
			a.Model = ev.Message.Model
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				text.WriteString(ev.Delta.Text)
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				a.StopReason = ev.Delta.StopReason
			}
		case "message_stop":
			return true, nil
		case "error":
			msg := "stream error"
			if ev.Error != nil {
				msg = ev.Error.Type + ": " + ev.Error.Message
			}
			return false, fmt.Errorf("llm: provider %s: %w: %s", p.cfg.Name, ErrUnavailable, redact(msg, p.key))
		}
		if text.Len() > maxAnswerBytes*4 {
			return false, fmt.Errorf("llm: provider %s: %w: answer too long", p.cfg.Name, ErrInvalidAnswer)
		}
		return false, nil
	})
	if err != nil {
		return Answer{}, err
	}
	a.Text = text.String()
	if a.StopReason == "refusal" {
		a.Refusal = "stop_reason refusal"
		if a.Text != "" {
			a.Refusal = a.Text
		}
	}
	return a, nil
}

func (p *anthropic) Health(ctx context.Context) error {
	return get(ctx, p.http, p.cfg.Name, p.cfg.BaseURL+"/v1/models", p.hdr, p.key)
}
