package main_test

// Host tests: build the plugin for wasip1 and run it through the real runtime (host/plugin)
// with the real sample host function (host/hostfn) backed by the real judge (host/llm).

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/internal/wasmtest"
	"github.com/added060/palisade/sdk/go/abi"
)

func runtime(t testing.TB) *plugin.Runtime { return wasmtest.Runtime(t) }

func buildWasm(t testing.TB) []byte { return wasmtest.Build(t, ".", "judge") }

func load(t testing.TB, caps []string, s hostfn.Sampler, config string) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	rt := runtime(t)
	p, err := rt.Load(ctx, plugin.Spec{
		Name:          "judge",
		Wasm:          buildWasm(t),
		Config:        map[string]string{"config": config},
		Timeout:       10 * time.Second, // the judge waits on an LLM: give its stage seconds, not the 250ms default
		HostFunctions: hostfn.Build("judge", caps, hostfn.Deps{Sampler: s}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

func envelope(tool, args string, prior ...abi.Prior) []byte {
	b, _ := json.Marshal(abi.Envelope{ABI: "1.0", ID: "01T", Phase: "request", Method: "tools/call", Server: "shell", Tool: tool, Arguments: json.RawMessage(args), Prior: prior})
	return b
}

func verdict(t *testing.T, p *plugin.Plugin, env []byte) abi.Verdict {
	t.Helper()
	out, err := p.Evaluate(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	var v abi.Verdict
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("verdict %s: %v", out, err)
	}
	return v
}

var sampleRule = abi.Prior{Stage: "rules", Action: "sample", Rule: "shell", Guidance: "Only read-only commands are fine."}

func TestJudgePluginWithLocalProvider(t *testing.T) {
	j, err := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Kind: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, []string{"sample"}, j, `{"band":{"min":0.2,"max":0.35}}`)
	for _, tc := range []struct {
		name, args string
		prior      []abi.Prior
		want       string
	}{
		{"destructive", `{"cmd":"rm -rf /home"}`, []abi.Prior{sampleRule}, "deny"},
		{"benign", `{"cmd":"ls -la"}`, []abi.Prior{sampleRule}, "allow"},
		{"risk band", `{"cmd":"sudo reboot"}`, []abi.Prior{{Stage: "risk", Action: "ask", Score: 0.3}}, "ask"},
		{"no trigger", `{"cmd":"rm -rf /"}`, nil, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict(t, p, envelope("run", tc.args, tc.prior...))
			if v.Action != tc.want {
				t.Fatalf("verdict = %+v", v)
			}
			if tc.want != "none" && !strings.Contains(string(v.Metadata), `"provider":"local"`) {
				t.Fatalf("metadata = %s", v.Metadata)
			}
		})
	}
	out, err := p.Call(context.Background(), "describe", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d abi.Describe
	if json.Unmarshal(out, &d) != nil || d.Name != "judge" || !slices.Equal(d.Capabilities, []string{"sample"}) ||
		d.Input != abi.InputView || d.View != abi.ViewLayout2 || abi.CheckInput(d) != nil {
		t.Fatalf("describe = %s; want input view, layout 2", out)
	}
}

// TestWasmViewMatchesEnvelope runs the built plugin through the real runtime and the real
// sample host function (local provider, no cache) on the corpus (the example bundle's fixtures
// among it) with every set of earlier verdicts, in a shuffled order, each message as its
// layout-2 view on one instance and as JSON on another: the verdicts must be byte for byte the
// same, and so must what the provider was asked.
func TestWasmViewMatchesEnvelope(t *testing.T) {
	var prompts [2][]string
	mk := func(i int) *plugin.Plugin {
		j, err := llm.New(llm.Options{CacheSize: -1, Providers: []llm.ProviderConfig{{Kind: "local"}}})
		if err != nil {
			t.Fatal(err)
		}
		rec := samplerFunc(func(ctx context.Context, r abi.SampleRequest) (abi.SampleResponse, error) {
			b, _ := json.Marshal(r)
			prompts[i] = append(prompts[i], string(b))
			return j.Sample(ctx, r)
		})
		return load(t, []string{"sample"}, rec, `{"band":{"min":0.2,"max":0.35}}`)
	}
	pj, pv := mk(0), mk(1)
	ctx := context.Background()
	type pair struct{ env, view []byte }
	var msgs []pair
	for _, env := range corpus.Envelopes(t, 40) {
		for _, prior := range corpus.Priors() {
			if e, v := corpus.WithPrior(t, env, prior); v != nil {
				msgs = append(msgs, pair{e, v})
			}
		}
	}
	rand.New(rand.NewPCG(5, 6)).Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	for i, m := range msgs {
		want, werr := pj.Evaluate(ctx, m.env)
		got, gerr := pv.Evaluate(ctx, m.view)
		if string(got) != string(want) || werr != nil || gerr != nil {
			t.Fatalf("message %d (%.300s):\nview     %s (%v)\nenvelope %s (%v)", i, m.env, got, gerr, want, werr)
		}
	}
	if !slices.Equal(prompts[0], prompts[1]) || len(prompts[0]) < 100 {
		t.Fatalf("%d and %d sample requests, or they differ", len(prompts[0]), len(prompts[1]))
	}
}

type samplerFunc func(context.Context, abi.SampleRequest) (abi.SampleResponse, error)

func (f samplerFunc) Sample(ctx context.Context, r abi.SampleRequest) (abi.SampleResponse, error) {
	return f(ctx, r)
}

// TestWasmUnreadableViewFails: a view the plugin cannot read (malformed, or layout 1 without the
// earlier verdicts) fails the call, so the stage's failure mode decides; the judge is never
// skipped as if no stage had asked for it.
func TestWasmUnreadableViewFails(t *testing.T) {
	j, _ := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Kind: "local"}}})
	p := load(t, []string{"sample"}, j, `{}`)
	env := envelope("run", `{"cmd":"ls"}`)
	layout1, err := abi.AppendView(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	_, layout2 := corpus.WithPrior(t, env, []abi.Prior{sampleRule})
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"layout 1", layout1, "without earlier verdicts"},
		{"truncated", layout2[:len(layout2)-1], "bad view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.Evaluate(context.Background(), tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Evaluate = %s, %v; want an error saying %q", out, err, tc.want)
			}
		})
	}
	if v := verdict(t, p, layout2); v.Action != "allow" || v.Rule != "judge-sample" {
		t.Fatalf("after the failures: %+v", v)
	}
}

// TestJudgePluginOverHTTPProvider goes plugin → host function → judge → a local HTTP server
// speaking the OpenAI wire format, and back.
func TestJudgePluginOverHTTPProvider(t *testing.T) {
	var calls atomic.Int64
	var lastPrompt atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		lastPrompt.Store(string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"decision\":\"deny\",\"confidence\":0.97,\"reasons\":[\"deletes the home directory\"]}","refusal":null},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	j, err := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Name: "vllm", Kind: "openai", BaseURL: srv.URL + "/v1", Model: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, []string{"sample"}, j, `{}`)
	v := verdict(t, p, envelope("run", `{"cmd":"rm -rf ~"}`, sampleRule))
	if v.Action != "deny" || v.Score != 0.97 || !strings.Contains(v.Reason, "deletes the home directory") || calls.Load() != 1 {
		t.Fatalf("verdict = %+v, calls %d", v, calls.Load())
	}
	if pr, _ := lastPrompt.Load().(string); !strings.Contains(pr, "Only read-only commands are fine.") || !strings.Contains(pr, "rm -rf ~") {
		t.Fatalf("prompt lacks guidance or arguments: %s", pr)
	}
}

func TestJudgePluginFailsClosedWithoutCapability(t *testing.T) {
	j, _ := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Kind: "local"}}})
	p := load(t, nil, j, `{}`) // sample not granted
	v := verdict(t, p, envelope("run", `{"cmd":"ls"}`, sampleRule))
	if v.Action != "deny" || v.Rule != "judge-error" || !strings.Contains(v.Reason, "capability not granted") {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestJudgePluginFailsClosedOnGarbage(t *testing.T) {
	j, _ := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Kind: "local", Local: llm.LocalConfig{Raw: "I think it's fine!"}}}})
	p := load(t, []string{"sample"}, j, `{}`)
	v := verdict(t, p, envelope("run", `{"cmd":"ls"}`, sampleRule))
	if v.Action != "deny" || v.Rule != "judge-error" || !strings.Contains(v.Reason, "invalid answer") {
		t.Fatalf("verdict = %+v", v)
	}
}

// BenchmarkJudgePluginLocal is the judge's overhead: Wasm call, host function, prompt, local
// provider, strict parse, verdict. Cache off, so every call reaches the provider.
func BenchmarkJudgePluginLocal(b *testing.B) {
	benchJudge(b, envelope("run", `{"cmd":"ls -la /home/dev/project"}`, sampleRule))
}

// BenchmarkJudgePluginNoTrigger is the judge on a message no stage handed it (the common case
// in the example chain): the JSON envelope, then the same message as the layout-2 view.
func BenchmarkJudgePluginNoTrigger(b *testing.B) {
	prior := []abi.Prior{{Stage: "rules", Action: "allow", Rule: "allow-echo"}, {Stage: "injection", Action: "none"}, {Stage: "detector", Action: "none"}}
	env := envelope("run", `{"cmd":"ls -la /home/dev/project"}`)
	envJSON, view := corpus.WithPrior(b, env, prior)
	b.Run("json", func(b *testing.B) { benchJudge(b, envJSON) })
	b.Run("view", func(b *testing.B) { benchJudge(b, view) })
}

func benchJudge(b *testing.B, env []byte) {
	j, _ := llm.New(llm.Options{CacheSize: -1, Providers: []llm.ProviderConfig{{Kind: "local"}}})
	p := load(b, []string{"sample"}, j, `{}`)
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		t0 := time.Now()
		if _, err := p.Evaluate(ctx, env); err != nil {
			b.Fatal(err)
		}
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		b.ReportMetric(float64(lat[n/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[n*99/100].Microseconds()), "p99-µs")
	}
}
