package main_test

// Host tests: build the plugin for wasip1 and run it through the real runtime (host/plugin,
// the direct convention on wazero) the gateway uses.

import (
	"context"
	"encoding/json"
	"math/rand/v2"
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

const testProfiles = `{"tools":{"transfer_funds":{"criticality":"HIGH","fallback":"draft_transfer"},"read_*":{"criticality":"LOW"}}}`

func runtime(t testing.TB) *plugin.Runtime { return wasmtest.Runtime(t) }

func buildWasm(t testing.TB) []byte { return wasmtest.Build(t, ".", "risk") }

func load(t testing.TB, config string) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	rt := runtime(t)
	p, err := rt.Load(ctx, plugin.Spec{
		Name:          "risk",
		Wasm:          buildWasm(t),
		Config:        map[string]string{"config": config, "profiles": testProfiles},
		Timeout:       5 * time.Second,
		HostFunctions: hostfn.Build("risk", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

func envelope(tool string, prior ...abi.Prior) []byte {
	b, _ := json.Marshal(abi.Envelope{ABI: "1.0", ID: "01TEST", Phase: "request", Method: "tools/call", Tool: tool, Arguments: json.RawMessage(`{"amount":10}`), Prior: prior})
	return b
}

func TestRiskPluginInWasm(t *testing.T) {
	p := load(t, `{}`)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		env      []byte
		action   string
		token    bool
		fallback string
	}{
		{"low risk high tool", envelope("transfer_funds", abi.Prior{Stage: "injection", Action: "none", Score: 0.05}), "allow", true, ""},
		{"review", envelope("transfer_funds", abi.Prior{Stage: "injection", Action: "none", Score: 0.3}), "ask", false, ""},
		{"deny with fallback", envelope("transfer_funds", abi.Prior{Stage: "judge", Action: "deny", Score: 0.9}), "deny", false, "draft_transfer"},
		{"low tool", envelope("read_file", abi.Prior{Stage: "detector", Action: "deny", Score: 1}), "allow", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.Evaluate(ctx, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			var v abi.Verdict
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("verdict %s: %v", out, err)
			}
			if v.Action != tc.action || v.RequireToken != tc.token || v.Fallback != tc.fallback || len(v.Metadata) == 0 {
				t.Fatalf("verdict = %s", out)
			}
		})
	}
	out, err := p.Call(ctx, "describe", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d abi.Describe
	if err := json.Unmarshal(out, &d); err != nil || d.Name != "risk" || d.ABI != abi.Version || !slices.Equal(d.Phases, []string{"request"}) ||
		d.Input != abi.InputView || d.View != abi.ViewLayout2 || abi.CheckInput(d) != nil {
		t.Fatalf("describe = %s (%v); want input view, layout 2", out, err)
	}
}

// TestWasmViewMatchesEnvelope runs the built plugin through the real runtime on the corpus (the
// example bundle's fixtures among it) with every set of earlier verdicts, in a shuffled order,
// each message as its layout-2 view on one instance and as JSON on another: the verdicts must be
// byte for byte the same.
func TestWasmViewMatchesEnvelope(t *testing.T) {
	pj, pv := load(t, `{"envelope_signals":true}`), load(t, `{"envelope_signals":true}`)
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
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	for i, m := range msgs {
		want, werr := pj.Evaluate(ctx, m.env)
		got, gerr := pv.Evaluate(ctx, m.view)
		if string(got) != string(want) || werr != nil || gerr != nil {
			t.Fatalf("message %d (%.300s):\nview     %s (%v)\nenvelope %s (%v)", i, m.env, got, gerr, want, werr)
		}
	}
}

// TestWasmUnreadableViewFails: a view the plugin cannot read (malformed, or layout 1 without the
// earlier verdicts) fails the call, so the stage's failure mode decides; nothing is scored as
// clean.
func TestWasmUnreadableViewFails(t *testing.T) {
	p := load(t, `{}`)
	env := envelope("transfer_funds")
	layout1, err := abi.AppendView(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	_, layout2 := corpus.WithPrior(t, env, []abi.Prior{{Stage: "injection", Action: "none", Score: 0.05}})
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"layout 1", layout1, "without earlier verdicts"},
		{"truncated", layout2[:len(layout2)-1], "bad view"},
		{"version 9", append([]byte(abi.ViewMagic+"\x09"), layout2[5:]...), "layout version 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.Evaluate(context.Background(), tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Evaluate = %s, %v; want an error saying %q", out, err, tc.want)
			}
		})
	}
	// The instance still answers (the buffer it read is reused by the next call).
	if out, err := p.Evaluate(context.Background(), layout2); err != nil || !strings.Contains(string(out), `"allow"`) {
		t.Fatalf("after the failures: %s, %v", out, err)
	}
}

func TestRiskPluginBadConfigFails(t *testing.T) {
	p := load(t, `{"levels":{"medium":0.9,"high":0.1}}`)
	if _, err := p.Evaluate(context.Background(), envelope("transfer_funds")); err == nil {
		t.Fatal("bad config did not fail the stage")
	}
}

func BenchmarkRiskPluginWasm(b *testing.B) {
	env := envelope("transfer_funds", abi.Prior{Stage: "injection", Action: "none", Score: 0.1}, abi.Prior{Stage: "detector", Action: "none", Score: 0.2})
	benchRisk(b, env)
}

// BenchmarkRiskPluginWasmView is BenchmarkRiskPluginWasm's message as the layout-2 view.
func BenchmarkRiskPluginWasmView(b *testing.B) {
	_, view := corpus.WithPrior(b, envelope("transfer_funds"), []abi.Prior{{Stage: "injection", Action: "none", Score: 0.1}, {Stage: "detector", Action: "none", Score: 0.2}})
	benchRisk(b, view)
}

func benchRisk(b *testing.B, env []byte) {
	p := load(b, `{}`)
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
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

// BenchmarkRiskPluginDescribe is the floor: one host call into the same module that does no
// scoring (describe), to separate the runtime's per-call cost from the plugin's work.
func BenchmarkRiskPluginDescribe(b *testing.B) {
	p := load(b, `{}`)
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Call(ctx, "describe", nil); err != nil {
			b.Fatal(err)
		}
	}
}
