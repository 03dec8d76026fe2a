package examples_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/examples"
	"github.com/added060/palisade/host/conformance"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

type example = examples.Example

var all = examples.All

// requireToolchains is set by `make test-sdk` so a missing compiler fails instead of skipping.
var requireToolchains = os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1"

var (
	buildMu sync.Mutex
	built   = map[string][]byte{}
)

// build runs `make build` in the example's folder, as its README says, once per test binary.
func build(tb testing.TB, ex example) []byte {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := built[ex.Lang]; ok {
		return b
	}
	// PALISADE_EXAMPLES_WASM names a folder of prebuilt LANG.wasm files (make examples-sdk writes
	// them): benchmarks on a machine without the toolchains use it.
	if dir := os.Getenv("PALISADE_EXAMPLES_WASM"); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, ex.Lang+".wasm"))
		if err != nil {
			tb.Fatal(err)
		}
		built[ex.Lang] = b
		return b
	}
	if m := ex.Missing(); len(m) > 0 {
		if requireToolchains {
			tb.Fatalf("%s: %v not installed (run make setup-sdk)", ex.Lang, m)
		}
		tb.Skipf("%s: %v not installed (make setup-sdk installs them; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal)", ex.Lang, m)
	}
	b, err := ex.Build(context.Background(), "..", outDir(tb))
	if err != nil {
		tb.Fatal(err)
	}
	built[ex.Lang] = b
	return b
}

func outDir(tb testing.TB) string {
	dir := os.Getenv("PALISADE_BUILD")
	if dir == "" {
		dir = filepath.Join("..", "build")
	}
	dir, _ = filepath.Abs(filepath.Join(dir, "examples"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func config(tb testing.TB, ex example) map[string]string {
	c, err := ex.Config("..")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func newRuntime(tb testing.TB) *plugin.Runtime {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// TestExamples loads every example through the real host runtime and runs the conformance
// checks and the example's fixtures: exactly what `palisade plugin test` does.
func TestExamples(t *testing.T) {
	rt := newRuntime(t)
	for _, ex := range all {
		t.Run(ex.Lang, func(t *testing.T) {
			wasm := build(t, ex)
			rep, err := conformance.Check(context.Background(), rt, wasm, conformance.Options{
				Fixtures: filepath.Join(ex.Lang, "testdata", "fixtures"),
				Config:   config(t, ex),
			})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			rep.WriteText(&sb)
			if !rep.Passed() {
				t.Errorf("conformance failed:\n%s", sb.String())
			}
			if len(rep.Fixtures) < 3 {
				t.Errorf("only %d fixtures ran; each example needs at least 3", len(rep.Fixtures))
			}
			if rep.Describe == nil || rep.Describe.Name != ex.Name {
				t.Errorf("describe = %+v, want name %q", rep.Describe, ex.Name)
			}
			t.Log("\n" + sb.String())
		})
	}
}

// TestRateLimitWindow drives the AssemblyScript rate limiter through the real runtime (on the
// direct convention) and the real kv host function (host/hostfn over an in-memory store with a
// settable clock): the limit holds per tool and per session, and a new window starts once the
// old one expires.
func TestRateLimitWindow(t *testing.T) {
	ex := find(t, "assemblyscript")
	wasm := build(t, ex)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := hostfn.NewMemKV()
	store.Now = func() time.Time { return now }
	p, err := newRuntime(t).Load(ctx, plugin.Spec{
		Name:          "ratelimit",
		Wasm:          wasm,
		Config:        map[string]string{"config": `{"limit":2,"window_ms":1000,"per_session":true}`},
		HostFunctions: hostfn.Build("ratelimit", []string{hostfn.CapKV}, hostfn.Deps{KV: store}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if c := p.Convention(); c != "direct" {
		t.Errorf("convention = %s, want direct (the AssemblyScript SDK exports palisade_alloc)", c)
	}
	call := func(session string) string {
		t.Helper()
		env := fmt.Sprintf(`{"abi":"1.0","id":"x","phase":"request","method":"tools/call","session":%q,"tool":"deploy","arguments":{}}`, session)
		out, err := p.Evaluate(ctx, []byte(env))
		if err != nil {
			t.Fatal(err)
		}
		var v abi.Verdict
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		return v.Action
	}
	for i, tc := range []struct {
		session string
		advance time.Duration
		want    string
	}{
		{"s1", 0, "none"}, {"s1", 0, "none"}, {"s1", 0, "deny"}, // third call in the window
		{"s2", 0, "none"},                       // another session has its own window
		{"s1", 1001 * time.Millisecond, "none"}, // the window expired
	} {
		now = now.Add(tc.advance)
		if got := call(tc.session); got != tc.want {
			t.Errorf("call %d (%s): %s, want %s", i, tc.session, got, tc.want)
		}
	}

	// Without the kv capability the plugin fails closed: an error, not an allow.
	q, err := newRuntime(t).Load(ctx, plugin.Spec{
		Name: "ratelimit-nokv", Wasm: wasm,
		HostFunctions: hostfn.Build("ratelimit-nokv", nil, hostfn.Deps{KV: store}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	_, err = q.Evaluate(ctx, []byte(`{"abi":"1.0","id":"x","phase":"request","method":"tools/call","tool":"deploy"}`))
	if !errors.Is(err, plugin.ErrPluginErr) || !strings.Contains(err.Error(), "capability not granted") {
		t.Errorf("without kv: err = %v, want a plugin error naming the capability", err)
	}
}

func find(t *testing.T, lang string) example {
	for _, ex := range all {
		if ex.Lang == lang {
			return ex
		}
	}
	t.Fatalf("no example %q", lang)
	return example{}
}
