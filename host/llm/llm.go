package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// Prompt is what the judge sends to a provider.
type Prompt struct {
	System      string // trusted instructions
	User        string // the fenced request
	MaxTokens   int    // answer budget
	Temperature float64
	// Request is the structured request the prompt was built from. Only the local provider
	// reads it; remote providers see System and User.
	Request *abi.SampleRequest
}

// Answer is a provider's raw reply.
type Answer struct {
	Text       string // the model's text
	Refusal    string // set when the provider reports a refusal
	StopReason string // provider's finish/stop reason
	Model      string // model that answered, when the provider says
}

// Provider is one LLM backend.
type Provider interface {
	// Name is the configured provider name (unique in a Judge).
	Name() string
	// Complete asks the model once. Errors wrapping ErrUnavailable let the judge try the next
	// provider; any other error fails the request closed.
	Complete(ctx context.Context, p Prompt) (Answer, error)
	// Health reports whether the provider can take requests now.
	Health(ctx context.Context) error
}

// Sentinel errors.
var (
	// ErrUnavailable marks a provider failure after which the next provider may be tried:
	// transport errors, timeouts, HTTP 429 and 5xx, an open breaker, a rate limit, no client.
	ErrUnavailable = errors.New("llm: provider unavailable")
	// ErrRefused means the model refused to judge; the request fails closed.
	ErrRefused = errors.New("llm: model refused")
	// ErrInvalidAnswer means the answer was not the strict JSON shape; the request fails closed.
	ErrInvalidAnswer = errors.New("llm: invalid answer")
	// ErrNoProvider means no provider could be asked; the request fails closed.
	ErrNoProvider = errors.New("llm: no provider available")
)

// HTTPError is a non-2xx reply from a provider's HTTP API.
type HTTPError struct {
	Provider   string
	Status     int
	RetryAfter time.Duration // from Retry-After, when present
	Message    string        // provider's error message, truncated; never contains the API key
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("llm: provider %s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

// Unwrap makes 429, 5xx and 408 count as ErrUnavailable.
func (e *HTTPError) Unwrap() error {
	if e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500 {
		return ErrUnavailable
	}
	return nil
}

// ProviderConfig configures one provider. Zero values are documented per field.
type ProviderConfig struct {
	Name    string `json:"name" yaml:"name"`         // unique name; "" = Kind
	Kind    string `json:"kind" yaml:"kind"`         // openai | anthropic | mcp | local (see Kinds)
	BaseURL string `json:"base_url" yaml:"base_url"` // API root; "" = the kind's public default
	Model   string `json:"model" yaml:"model"`       // model name; required for openai and anthropic
	// APIKeyEnv names an environment variable holding the API key; APIKeyFile a file whose
	// trimmed contents are the key. Env wins when both are set and non-empty. Never logged.
	APIKeyEnv  string            `json:"api_key_env" yaml:"api_key_env"`
	APIKeyFile string            `json:"api_key_file" yaml:"api_key_file"`
	Headers    map[string]string `json:"headers" yaml:"headers"`       // extra request headers
	Stream     bool              `json:"stream" yaml:"stream"`         // use the streaming API
	MaxTokens  int               `json:"max_tokens" yaml:"max_tokens"` // 0 = 512
	Timeout    time.Duration     `json:"timeout" yaml:"timeout"`       // per attempt; 0 = Options.Timeout
	RateLimit  float64           `json:"rate_limit" yaml:"rate_limit"` // requests/second; 0 = unlimited
	Burst      int               `json:"burst" yaml:"burst"`           // bucket size; 0 = max(1, ceil(RateLimit))
	// Local configures the local provider (Kind "local").
	Local LocalConfig `json:"local" yaml:"local"`
}

// Env is what a provider factory gets from the judge.
type Env struct {
	HTTPClient *http.Client // shared client; never nil
	Logger     *slog.Logger // never nil
}

// Factory builds a provider from its config.
type Factory func(cfg ProviderConfig, env Env) (Provider, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register adds a provider kind. It panics on an empty kind, a nil factory or a duplicate.
// Call it from init().
func Register(kind string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if kind == "" || f == nil {
		panic("llm: Register: empty kind or nil factory")
	}
	if _, dup := registry[kind]; dup {
		panic("llm: Register: duplicate provider kind " + kind)
	}
	registry[kind] = f
}

// Kinds lists the registered provider kinds, sorted.
func Kinds() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	ks := make([]string, 0, len(registry))
	for k := range registry {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func factory(kind string) (Factory, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := registry[kind]
	return f, ok
}

// apiKey resolves the key from the environment or a file. It returns "" when neither is set.
func (c ProviderConfig) apiKey() (string, error) {
	if c.APIKeyEnv != "" {
		if v := strings.TrimSpace(os.Getenv(c.APIKeyEnv)); v != "" {
			return v, nil
		}
	}
	if c.APIKeyFile != "" {
		b, err := os.ReadFile(c.APIKeyFile)
		if err != nil {
			// The path is config, not a secret; the contents never appear.
			return "", fmt.Errorf("llm: provider %s: read api key file: %w", c.Name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}
