package main_test

// Host tests: each role of the combined module answers as its single plugin does, on the
// corpus's envelopes, as JSON and as the view, through the real runtime (host/plugin).

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/internal/wasmtest"
	"github.com/added060/palisade/sdk/go/abi"
)

// score is a stand-in model's answer for a text: a fixed number in [0, 1) from its hash.
func score(s string) float64 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return float64(h.Sum32()%1000) / 1000
}

// fakeModel answers infer with scores from score, so that the detector role decides
// differently across texts.
type fakeModel struct{}

func (fakeModel) Infer(_ context.Context, req abi.InferRequest) (abi.InferResponse, error) {
	resp := abi.InferResponse{Model: req.Model}
	for _, t := range req.Texts {
		s := score(t)
		label := "prompt_injection"
		if s > 0.8 {
			label = "sql_injection"
		}
		resp.Results = append(resp.Results, abi.InferResult{Label: label, Score: s,
			Scores: map[string]float64{"benign": 1 - s, label: s}})
	}
	return resp, nil
}

// fakeJudge answers sample with a decision from the request's hash.
type fakeJudge struct{}

func (fakeJudge) Sample(_ context.Context, req abi.SampleRequest) (abi.SampleResponse, error) {
	b, _ := json.Marshal(req)
	d := []string{"allow", "deny", "ask"}[int(score(string(b))*3)]
	return abi.SampleResponse{Decision: d, Confidence: 0.9, Reasons: []string{"fake"}, Provider: "fake"}, nil
}

// roles are the example bundle's stages: config, data keys and capabilities as
// examples/bundle/bundle.yaml gives them.
func roles(t testing.TB) map[string]struct {
	config string
	data   map[string]string
	caps   []string
} {
	return map[string]struct {
		config string
		data   map[string]string
		caps   []string
	}{
		"rules":     {`{}`, map[string]string{"rules": string(corpus.ExampleData(t, "rules.yaml"))}, nil},
		"injection": {`{"response_mode":"redact"}`, nil, nil},
		"detector":  {`{"model":"detector-v1","threshold":0.6,"kind_thresholds":{"text":0.7},"action":"deny"}`, nil, []string{hostfn.CapInfer}},
		"risk":      {`{"default_criticality":"MEDIUM"}`, map[string]string{"profiles": string(corpus.ExampleData(t, "profiles.yaml"))}, nil},
		"judge":     {`{"on_error":"deny"}`, nil, []string{hostfn.CapSample}},
	}
}

func load(t testing.TB, wasm []byte, name, config string, data map[string]string, caps []string) *plugin.Plugin {
	t.Helper()
	return loadPool(t, wasm, name, config, data, caps, 1)
}

// loadPool is load with a pool of size instances.
func loadPool(t testing.TB, wasm []byte, name, config string, data map[string]string, caps []string, size int) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	cfg := map[string]string{"config": config}
	for k, v := range data {
		cfg[k] = v
	}
	p, err := wasmtest.Runtime(t).Load(ctx, plugin.Spec{
		Name: name, Wasm: wasm, Config: cfg, Timeout: 5 * time.Second, MaxPages: 1024, PoolSize: size,
		HostFunctions: hostfn.Build(name, caps, hostfn.Deps{Inferer: fakeModel{}, Sampler: fakeJudge{}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

// withRole adds "role" to a JSON config object.
func withRole(config, role string) string {
	if config == "{}" {
		return `{"role":"` + role + `"}`
	}
	return `{"role":"` + role + `",` + strings.TrimPrefix(config, "{")
}

func TestRolesAnswerAsTheirPlugins(t *testing.T) {
	combined := wasmtest.Build(t, ".", "firstparty")
	ctx := context.Background()
	for role, r := range roles(t) {
		t.Run(role, func(t *testing.T) {
			single := load(t, wasmtest.Build(t, "../"+role, role), role, r.config, r.data, r.caps)
			both := load(t, combined, role, withRole(r.config, role), r.data, r.caps)
			want, werr := single.Call(ctx, "describe", nil)
			got, gerr := both.Call(ctx, "describe", nil)
			if werr != nil || gerr != nil || string(got) != string(want) {
				t.Fatalf("describe: %s (%v), single plugin %s (%v)", got, gerr, want, werr)
			}
			var d abi.Describe
			if err := json.Unmarshal(got, &d); err != nil {
				t.Fatal(err)
			}
			sameAnswers(t, inputs(t, d, 60), both, "combined", single, "single")
		})
	}
}

// A stage of the combined module whose config names no role, or an unknown one, fails to load,
// and the role key never reaches the stage's package (injection refuses unknown keys).
func TestRoleRequired(t *testing.T) {
	combined := wasmtest.Build(t, ".", "firstparty")
	for _, config := range []string{`{}`, `{"role":"nope"}`, `{"role":7}`} {
		p, err := wasmtest.Runtime(t).Load(context.Background(), plugin.Spec{Name: "x", Wasm: combined,
			Config: map[string]string{"config": config}, HostFunctions: hostfn.Build("x", nil, hostfn.Deps{})})
		if err == nil {
			p.Close(context.Background())
			t.Fatalf("config %s loaded", config)
		}
		if !strings.Contains(err.Error(), "config.role") {
			t.Errorf("config %s: %v", config, err)
		}
	}
	p := load(t, combined, "injection", `{"role":"injection","response_mode":"redact"}`, nil, nil)
	if _, err := p.Evaluate(context.Background(), []byte(`{"abi":"1.0","phase":"request","method":"tools/call","tool":"t","arguments":{"a":"b"}}`)); err != nil {
		t.Fatalf("injection role with its config: %v", err)
	}
}

// servedCall returns the i-th of a stream of served calls for a stage of the given view layout:
// tools/loadgen's request and response envelopes (corpus.Served) with the fields that change
// per call changed, as the host lays them out.
func servedCall(t testing.TB, layout int, response bool, i int) []byte {
	t.Helper()
	reqJSON, respJSON, prior := corpus.Served(t)
	var env abi.Envelope
	src := reqJSON
	if response {
		src = respJSON
	}
	if err := json.Unmarshal(src, &env); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	env.ID = fmt.Sprintf("01JLOADGEN%016X", uint64(i)*0x9E3779B97F4A7C15)
	env.Time = start.Add(time.Duration(i) * 1700 * time.Microsecond).Format(time.RFC3339Nano)
	env.RequestID = json.RawMessage(fmt.Sprint(i + 1))
	env.Session = fmt.Sprintf("SESSION%08X", i/16)
	env.Arguments = json.RawMessage(fmt.Sprintf(`{"message":"load %d"}`, i))
	if response {
		env.Result = json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"Echo: load %d"}]}`, i))
	}
	in, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if layout < abi.ViewLayout2 {
		prior = nil
	}
	return corpus.View(t, in, prior)
}

// maxGrowth is how far TestServedMemoryByRole lets an instance grow past its first call: at GC
// percent 25 the roles grow 1.25-1.5 MiB, at Go's default of 100 3.25-3.5 MiB.
const maxGrowth = 2 << 20

// Each role's instance, on a stream of served calls, stays within maxGrowth of where it stood
// after its first call (which builds the role's state): the guest's lower GC percent (main.go
// gcPercent) keeps the heap goal near what a role keeps live. At Go's default of 100 every
// role's instance grew 7.5 -> 10.75-11 MiB over these 20,000 calls.
func TestServedMemoryByRole(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 calls a role")
	}
	combined := wasmtest.Build(t, ".", "firstparty")
	ctx := context.Background()
	for role, r := range roles(t) {
		t.Run(role, func(t *testing.T) {
			p := load(t, combined, role, withRole(r.config, role), r.data, r.caps)
			out, err := p.Call(ctx, "describe", nil)
			if err != nil {
				t.Fatal(err)
			}
			var d abi.Describe
			if err := json.Unmarshal(out, &d); err != nil {
				t.Fatal(err)
			}
			response := len(d.Phases) > 1
			call := func(i int) {
				in := servedCall(t, d.View, response && i%2 == 1, i/2)
				if _, err := p.Evaluate(ctx, in); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			call(0)
			start := p.Stats().LinearBytes.Load()
			const calls = 20000
			for i := 1; i < calls; i++ {
				call(i)
			}
			end := p.Stats().LinearBytes.Load()
			t.Logf("%s: linear memory after the first call %.2f MiB, after %d calls %.2f MiB", role, float64(start)/(1<<20), calls, float64(end)/(1<<20))
			if end-start > maxGrowth {
				t.Errorf("linear memory grew %.2f MiB over %d served calls (%.2f -> %.2f MiB), want at most %.2f",
					float64(end-start)/(1<<20), calls, float64(start)/(1<<20), float64(end)/(1<<20), float64(maxGrowth)/(1<<20))
			}
		})
	}
}

// BenchmarkServedRole times each role's instance on the served stream of TestServedMemoryByRole,
// its garbage collections included: run it with -benchtime=20000x or more, so that a run spans
// several of the guest's GC cycles (at GC percent 25 one every few thousand calls).
func BenchmarkServedRole(b *testing.B) {
	combined := wasmtest.Build(b, ".", "firstparty")
	ctx := context.Background()
	for _, role := range []string{"rules", "injection", "detector", "risk", "judge"} {
		b.Run(role, func(b *testing.B) {
			r := roles(b)[role]
			p := load(b, combined, role, withRole(r.config, role), r.data, r.caps)
			var d abi.Describe
			out, err := p.Call(ctx, "describe", nil)
			if err != nil || json.Unmarshal(out, &d) != nil {
				b.Fatalf("describe: %s (%v)", out, err)
			}
			response := len(d.Phases) > 1
			const distinct = 256
			var ins [distinct][]byte
			for i := range ins {
				ins[i] = servedCall(b, d.View, response && i%2 == 1, i/2)
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := p.Evaluate(ctx, ins[i%distinct]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(p.Stats().LinearBytes.Load())/(1<<20), "linear-MiB")
		})
	}
}

// BenchmarkPacedChain times the roles as a gateway serves them at one call at a time: each
// role a pool of two instances, as the example bundle warms, called in turn on the served
// stream, one round a millisecond, so each call finds its instance as the previous round and
// the other roles left the caches. It reports each role's p50 and the round's. The pace is
// sleep (the thread idles between rounds, as a gateway's does at c=1), spin (it stays on the
// core, busy, touching nothing), or none (back to back).
func BenchmarkPacedChain(b *testing.B) {
	combined := wasmtest.Build(b, ".", "firstparty")
	ctx := context.Background()
	names := []string{"rules", "injection", "detector", "risk"}
	ps := make([]*plugin.Plugin, len(names))
	ins := make([][256][]byte, len(names))
	for k, role := range names {
		r := roles(b)[role]
		ps[k] = loadPool(b, combined, role, withRole(r.config, role), r.data, r.caps, 2)
		var d abi.Describe
		out, err := ps[k].Call(ctx, "describe", nil)
		if err != nil || json.Unmarshal(out, &d) != nil {
			b.Fatalf("describe: %s (%v)", out, err)
		}
		response := len(d.Phases) > 1
		for i := range ins[k] {
			ins[k][i] = servedCall(b, d.View, response && i%2 == 1, i/2)
		}
	}
	for _, pace := range []string{"sleep", "spin", "none"} {
		b.Run(pace, func(b *testing.B) {
			times := make([][]time.Duration, len(names)+1)
			for i := range b.N {
				switch pace {
				case "sleep":
					time.Sleep(time.Millisecond)
				case "spin":
					for t := time.Now(); time.Since(t) < time.Millisecond; {
					}
				}
				round := time.Now()
				for k, p := range ps {
					start := time.Now()
					if _, err := p.Evaluate(ctx, ins[k][i%256]); err != nil {
						b.Fatal(err)
					}
					times[k] = append(times[k], time.Since(start))
				}
				times[len(names)] = append(times[len(names)], time.Since(round))
			}
			b.StopTimer()
			for k, ts := range times {
				slices.Sort(ts)
				name := "round"
				if k < len(names) {
					name = names[k]
				}
				b.ReportMetric(float64(ts[len(ts)/2].Microseconds()), name+"-p50-µs")
			}
		})
	}
}

// BenchmarkInjectionLongText times the injection role's instance on one long message: npm-extra's
// Fastify ecosystem list (a 20 KB message of links, issue 26) and LinksList texts of 1-40 KiB
// of the same shape, and tool outputs of 16-256 KiB built from calib records (corpus.LongText),
// on a warm instance (each text called once before the timer). It reports
// ns per KiB, to compare with detect's BenchmarkScanLinksLong natively.
func BenchmarkInjectionLongText(b *testing.B) {
	combined := wasmtest.Build(b, ".", "firstparty")
	ctx := context.Background()
	r := roles(b)["injection"]
	p := load(b, combined, "injection", withRole(r.config, "injection"), r.data, r.caps)
	call := func(tool string, args json.RawMessage) []byte {
		env := abi.Envelope{ABI: abi.Version, ID: "bench", Phase: abi.PhaseRequest, Method: "tools/call",
			Transport: "mcp", Server: "slack", Tool: tool, Arguments: args}
		in, err := json.Marshal(env)
		if err != nil {
			b.Fatal(err)
		}
		return corpus.View(b, in, nil)
	}
	tool, args, text := corpus.Heldout(b, "npm-extra", "Ecosystem.md:183")
	cases := []struct {
		name string
		in   []byte
		size int
	}{{"ecosystem", call(tool, args), len(text)}}
	for _, kb := range []int{1, 5, 10, 20, 40} {
		a, _ := json.Marshal(map[string]string{"channel": "eng", "text": corpus.LinksList(kb << 10)})
		cases = append(cases, struct {
			name string
			in   []byte
			size int
		}{fmt.Sprintf("links/%dKiB", kb), call("post_message", a), kb << 10})
	}
	// Long tool outputs of real records (issue 26 class 6, det57): a fetched page or a file
	// read of 16-256 KiB, in the response phase, must stay well inside the stage's 1 s.
	for _, o := range []struct{ name, set, kind string }{
		{"pydoc", "pydoc-extra", "doc_output"}, {"code", "code-extra", "code_output"}, {"prose", "prose-extra", "prose"},
	} {
		for _, kb := range []int{16, 64, 128, 256} {
			res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": corpus.LongText(b, o.set, o.kind, kb<<10)}}})
			env := abi.Envelope{ABI: abi.Version, ID: "bench", Phase: abi.PhaseResponse, Method: "tools/call",
				Transport: "mcp", Server: "fetch", Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com/docs/page"}`), Result: res}
			in, err := json.Marshal(env)
			if err != nil {
				b.Fatal(err)
			}
			cases = append(cases, struct {
				name string
				in   []byte
				size int
			}{fmt.Sprintf("%s/%dKiB", o.name, kb), corpus.View(b, in, nil), kb << 10})
		}
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if _, err := p.Evaluate(ctx, c.in); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.Evaluate(ctx, c.in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(c.size)/1024), "ns/KiB")
		})
	}
}
