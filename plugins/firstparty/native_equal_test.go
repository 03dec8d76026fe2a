package main_test

// The host's native path (host/firstparty) against the module: each role, run as the host's
// own Go code, answers every input byte for byte as the same role in the Wasm module does.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/internal/wasmtest"
	"github.com/added060/palisade/sdk/go/abi"
)

// loadNative loads a role of the combined module in a runtime that runs that module natively.
func loadNative(t testing.TB, combined []byte, role string, size int) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{Native: []plugin.Native{firstparty.Module(sha256.Sum256(combined))}})
	if err != nil {
		t.Fatal(err)
	}
	r := roles(t)[role]
	cfg := map[string]string{"config": withRole(r.config, role)}
	for k, v := range r.data {
		cfg[k] = v
	}
	p, err := rt.Load(ctx, plugin.Spec{Name: role, Wasm: combined, Config: cfg, Timeout: 5 * time.Second, PoolSize: size,
		HostFunctions: hostfn.Build(role, r.caps, hostfn.Deps{Inferer: fakeModel{}, Sampler: fakeJudge{}})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	if c := p.Convention(); c != "native" {
		t.Fatalf("%s: convention %s, want native", role, c)
	}
	return p
}

// inputs are the corpus's envelopes (every kind of message, requests and responses), as JSON
// and as the view a stage of layout d.View gets, and the served stream.
func inputs(t *testing.T, d abi.Describe, every int) [][]byte {
	priors := [][]abi.Prior{nil}
	if d.View >= abi.ViewLayout2 {
		priors = corpus.Priors()
	}
	var out [][]byte
	for i, env := range corpus.Envelopes(t, every) {
		prior := priors[i%len(priors)]
		envJSON, view := corpus.WithPrior(t, env, prior)
		out = append(out, envJSON)
		if view != nil {
			if prior == nil {
				view = corpus.View(t, env, nil)
			}
			out = append(out, view)
		}
	}
	for i := range 64 {
		out = append(out, servedCall(t, d.View, len(d.Phases) > 1 && i%2 == 1, i/2))
	}
	return out
}

func TestNativeAnswersAsTheModule(t *testing.T) {
	combined := wasmtest.Build(t, ".", "firstparty")
	ctx := context.Background()
	for role, r := range roles(t) {
		t.Run(role, func(t *testing.T) {
			module := load(t, combined, role, withRole(r.config, role), r.data, r.caps)
			native := loadNative(t, combined, role, 1)
			want, werr := module.Call(ctx, "describe", nil)
			got, gerr := native.Call(ctx, "describe", nil)
			if werr != nil || gerr != nil || string(got) != string(want) {
				t.Fatalf("describe: native %s (%v), module %s (%v)", got, gerr, want, werr)
			}
			var d abi.Describe
			if err := json.Unmarshal(got, &d); err != nil {
				t.Fatal(err)
			}
			sameAnswers(t, inputs(t, d, 20), native, "native", module, "module")
		})
	}
}

// sameAnswers evaluates every input on a and on b and fails at the first answer (or error)
// that differs; the inputs must draw at least two different actions.
func sameAnswers(t *testing.T, ins [][]byte, a *plugin.Plugin, aName string, b *plugin.Plugin, bName string) {
	t.Helper()
	ctx := context.Background()
	decided := map[string]int{}
	for i, in := range ins {
		want, werr := b.Evaluate(ctx, in)
		got, gerr := a.Evaluate(ctx, in)
		if string(got) != string(want) || (werr == nil) != (gerr == nil) {
			t.Fatalf("input %d (%.300q):\n%s %s (%v)\n%s %s (%v)", i, in, aName, got, gerr, bName, want, werr)
		}
		var v abi.Verdict
		if json.Unmarshal(got, &v) == nil {
			decided[string(v.Action)]++
		}
	}
	if len(decided) < 2 {
		t.Errorf("%d inputs all decided %v: the comparison shows nothing", len(ins), decided)
	}
	t.Logf("%d inputs, verdicts %v", len(ins), decided)
}

// The roles' packages run natively on many goroutines at once (each instance one call at a
// time, but package state is shared by every instance in the process, unlike in Wasm, where
// each instance has its own): every concurrent answer is the one the same input gets alone.
// Run with -race (the Makefile's test-core does).
func TestNativeRolesConcurrent(t *testing.T) {
	combined := wasmtest.Build(t, ".", "firstparty")
	ctx := context.Background()
	for role := range roles(t) {
		t.Run(role, func(t *testing.T) {
			p := loadNative(t, combined, role, 4)
			out, err := p.Call(ctx, "describe", nil)
			var d abi.Describe
			if err != nil || json.Unmarshal(out, &d) != nil {
				t.Fatalf("describe: %s (%v)", out, err)
			}
			ins := inputs(t, d, 60)
			want := make([]string, len(ins))
			for i, in := range ins {
				b, err := p.Evaluate(ctx, in)
				want[i] = string(b) + errString(err)
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for k := range len(ins) {
						i := (k*7 + g*13) % len(ins)
						b, err := p.Evaluate(ctx, ins[i])
						if got := string(b) + errString(err); got != want[i] {
							t.Errorf("input %d on goroutine %d: %s, alone %s", i, g, got, want[i])
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " error"
}
