package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

// TestStagesShareOneModule: stages that run the same module share one compiled module, and each
// keeps its own config, host functions and capabilities: a stage not granted kv is refused where
// its neighbour on the same module counts, and each granted stage counts in its own namespace.
func TestStagesShareOneModule(t *testing.T) {
	rt := newRuntime(t)
	wasm, _ := testenv.ReadPlugin(t, misbehave)
	store := hostfn.NewMemKV()
	ctx := context.Background()
	mk := func(name, mode string, caps []string) *plugin.Plugin {
		t.Helper()
		p, err := rt.Load(ctx, plugin.Spec{
			Name: name, Wasm: wasm, PoolSize: 1,
			Config:        map[string]string{"config": `{"mode":"` + mode + `"}`},
			HostFunctions: hostfn.Build(name, caps, hostfn.Deps{KV: store}),
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	granted := mk("granted", "kv", []string{hostfn.CapKV})
	refused := mk("refused", "kv", nil)
	other := mk("other", "kv", []string{hostfn.CapKV})
	deny := mk("deny", "deny", nil)
	for _, p := range []*plugin.Plugin{refused, other, deny} {
		if !plugin.SharesModule(granted, p) {
			t.Fatalf("stage %s does not share the module of stage granted", p.Name())
		}
	}
	call := func(p *plugin.Plugin) (string, error) {
		out, err := p.Evaluate(ctx, []byte(good))
		return string(out), err
	}
	for i, want := range []string{"count 1", "count 2"} {
		if out, err := call(granted); err != nil || !strings.Contains(out, want) {
			t.Fatalf("granted call %d: %s %v, want %s", i, out, err, want)
		}
	}
	if out, err := call(refused); err == nil || !strings.Contains(err.Error(), "capability not granted: kv") {
		t.Fatalf("a stage without kv called it: %s %v", out, err)
	}
	if out, err := call(other); err != nil || !strings.Contains(out, "count 1") {
		t.Fatalf("a second granted stage's first call: %s %v, want its own count 1", out, err)
	}
	if out, err := call(deny); err != nil || !strings.Contains(out, `"deny"`) {
		t.Fatalf("a stage's own config was not used: %s %v", out, err)
	}
	// The module outlives any one stage: closing stages leaves the others serving.
	granted.Close(ctx)
	refused.Close(ctx)
	if out, err := call(other); err != nil || !strings.Contains(out, "count 2") {
		t.Fatalf("after closing two stages: %s %v", out, err)
	}
	other.Close(ctx)
	deny.Close(ctx)
	again := mk("again", "deny", nil)
	defer again.Close(ctx)
	if out, err := call(again); err != nil || !strings.Contains(out, `"deny"`) {
		t.Fatalf("a stage loaded after every sharer closed: %s %v", out, err)
	}
}

// TestMemoryCapPerStage: two stages on one module keep their own memory caps, whichever loads
// first. testdata/grow_direct.wat grows a page a call and traps once memory.grow fails.
func TestMemoryCapPerStage(t *testing.T) {
	wasm := wat(t, "testdata/grow_direct.wat")
	for _, smallFirst := range []bool{true, false} {
		rt := newRuntime(t)
		ctx := context.Background()
		mk := func(name string, pages uint32) *plugin.Plugin {
			p, err := rt.Load(ctx, plugin.Spec{Name: name, Wasm: wasm, PoolSize: 1, MaxPages: pages, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(ctx) })
			return p
		}
		var small, big *plugin.Plugin
		if smallFirst {
			small, big = mk("small", 2), mk("big", 64)
		} else {
			big, small = mk("big", 64), mk("small", 2)
		}
		if !plugin.SharesModule(small, big) {
			t.Fatal("the stages do not share their module")
		}
		// The instance starts at 1 page: the first call grows it to the small cap, the second
		// finds memory.grow refused.
		if _, err := small.Evaluate(ctx, []byte("x")); err != nil {
			t.Fatalf("small stage, first call: %v", err)
		}
		if _, err := small.Evaluate(ctx, []byte("x")); !errors.Is(err, plugin.ErrTrap) {
			t.Fatalf("small stage grew past its 2-page cap: %v", err)
		}
		for i := range 20 {
			if _, err := big.Evaluate(ctx, []byte("x")); err != nil {
				t.Fatalf("big stage, call %d: the small stage's cap applied to it: %v", i, err)
			}
		}
		if got := big.Stats().LinearBytes.Load(); got != 21<<16 {
			t.Errorf("big stage holds %d bytes, want 21 pages", got)
		}
		if r := big.Stats().Retired.Load(); r != 0 {
			t.Errorf("big stage retired %d instances under its own cap", r)
		}
	}
}

// A module whose memory starts above a stage's cap does not load for that stage, and loads for
// a stage whose cap holds it.
func TestMemoryCapBelowTheModulesMinimum(t *testing.T) {
	wasm := watText(t, `(module
  (memory (export "memory") 4)
  (func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "evaluate") (param i32) (result i64) (i64.const 0)))`)
	rt := newRuntime(t)
	ctx := context.Background()
	ok, err := rt.Load(ctx, plugin.Spec{Name: "roomy", Wasm: wasm, PoolSize: 1, MaxPages: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer ok.Close(ctx)
	if p, err := rt.Load(ctx, plugin.Spec{Name: "tight", Wasm: wasm, PoolSize: 1, MaxPages: 2}); err == nil {
		p.Close(ctx)
		t.Fatal("a stage capped under the module's initial memory loaded")
	} else if !strings.Contains(err.Error(), "over the stage's cap") {
		t.Fatalf("unexpected error: %v", err)
	}
}
