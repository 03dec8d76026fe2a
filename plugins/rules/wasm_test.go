package main_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/internal/wasmtest"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestWasmViewMatchesEnvelope runs the built rules plugin through the real runtime with the
// example bundle's rules on the example fixtures and a sample of the corpus, in a shuffled
// order, each message as its view on one instance and as JSON on another: the verdicts must be
// byte for byte the same (the engine cache is per instance, the input buffer reused).
func TestWasmViewMatchesEnvelope(t *testing.T) {
	raw, err := os.ReadFile("../../examples/bundle/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	rules, _ := json.Marshal(doc)
	wasm := wasmtest.Build(t, "./", "rules")
	load := func() *plugin.Plugin {
		p, err := wasmtest.Runtime(t).Load(context.Background(), plugin.Spec{Name: "rules", Wasm: wasm, PoolSize: 1,
			Config: map[string]string{"config": "{}", "rules": string(rules)}, HostFunctions: hostfn.Build("rules", nil, hostfn.Deps{})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close(context.Background()) })
		return p
	}
	pj, pv := load(), load()
	envs := corpus.Envelopes(t, 20)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		rng.Shuffle(len(envs), func(i, j int) { envs[i], envs[j] = envs[j], envs[i] })
		for i, env := range envs {
			view, err := abi.AppendView(nil, env)
			if err != nil {
				t.Fatal(err)
			}
			want, werr := pj.Evaluate(context.Background(), env)
			got, gerr := pv.Evaluate(context.Background(), view)
			if string(got) != string(want) || (werr == nil) != (gerr == nil) {
				t.Fatalf("round %d envelope %d (%.300s):\nview     %s (%v)\nenvelope %s (%v)", round, i, env, got, gerr, want, werr)
			}
		}
	}
}
