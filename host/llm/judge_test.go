package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/sdk/go/abi"
)

// clock is a manual clock for breaker, rate limit and cache tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestFailoverInPreferenceOrder(t *testing.T) {
	bad := newFakeOpenAI(t, "500")
	good := newFakeAnthropic(t, "ok", "k")
	t.Setenv("TEST_ANT", "k")
	j := newJudge(t, llm.Options{
		Providers: []llm.ProviderConfig{
			{Name: "claude", Kind: "anthropic", BaseURL: good.URL(), Model: "m", APIKeyEnv: "TEST_ANT"},
			{Name: "vllm", Kind: "openai", BaseURL: bad.URL() + "/v1", Model: "m"},
		},
		Preference: []string{"vllm", "claude"},
	})
	resp, err := j.Sample(context.Background(), secretReq)
	if err != nil || resp.Provider != "claude" || resp.Decision != "deny" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	if bad.calls.Load() != 1 || good.calls.Load() != 1 {
		t.Fatalf("calls: vllm %d claude %d", bad.calls.Load(), good.calls.Load())
	}
	st := j.Status()
	if st[0].Name != "vllm" || st[0].Calls != 1 || st[0].Failures != 1 || st[1].Calls != 1 || st[1].Failures != 0 {
		t.Fatalf("status = %+v", st)
	}
	if c := j.Counters(); c.Samples != 1 || c.Failed != 0 || c.CacheHits != 0 {
		t.Fatalf("counters = %+v", c)
	}
}

func TestRefusalAndGarbageDoNotFailOver(t *testing.T) {
	for _, mode := range []string{"refusal", "garbage"} {
		t.Run(mode, func(t *testing.T) {
			first := newFakeOpenAI(t, mode)
			second := newFakeOpenAI(t, "allow")
			j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{
				{Name: "a", Kind: "openai", BaseURL: first.URL() + "/v1", Model: "m"},
				{Name: "b", Kind: "openai", BaseURL: second.URL() + "/v1", Model: "m"},
			}})
			resp, err := j.Sample(context.Background(), secretReq)
			if err == nil || resp.Decision != "" || resp.Provider != "a" {
				t.Fatalf("resp = %+v, err = %v: want fail closed at a", resp, err)
			}
			if second.calls.Load() != 0 {
				t.Fatal("judge shopped for another answer after a refusal or garbage")
			}
		})
	}
}

func TestBreakerOpensAndHalfOpens(t *testing.T) {
	f := newFakeOpenAI(t, "500")
	// gobreaker keeps its own clock: a short real cooldown, and the test polls for the state.
	const cooldown = time.Second // long enough that "open" is read before it ends, even on a loaded machine
	j := newJudge(t, llm.Options{
		Breaker:   llm.BreakerOptions{Failures: 3, Cooldown: cooldown},
		Providers: []llm.ProviderConfig{{Name: "oa", Kind: "openai", BaseURL: f.URL() + "/v1", Model: "m"}},
	})
	halfOpen := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for j.Status()[0].Breaker != "half-open" {
			if time.Now().After(deadline) {
				t.Fatalf("breaker = %s long after its cooldown, want half-open", j.Status()[0].Breaker)
			}
			time.Sleep(cooldown / 5)
		}
	}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := j.Sample(ctx, secretReq); err == nil {
			t.Fatal("500 accepted")
		}
	}
	if got := j.Status()[0].Breaker; got != "open" {
		t.Fatalf("breaker = %s after 3 failures, want open", got)
	}
	if _, err := j.Sample(ctx, secretReq); !errors.Is(err, llm.ErrNoProvider) || !contains(err.Error(), "breaker open") {
		t.Fatalf("err = %v", err)
	}
	if f.calls.Load() != 3 {
		t.Fatalf("open breaker let a call through: %d calls", f.calls.Load())
	}
	halfOpen()
	// The half-open probe fails: open again without waiting for 3 failures.
	if _, err := j.Sample(ctx, secretReq); err == nil {
		t.Fatal("probe succeeded against a 500")
	}
	if got := j.Status()[0].Breaker; got != "open" || f.calls.Load() != 4 {
		t.Fatalf("breaker = %s calls = %d", got, f.calls.Load())
	}
	halfOpen()
	f.setMode("ok")
	if _, err := j.Sample(ctx, secretReq); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if got := j.Status()[0].Breaker; got != "closed" {
		t.Fatalf("breaker = %s after a good probe", got)
	}
}

func TestCacheKeyedByNormalizedPrompt(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f := newFakeOpenAI(t, "ok")
	j, err := llm.New(llm.Options{
		Now: clk.Now, CacheSize: 10, CacheTTL: time.Minute,
		Providers: []llm.ProviderConfig{{Name: "oa", Kind: "openai", BaseURL: f.URL() + "/v1", Model: "m"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := abi.SampleRequest{Guidance: "be  careful", Tool: "get-env", Arguments: json.RawMessage(`{"b":2,"a":1}`)}
	b := abi.SampleRequest{Guidance: "be careful", Tool: "get-env", Arguments: json.RawMessage("{ \"a\": 1,\n\"b\": 2 }")}
	c := abi.SampleRequest{Guidance: "be careful", Tool: "get-env", Arguments: json.RawMessage(`{"a":1,"b":3}`)}
	for _, r := range []abi.SampleRequest{a, b} {
		resp, err := j.Sample(ctx, r)
		if err != nil || resp.Decision != "deny" || resp.Provider != "oa" {
			t.Fatalf("resp = %+v err = %v", resp, err)
		}
	}
	if f.calls.Load() != 1 {
		t.Fatalf("calls = %d, want 1 (second request served from cache)", f.calls.Load())
	}
	if c := j.Counters(); c.Samples != 2 || c.CacheHits != 1 {
		t.Fatalf("counters = %+v", c)
	}
	if _, err := j.Sample(ctx, c); err != nil || f.calls.Load() != 2 {
		t.Fatalf("different arguments hit the cache: calls = %d err = %v", f.calls.Load(), err)
	}
	clk.Add(time.Minute)
	if _, err := j.Sample(ctx, a); err != nil || f.calls.Load() != 3 {
		t.Fatalf("expired entry served: calls = %d", f.calls.Load())
	}
	// Failures are never cached.
	f.setMode("garbage")
	if _, err := j.Sample(ctx, abi.SampleRequest{Tool: "new"}); err == nil {
		t.Fatal("garbage accepted")
	}
	f.setMode("ok")
	if _, err := j.Sample(ctx, abi.SampleRequest{Tool: "new"}); err != nil {
		t.Fatalf("failure was cached: %v", err)
	}
}

func TestRateLimitSkipsToNextProvider(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	fast := newFakeOpenAI(t, "ok")
	j := newJudge(t, llm.Options{
		Now: clk.Now,
		Providers: []llm.ProviderConfig{
			{Name: "paid", Kind: "openai", BaseURL: fast.URL() + "/v1", Model: "m", RateLimit: 1, Burst: 2},
			{Name: "local", Kind: "local"},
		},
	})
	var got []string
	for i := 0; i < 4; i++ {
		resp, err := j.Sample(context.Background(), abi.SampleRequest{Tool: fmt.Sprint("t", i)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Provider)
	}
	if strings.Join(got, ",") != "paid,paid,local,local" {
		t.Fatalf("providers = %v", got)
	}
	clk.Add(time.Second)
	if resp, _ := j.Sample(context.Background(), abi.SampleRequest{Tool: "later"}); resp.Provider != "paid" {
		t.Fatalf("bucket did not refill: %+v", resp)
	}
}

func TestRetryAfterKeepsProviderOut(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	limited := newFakeOpenAI(t, "429") // Retry-After: 7
	j := newJudge(t, llm.Options{Now: clk.Now, Providers: []llm.ProviderConfig{
		{Name: "paid", Kind: "openai", BaseURL: limited.URL() + "/v1", Model: "m"},
		{Name: "local", Kind: "local"},
	}})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		resp, err := j.Sample(ctx, abi.SampleRequest{Tool: fmt.Sprint("t", i)})
		if err != nil || resp.Provider != "local" {
			t.Fatalf("resp = %+v err = %v", resp, err)
		}
	}
	if limited.calls.Load() != 1 {
		t.Fatalf("429 provider called %d times within its Retry-After", limited.calls.Load())
	}
	limited.setMode("ok")
	clk.Add(7 * time.Second)
	if resp, _ := j.Sample(ctx, abi.SampleRequest{Tool: "later"}); resp.Provider != "paid" {
		t.Fatalf("provider not back after Retry-After: %+v", resp)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, o := range map[string]llm.Options{
		"none":              {},
		"unknown kind":      {Providers: []llm.ProviderConfig{{Kind: "gpt5"}}},
		"no model":          {Providers: []llm.ProviderConfig{{Kind: "openai"}}},
		"duplicate":         {Providers: []llm.ProviderConfig{{Kind: "local"}, {Kind: "local"}}},
		"bad preference":    {Providers: []llm.ProviderConfig{{Kind: "local"}}, Preference: []string{"nope"}},
		"missing key file":  {Providers: []llm.ProviderConfig{{Kind: "anthropic", Model: "m", APIKeyFile: "/nonexistent/key"}}},
		"bad local default": {Providers: []llm.ProviderConfig{{Kind: "local", Local: llm.LocalConfig{Default: "maybe"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := llm.New(o); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestRegisterPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate kind did not panic")
		}
	}()
	llm.Register("local", func(llm.ProviderConfig, llm.Env) (llm.Provider, error) { return nil, nil })
}

func TestLocalProviderIsDeterministic(t *testing.T) {
	j := newJudge(t, llm.Options{Providers: []llm.ProviderConfig{{Kind: "local"}}})
	for _, tc := range []struct {
		args, want string
	}{
		{`{"cmd":"rm -rf /"}`, "deny"},
		{`{"path":"/home/u/.ssh/id_rsa"}`, "deny"},
		{`{"path":"/tmp/x","op":"delete"}`, "ask"},
		{`{"text":"hello"}`, "allow"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			for i := 0; i < 2; i++ {
				resp, err := j.Sample(context.Background(), abi.SampleRequest{Tool: "run", Arguments: json.RawMessage(tc.args), Guidance: "rm -rf is discussed here but guidance is never matched"})
				if err != nil || resp.Decision != tc.want || resp.Provider != "local" {
					t.Fatalf("resp = %+v err = %v, want %s", resp, err, tc.want)
				}
			}
		})
	}
}

func TestCallerCancelStopsFailover(t *testing.T) {
	hang := newFakeOpenAI(t, "hang")
	other := newFakeOpenAI(t, "ok")
	j := newJudge(t, llm.Options{Timeout: time.Minute, Providers: []llm.ProviderConfig{
		{Name: "a", Kind: "openai", BaseURL: hang.URL() + "/v1", Model: "m"},
		{Name: "b", Kind: "openai", BaseURL: other.URL() + "/v1", Model: "m"},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for hang.calls.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := j.Sample(ctx, secretReq); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if other.calls.Load() != 0 {
		t.Fatal("failed over after the caller gave up")
	}
}

// flaky fails every other call; used by the hammer test.
type flaky struct{ n atomic.Int64 }

func (f *flaky) Name() string { return "flaky" }
func (f *flaky) Complete(ctx context.Context, p llm.Prompt) (llm.Answer, error) {
	if f.n.Add(1)%2 == 0 {
		return llm.Answer{}, fmt.Errorf("%w: flaky", llm.ErrUnavailable)
	}
	return llm.Answer{Text: `{"decision":"allow","confidence":0.5,"reasons":["ok"]}`}, nil
}
func (f *flaky) Health(context.Context) error { return nil }

func TestHammerConcurrentSample(t *testing.T) {
	j, err := llm.New(llm.Options{
		CacheSize: 16,
		Custom:    []llm.Provider{&flaky{}},
		Providers: []llm.ProviderConfig{{Kind: "local"}},
		Breaker:   llm.BreakerOptions{Failures: 2, Cooldown: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var fails atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				resp, err := j.Sample(context.Background(), abi.SampleRequest{Tool: fmt.Sprint("tool-", (g*200+i)%40)})
				if err != nil || (resp.Provider != "flaky" && resp.Provider != "local") {
					fails.Add(1)
				}
			}
			j.Status()
			j.CheckHealth(context.Background())
		}()
	}
	wg.Wait()
	if fails.Load() != 0 {
		t.Fatalf("%d samples failed though local always answers", fails.Load())
	}
}
