package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// Options configures a Judge. The zero value of each field is documented beside it.
type Options struct {
	Providers []ProviderConfig // built through the kind registry
	// Custom are providers built by the caller (e.g. an in-process model); they are named by
	// their Name() and may appear in Preference like configured ones.
	Custom []Provider
	// Preference orders provider names. nil = Providers then Custom, in order. A provider not
	// listed is not used; a listed name that does not exist is an error.
	Preference    []string
	Timeout       time.Duration  // per attempt, unless the provider config sets one; 0 = 10s
	MaxFieldBytes int            // cap on arguments and context in the prompt; 0 = DefaultMaxFieldBytes
	CacheSize     int            // answers cached; 0 = 1024; negative disables the cache
	CacheTTL      time.Duration  // 0 = 5m
	Breaker       BreakerOptions // per provider
	HTTPClient    *http.Client   // nil = a client with no overall timeout (attempts carry their own)
	Logger        *slog.Logger   // nil = discard
	// Now is the clock of the cache, rate limits and Retry-After backoff (tests); nil =
	// time.Now. The breakers keep their own clock (gobreaker).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxFieldBytes <= 0 {
		o.MaxFieldBytes = DefaultMaxFieldBytes
	}
	if o.CacheSize == 0 {
		o.CacheSize = 1024
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 5 * time.Minute
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Breaker = o.Breaker.withDefaults()
	return o
}

// Judge answers sample requests with the first usable provider. It is safe for concurrent use.
type Judge struct {
	opts    Options
	log     *slog.Logger
	entries []*entry
	cache   *cache

	samples, cacheHits, failed atomic.Int64
}

// Counters are the judge's totals since New, for metrics.
type Counters struct {
	Samples   int64 `json:"samples"`    // Sample calls
	CacheHits int64 `json:"cache_hits"` // answered from the cache
	Failed    int64 `json:"failed"`     // failed closed (no provider, refusal, invalid answer, cancel)
}

// Counters returns the judge's totals.
func (j *Judge) Counters() Counters {
	return Counters{Samples: j.samples.Load(), CacheHits: j.cacheHits.Load(), Failed: j.failed.Load()}
}

type entry struct {
	p       Provider
	kind    string
	timeout time.Duration
	br      *breaker
	rl      *bucket

	calls, failures atomic.Int64

	mu         sync.Mutex
	healthErr  error     // last health check result; nil = healthy or never checked
	retryAfter time.Time // the provider asked (HTTP Retry-After) not to be called before this
}

// ProviderStatus is one provider's state, for admin pages and tests.
type ProviderStatus struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Healthy  bool   `json:"healthy"`
	Health   string `json:"health,omitempty"` // last health error
	Breaker  string `json:"breaker"`          // closed | open | half-open
	Calls    int64  `json:"calls"`            // requests sent to the provider
	Failures int64  `json:"failures"`         // of which failed (error, refusal or invalid answer)
}

// New builds a Judge. It resolves API keys and validates every provider; it starts nothing.
func New(o Options) (*Judge, error) {
	o = o.withDefaults()
	j := &Judge{opts: o, log: o.Logger}
	if o.CacheSize > 0 {
		j.cache = newCache(o.CacheSize, o.CacheTTL, o.Now)
	}
	byName := map[string]*entry{}
	var order []string
	add := func(p Provider, kind string, cfg ProviderConfig) error {
		name := p.Name()
		if _, dup := byName[name]; dup {
			return fmt.Errorf("llm: new judge: duplicate provider name %q", name)
		}
		t := cfg.Timeout
		if t <= 0 {
			t = o.Timeout
		}
		byName[name] = &entry{p: p, kind: kind, timeout: t, br: newBreaker(o.Breaker), rl: newBucket(cfg.RateLimit, cfg.Burst, o.Now)}
		order = append(order, name)
		return nil
	}
	env := Env{HTTPClient: o.HTTPClient, Logger: o.Logger}
	for i, cfg := range o.Providers {
		if cfg.Name == "" {
			cfg.Name = cfg.Kind
		}
		f, ok := factory(cfg.Kind)
		if !ok {
			return nil, fmt.Errorf("llm: new judge: providers[%d] (%s): unknown kind %q (have %v)", i, cfg.Name, cfg.Kind, Kinds())
		}
		p, err := f(cfg, env)
		if err != nil {
			return nil, fmt.Errorf("llm: new judge: providers[%d] (%s): %w", i, cfg.Name, err)
		}
		if err := add(p, cfg.Kind, cfg); err != nil {
			return nil, err
		}
	}
	for _, p := range o.Custom {
		if err := add(p, "custom", ProviderConfig{}); err != nil {
			return nil, err
		}
	}
	if o.Preference != nil {
		order = nil
		seen := map[string]bool{}
		for _, n := range o.Preference {
			if _, ok := byName[n]; !ok {
				return nil, fmt.Errorf("llm: new judge: preference names unknown provider %q", n)
			}
			if !seen[n] {
				seen[n] = true
				order = append(order, n)
			}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("llm: new judge: %w: none configured", ErrNoProvider)
	}
	for _, n := range order {
		j.entries = append(j.entries, byName[n])
	}
	return j, nil
}

// Sample judges one request. On success the response names the provider that answered (or
// that answered the cached copy). On failure it returns a response whose Error is set and a
// non-nil error: callers must treat that as a deny (fail closed).
func (j *Judge) Sample(ctx context.Context, req abi.SampleRequest) (abi.SampleResponse, error) {
	j.samples.Add(1)
	prompt, key := BuildPrompt(req, j.opts.MaxFieldBytes)
	if r, ok := j.cache.get(key); ok {
		j.cacheHits.Add(1)
		j.log.Debug("llm sample", "provider", r.Provider, "decision", r.Decision, "cache", "hit", "prompt_sha256", key[:16])
		return r, nil
	}
	var errs []error
	for _, e := range j.entries {
		name := e.p.Name()
		if err := e.health(); err != nil {
			errs = append(errs, fmt.Errorf("%s: unhealthy: %w", name, err))
			continue
		}
		if until := e.backoff(); j.opts.Now().Before(until) {
			errs = append(errs, fmt.Errorf("%s: %w: retry after %s", name, ErrUnavailable, until.UTC().Format(time.RFC3339)))
			continue
		}
		if !e.rl.take() {
			errs = append(errs, fmt.Errorf("%s: %w: rate limited", name, ErrUnavailable))
			continue
		}
		report := e.br.allow()
		if report == nil {
			errs = append(errs, fmt.Errorf("%s: %w: breaker open", name, ErrUnavailable))
			continue
		}
		e.calls.Add(1)
		actx, cancel := context.WithTimeout(ctx, e.timeout)
		ans, err := e.p.Complete(actx, prompt)
		cancel()
		if err != nil {
			report(false)
			e.failures.Add(1)
			if ctx.Err() != nil { // the caller gave up: do not try others
				return j.fail(name, fmt.Errorf("llm: sample: %w", ctx.Err()))
			}
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: timeout after %s: %w", ErrUnavailable, e.timeout, err)
			}
			var he *HTTPError
			if errors.As(err, &he) && he.RetryAfter > 0 {
				e.setBackoff(j.opts.Now().Add(min(he.RetryAfter, maxRetryAfter)))
			}
			j.log.Warn("llm provider failed", "provider", name, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if ans.Refusal != "" {
			e.failures.Add(1)
			report(true) // the provider works; the model declined
			return j.fail(name, fmt.Errorf("llm: sample: provider %s: %w: %s", name, ErrRefused, capText(collapseSpace(ans.Refusal), 200)))
		}
		resp, err := ParseDecision(ans.Text)
		if err != nil {
			e.failures.Add(1)
			report(false) // garbage counts against the provider, and this request fails closed
			return j.fail(name, fmt.Errorf("llm: sample: provider %s: %w", name, err))
		}
		report(true)
		resp.Provider = name
		j.cache.put(key, resp)
		j.log.Debug("llm sample", "provider", name, "decision", resp.Decision, "confidence", resp.Confidence, "cache", "miss", "prompt_sha256", key[:16])
		return resp, nil
	}
	return j.fail("", fmt.Errorf("llm: sample: %w: %w", ErrNoProvider, errors.Join(errs...)))
}

func (j *Judge) fail(provider string, err error) (abi.SampleResponse, error) {
	j.failed.Add(1)
	return abi.SampleResponse{Provider: provider, Error: err.Error()}, err
}

// maxRetryAfter caps how long a provider's Retry-After can keep it out of rotation.
const maxRetryAfter = 5 * time.Minute

func (e *entry) backoff() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.retryAfter
}

func (e *entry) setBackoff(t time.Time) {
	e.mu.Lock()
	e.retryAfter = t
	e.mu.Unlock()
}

func (e *entry) health() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.healthErr
}

// CheckHealth runs every provider's health check once (in parallel, each bounded by its
// timeout) and records the results: an unhealthy provider is skipped until a later check
// passes. It returns the errors by provider name (nil for healthy ones).
func (j *Judge) CheckHealth(ctx context.Context) map[string]error {
	out := make(map[string]error, len(j.entries))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, e := range j.entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hctx, cancel := context.WithTimeout(ctx, e.timeout)
			err := e.p.Health(hctx)
			cancel()
			e.mu.Lock()
			was := e.healthErr
			e.healthErr = err
			e.mu.Unlock()
			if (was == nil) != (err == nil) {
				j.log.Info("llm provider health changed", "provider", e.p.Name(), "healthy", err == nil, "err", err)
			}
			mu.Lock()
			out[e.p.Name()] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// RunHealthChecks calls CheckHealth now and then every interval (0 = 30s) until ctx is done.
// Run it in its own goroutine.
func (j *Judge) RunHealthChecks(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = 30 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		j.CheckHealth(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Status reports each provider's state in preference order.
func (j *Judge) Status() []ProviderStatus {
	out := make([]ProviderStatus, 0, len(j.entries))
	for _, e := range j.entries {
		st := ProviderStatus{Name: e.p.Name(), Kind: e.kind, Healthy: true, Breaker: e.br.current().String(),
			Calls: e.calls.Load(), Failures: e.failures.Load()}
		if err := e.health(); err != nil {
			st.Healthy = false
			st.Health = err.Error()
		}
		out = append(out, st)
	}
	return out
}
