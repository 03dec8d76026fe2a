package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/sdk/go/abi"
)

var secretReq = abi.SampleRequest{
	Guidance:  "Secrets must never leave the machine.",
	Tool:      "get-env",
	Server:    "everything",
	Arguments: json.RawMessage(`{"name":"AWS_SECRET_ACCESS_KEY"}`),
}

func newJudge(t *testing.T, o llm.Options) *llm.Judge {
	t.Helper()
	if o.CacheSize == 0 {
		o.CacheSize = -1
	}
	j, err := llm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestOpenAIWireFormat(t *testing.T) {
	t.Setenv("TEST_OPENAI_KEY", "sk-test-0123456789")
	for _, tc := range []struct {
		mode    string
		stream  bool
		wantErr error // nil = a decision
	}{
		{"ok", false, nil},
		{"fenced", false, nil},
		{"stream", true, nil},
		{"garbage", false, llm.ErrInvalidAnswer},
		{"refusal", false, llm.ErrRefused},
		{"filter", false, llm.ErrRefused},
		{"stream-refusal", true, llm.ErrRefused},
		{"stream-cut", true, llm.ErrNoProvider},
		{"stream-error", true, llm.ErrNoProvider},
		{"empty", false, llm.ErrNoProvider},
		{"429", false, llm.ErrNoProvider},
		{"500", false, llm.ErrNoProvider},
		{"401", false, llm.ErrNoProvider},
		{"hang", false, llm.ErrNoProvider},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFakeOpenAI(t, tc.mode)
			j := newJudge(t, llm.Options{
				Timeout:   300 * time.Millisecond,
				Providers: []llm.ProviderConfig{{Name: "oa", Kind: "openai", BaseURL: f.URL() + "/v1", Model: "gpt-test", APIKeyEnv: "TEST_OPENAI_KEY", Stream: tc.stream}},
			})
			resp, err := j.Sample(context.Background(), secretReq)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Sample err = %v, want %v", err, tc.wantErr)
				}
				if resp.Error == "" || resp.Decision != "" {
					t.Fatalf("failed response = %+v, want Error and no decision", resp)
				}
				if contains(resp.Error, "sk-test-0123456789") || contains(resp.Error, "sk-live-abcdefghijklmnop") {
					t.Fatalf("error leaks a key: %s", resp.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Decision != "deny" || resp.Confidence != 0.9 || resp.Provider != "oa" || len(resp.Reasons) != 1 {
				t.Fatalf("resp = %+v", resp)
			}
			if got := f.header().Get("Authorization"); got != "Bearer sk-test-0123456789" {
				t.Fatalf("Authorization = %q", got)
			}
			b := f.body()
			if b["model"] != "gpt-test" || b["response_format"].(map[string]any)["type"] != "json_object" {
				t.Fatalf("request body = %v", b)
			}
			msgs := b["messages"].([]any)
			if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
				t.Fatalf("messages = %v", msgs)
			}
			if (b["stream"] == true) != tc.stream {
				t.Fatalf("stream = %v", b["stream"])
			}
		})
	}
}

func TestOpenAI429IsUnavailableWithRetryAfter(t *testing.T) {
	f := newFakeOpenAI(t, "429")
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Kind: "openai", BaseURL: f.URL() + "/v1", Model: "m"}}})
	_, err := j.Sample(context.Background(), secretReq)
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != 429 || he.RetryAfter != 7*time.Second || !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("err = %v (%+v)", err, he)
	}
}

func TestAnthropicWireFormat(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-ant-test-abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode    string
		stream  bool
		wantErr error
	}{
		{"ok", false, nil},
		{"stream", true, nil},
		{"refusal", false, llm.ErrRefused},
		{"stream-refusal", true, llm.ErrRefused},
		{"garbage", false, llm.ErrInvalidAnswer},
		{"stream-error", true, llm.ErrNoProvider},
		{"529", false, llm.ErrNoProvider},
		{"500", false, llm.ErrNoProvider},
		{"hang", true, llm.ErrNoProvider},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFakeAnthropic(t, tc.mode, "sk-ant-test-abcdef")
			j := newJudge(t, llm.Options{
				Timeout:   300 * time.Millisecond,
				Providers: []llm.ProviderConfig{{Name: "claude", Kind: "anthropic", BaseURL: f.URL(), Model: "claude-test", APIKeyFile: keyFile, Stream: tc.stream}},
			})
			resp, err := j.Sample(context.Background(), secretReq)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Sample err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Decision != "deny" || resp.Provider != "claude" {
				t.Fatalf("resp = %+v", resp)
			}
			h := f.header()
			if h.Get("anthropic-version") != llm.AnthropicVersion || h.Get("x-api-key") != "sk-ant-test-abcdef" {
				t.Fatalf("headers = %v", h)
			}
			b := f.body()
			if b["system"] == "" || b["max_tokens"].(float64) != 512 || len(b["messages"].([]any)) != 1 {
				t.Fatalf("body = %v", b)
			}
		})
	}
}

func TestAnthropicWrongKeyFailsClosed(t *testing.T) {
	t.Setenv("TEST_ANT_KEY", "sk-ant-wrong-zzzzzz")
	f := newFakeAnthropic(t, "ok", "sk-ant-right-yyyyyy")
	var logs bytes.Buffer
	j := newJudge(t, llm.Options{
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Providers: []llm.ProviderConfig{{Kind: "anthropic", BaseURL: f.URL(), Model: "m", APIKeyEnv: "TEST_ANT_KEY"}},
	})
	resp, err := j.Sample(context.Background(), secretReq)
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != 401 || resp.Decision != "" {
		t.Fatalf("err = %v resp = %+v", err, resp)
	}
	if contains(logs.String()+err.Error(), "sk-ant-wrong-zzzzzz") {
		t.Fatal("API key appears in logs or error")
	}
	if !contains(logs.String(), "authentication_error") {
		t.Fatalf("failure not logged: %s", logs.String())
	}
}

func TestKeyEchoedByProviderIsRedacted(t *testing.T) {
	t.Setenv("TEST_OPENAI_KEY", "sk-live-abcdefghijklmnop")
	f := newFakeOpenAI(t, "401")
	var logs bytes.Buffer
	j := newJudge(t, llm.Options{
		Logger:    slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Providers: []llm.ProviderConfig{{Kind: "openai", BaseURL: f.URL() + "/v1", Model: "m", APIKeyEnv: "TEST_OPENAI_KEY"}},
	})
	_, err := j.Sample(context.Background(), secretReq)
	if err == nil {
		t.Fatal("401 accepted")
	}
	if contains(err.Error(), "abcdefghijklmnop") || contains(logs.String(), "abcdefghijklmnop") {
		t.Fatalf("echoed key not redacted: %v\n%s", err, logs.String())
	}
	if !contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %v", err)
	}
}

func TestHealthSkipsUnhealthyProvider(t *testing.T) {
	down := newFakeOpenAI(t, "ok")
	down.setMode("down")
	up := newFakeOpenAI(t, "allow")
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{
		{Name: "down", Kind: "openai", BaseURL: down.URL() + "/v1", Model: "m"},
		{Name: "up", Kind: "openai", BaseURL: up.URL() + "/v1", Model: "m"},
	}})
	res := j.CheckHealth(context.Background())
	if res["down"] == nil || res["up"] != nil {
		t.Fatalf("health = %v", res)
	}
	resp, err := j.Sample(context.Background(), secretReq)
	if err != nil || resp.Provider != "up" {
		t.Fatalf("resp = %+v err = %v", resp, err)
	}
	if down.calls.Load() != 0 {
		t.Fatalf("unhealthy provider was called %d times", down.calls.Load())
	}
	st := j.Status()
	if st[0].Healthy || !st[1].Healthy || st[0].Breaker != "closed" {
		t.Fatalf("status = %+v", st)
	}
	down.setMode("ok")
	j.CheckHealth(context.Background())
	if resp, _ := j.Sample(context.Background(), abi.SampleRequest{Tool: "x"}); resp.Provider != "down" {
		t.Fatalf("recovered provider not used first: %+v", resp)
	}
}

// The official clients read OPENAI_* and ANTHROPIC_* from the environment by default; the
// providers use only what their config names, so a key in the gateway's environment never
// goes to a base URL the config points elsewhere.
func TestProvidersIgnoreClientEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env-openai-0000000")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env-0000000")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	oa := newFakeOpenAI(t, "ok")
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Name: "local", Kind: "openai", BaseURL: oa.URL() + "/v1", Model: "m"}}})
	if _, err := j.Sample(context.Background(), secretReq); err != nil {
		t.Fatal(err)
	}
	if h := oa.header().Get("Authorization"); h != "" {
		t.Fatalf("keyless openai provider sent Authorization %q", h)
	}
	an := newFakeAnthropic(t, "ok", "")
	j = newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Name: "claude", Kind: "anthropic", BaseURL: an.URL(), Model: "m"}}})
	if _, err := j.Sample(context.Background(), secretReq); err != nil {
		t.Fatal(err)
	}
	if h := an.header(); h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Fatalf("keyless anthropic provider sent a key: %v", h)
	}
}
