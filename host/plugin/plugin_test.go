package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

func load(t *testing.T, rt *plugin.Runtime, mode string, timeout time.Duration) *plugin.Plugin {
	t.Helper()
	return loadPkg(t, rt, mode, timeout, misbehave)
}

// The test plugins of each convention: misbehave is built with the Go SDK (the direct
// convention); extismPDK with Extism's Go PDK alone, the compatibility path.
const (
	misbehave = "./host/internal/testenv/misbehave"
	extismPDK = "./host/internal/testenv/extismpdk"
)

// loadPkg loads the test plugin pkg (misbehave or extismPDK) in mode.
func loadPkg(t *testing.T, rt *plugin.Runtime, mode string, timeout time.Duration, pkg string) *plugin.Plugin {
	t.Helper()
	wasm, _ := testenv.ReadPlugin(t, pkg)
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name:          "mis-" + mode,
		Wasm:          wasm,
		Config:        map[string]string{"config": fmt.Sprintf(`{"mode":%q,"when_tool":"bad"}`, mode)},
		Timeout:       timeout,
		MaxPages:      512, // 32 MiB
		PoolSize:      2,
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func newRuntime(t *testing.T) *plugin.Runtime {
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

const (
	bad  = `{"abi":"1.0","phase":"request","method":"tools/call","tool":"bad"}`
	good = `{"abi":"1.0","phase":"request","method":"tools/call","tool":"good"}`
)

func TestFailuresAreClassifiedAndInstancesReplaced(t *testing.T) {
	rt := newRuntime(t)
	for _, tc := range []struct {
		mode, pkg, convention string
		want                  error
	}{
		{"trap", misbehave, "direct", plugin.ErrTrap},
		{"loop", misbehave, "direct", plugin.ErrTimeout},
		{"grow", misbehave, "direct", plugin.ErrTrap},
		{"error", misbehave, "direct", plugin.ErrPluginErr},
		{"trap", extismPDK, "extism", plugin.ErrTrap},
		{"loop", extismPDK, "extism", plugin.ErrTimeout},
		{"grow", extismPDK, "extism", plugin.ErrTrap},
		{"error", extismPDK, "extism", plugin.ErrPluginErr},
	} {
		t.Run(tc.convention+"/"+tc.mode, func(t *testing.T) {
			timeout := 200 * time.Millisecond
			if tc.mode == "grow" {
				timeout = 10 * time.Second // growing to the cap takes a while on a loaded machine
			}
			p := loadPkg(t, rt, tc.mode, timeout, tc.pkg)
			if got := p.Convention(); got != tc.convention {
				t.Fatalf("convention = %s, want %s", got, tc.convention)
			}
			_, err := p.Evaluate(context.Background(), []byte(bad))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			// The next call works, on a healthy (possibly replaced) instance, several times over.
			for i := range 3 {
				out, err := p.Evaluate(context.Background(), []byte(good))
				if err != nil || string(out) != `{"action":"none"}` {
					t.Fatalf("call %d after %s: %q, %v", i, tc.mode, out, err)
				}
			}
			if tc.want != plugin.ErrPluginErr && p.Stats().Replaced.Load() == 0 {
				t.Errorf("a %s instance was not replaced", tc.mode)
			}
		})
	}
}

// TestLoopStoppedAndNextCallServed: an untrusted plugin spinning forever is stopped at its
// timeout, its instance replaced, and a pool of one serves the next call.
func TestLoopStoppedAndNextCallServed(t *testing.T) {
	rt := newRuntime(t)
	wasm, _ := testenv.ReadPlugin(t, "./host/internal/testenv/misbehave")
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "loop", Wasm: wasm, Timeout: 50 * time.Millisecond, PoolSize: 1,
		Config:        map[string]string{"config": `{"mode":"loop","when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	for i := range 3 {
		if _, err := p.Evaluate(context.Background(), []byte(bad)); !errors.Is(err, plugin.ErrTimeout) {
			t.Fatalf("loop %d: err = %v, want ErrTimeout", i, err)
		}
		out, err := p.Evaluate(context.Background(), []byte(good))
		if err != nil || string(out) != `{"action":"none"}` {
			t.Fatalf("call after loop %d: %q %v", i, out, err)
		}
	}
	if got := p.Stats().Replaced.Load(); got != 3 {
		t.Fatalf("replaced %d instances, want 3", got)
	}
}

// TestCallerDeadlineStopsTheGuest: a caller's deadline earlier than the stage timeout stops an
// untrusted guest too.
func TestCallerDeadlineStopsTheGuest(t *testing.T) {
	rt := newRuntime(t)
	p := load(t, rt, "loop", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Evaluate(ctx, []byte(bad)); !errors.Is(err, plugin.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestHostFunctionsOnBothConventions(t *testing.T) {
	rt := newRuntime(t)
	for conv, pkg := range map[string]string{"direct": misbehave, "extism": extismPDK} {
		t.Run(conv, func(t *testing.T) {
			wasm, _ := testenv.ReadPlugin(t, pkg)
			store := hostfn.NewMemKV()
			p, err := rt.Load(context.Background(), plugin.Spec{
				Name: "kv", Wasm: wasm, PoolSize: 1,
				Config:        map[string]string{"config": `{"mode":"kv"}`},
				HostFunctions: hostfn.Build("kv", []string{hostfn.CapKV}, hostfn.Deps{KV: store}),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			for i := 1; i <= 3; i++ {
				out, err := p.Evaluate(context.Background(), []byte(good))
				want := fmt.Sprintf(`{"action":"none","reason":"count %d"}`, i)
				if err != nil || string(out) != want {
					t.Fatalf("call %d: %s %v, want %s", i, out, err, want)
				}
			}
		})
	}
}

// TestExtismPDKPluginDecides: a plugin built on Extism's PDK, not on a Palisade SDK, loads on
// the compatibility path and its verdict comes back as it wrote it.
func TestExtismPDKPluginDecides(t *testing.T) {
	p := loadPkg(t, newRuntime(t), "deny", time.Second, extismPDK)
	if got := p.Convention(); got != "extism" {
		t.Fatalf("convention = %s, want extism", got)
	}
	out, err := p.Evaluate(context.Background(), []byte(bad))
	if want := `{"action":"deny","rule":"extismpdk","reason":"extismpdk says deny"}`; err != nil || string(out) != want {
		t.Fatalf("evaluate: %s %v, want %s", out, err, want)
	}
	if out, err := p.Evaluate(context.Background(), []byte(good)); err != nil || string(out) != `{"action":"none"}` {
		t.Fatalf("another tool: %s %v", out, err)
	}
}

// wat assembles a WAT file with wabt's wat2wasm (installed by make setup-sdk).
func wat(t testing.TB, path string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("wat2wasm not installed (run make setup-sdk)")
		}
		t.Skip("wat2wasm not installed (make setup-sdk; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal)")
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	if msg, err := exec.Command("wat2wasm", path, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", path, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecursionWithoutLoopsIsStopped: the function-entry checks stop a guest that has no loop.
func TestRecursionWithoutLoopsIsStopped(t *testing.T) {
	rt := newRuntime(t)
	p, err := rt.Load(context.Background(), plugin.Spec{Name: "recurse", Wasm: wat(t, "testdata/recurse.wat"), Timeout: 50 * time.Millisecond, InitTimeout: 50 * time.Millisecond, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if _, err := p.Evaluate(context.Background(), []byte(good)); !errors.Is(err, plugin.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestPoolConcurrent(t *testing.T) {
	rt := newRuntime(t)
	p := load(t, rt, "deny", time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			in := good
			out, err := p.Evaluate(context.Background(), []byte(in))
			if err != nil || string(out) != `{"action":"none"}` {
				errs <- fmt.Errorf("%q %v", out, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := p.Stats().Instances.Load(); n > 2 {
		t.Errorf("pool grew to %d instances, cap 2", n)
	}
}

func TestCompilationCacheOnDisk(t *testing.T) {
	dir := t.TempDir()
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, rt, "deny", time.Second)
	p.Close(context.Background())
	entries, _ := os.ReadDir(dir)
	if len(entries) == 0 {
		t.Fatal("compilation cache dir is empty after a load")
	}
	// The instrumented module (untrusted, direct) is kept too, so the next process skips the rewrite.
	if entries, _ := os.ReadDir(filepath.Join(dir, "instrumented")); len(entries) != 1 {
		t.Fatalf("instrumented cache holds %d files, want 1", len(entries))
	}
	rt2, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	q := load(t, rt2, "deny", time.Second)
	if out, err := q.Evaluate(context.Background(), []byte(good)); err != nil || string(out) != `{"action":"none"}` {
		t.Fatalf("from the disk cache: %q %v", out, err)
	}
}

func TestUninterruptibleTimeoutAbandonsTheInstance(t *testing.T) {
	rt := newRuntime(t)
	wasm, _ := testenv.ReadPlugin(t, "./host/internal/testenv/misbehave")
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "slow", Wasm: wasm, Timeout: 100 * time.Millisecond, PoolSize: 1, Uninterruptible: true,
		Config:        map[string]string{"config": `{"mode":"slow","slow_ms":600,"when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	// The first call also starts the guest runtime, under the init timeout.
	if _, err := p.Evaluate(context.Background(), []byte(good)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Evaluate(context.Background(), []byte(bad)); !errors.Is(err, plugin.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	// The pool of one frees its slot once the abandoned call returns; the next call works.
	out, err := p.Evaluate(context.Background(), []byte(good))
	if err != nil || string(out) != `{"action":"none"}` {
		t.Fatalf("next call: %q %v", out, err)
	}
	if p.Stats().Replaced.Load() != 1 {
		t.Fatalf("replaced %d instances, want 1", p.Stats().Replaced.Load())
	}
}

// TestWarmStartsPart: Load starts Warm instances, and the rest of the pool starts only when
// calls overlap, never past PoolSize.
func TestWarmStartsPart(t *testing.T) {
	rt := newRuntime(t)
	wasm, _ := testenv.ReadPlugin(t, misbehave)
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "slow", Wasm: wasm, Timeout: 5 * time.Second, PoolSize: 3, Warm: 1,
		Config:        map[string]string{"config": `{"mode":"slow","slow_ms":300,"when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if n := p.Stats().Instances.Load(); n != 1 {
		t.Fatalf("%d instances after Load, want the 1 warm one", n)
	}
	// One call at a time needs no other instance.
	for range 3 {
		if _, err := p.Evaluate(context.Background(), []byte(good)); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Stats().Instances.Load(); n != 1 {
		t.Fatalf("%d instances after calls one at a time, want 1", n)
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := p.Evaluate(context.Background(), []byte(bad)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := p.Stats().Instances.Load(); n != 3 {
		t.Fatalf("%d instances after six overlapping slow calls, want the pool's 3", n)
	}
}

// TestRenewReplacesIdle: Renew closes the idle instances and starts as many fresh ones, so the
// pool serves from new instances with the same number of instances and free slots.
func TestRenewReplacesIdle(t *testing.T) {
	rt := newRuntime(t)
	wasm, _ := testenv.ReadPlugin(t, misbehave)
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "renew", Wasm: wasm, Timeout: 5 * time.Second, PoolSize: 2,
		Config:        map[string]string{"config": `{"mode":"slow","slow_ms":1,"when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if _, err := p.Evaluate(context.Background(), []byte(good)); err != nil {
		t.Fatal(err)
	}
	n, err := p.Renew(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Renew started %d instances (%v), want the pool's 2", n, err)
	}
	if n := p.Stats().Instances.Load(); n != 2 {
		t.Fatalf("%d instances after Renew, want 2", n)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := p.Evaluate(context.Background(), []byte(good)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := p.Stats().Instances.Load(); n != 2 {
		t.Fatalf("%d instances after overlapping calls, want the pool's 2 (no slot lost or doubled)", n)
	}
	if n := p.Trim(); n != 2 {
		t.Fatalf("Trim after Renew closed %d, want 2", n)
	}
}

// TestTrimClosesIdle: Trim closes the idle instances and frees their slots and linear memory;
// the next call starts an instance as a first call does.
func TestTrimClosesIdle(t *testing.T) {
	rt := newRuntime(t)
	wasm, _ := testenv.ReadPlugin(t, misbehave)
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "trim", Wasm: wasm, Timeout: 5 * time.Second, PoolSize: 2,
		Config:        map[string]string{"config": `{"mode":"slow","slow_ms":1,"when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if n := p.Trim(); n != 2 {
		t.Fatalf("Trim closed %d instances, want the pool's 2", n)
	}
	if n, b := p.Stats().Instances.Load(), p.Stats().LinearBytes.Load(); n != 0 || b != 0 {
		t.Fatalf("after Trim: %d instances, %d bytes of linear memory; want none", n, b)
	}
	if _, err := p.Evaluate(context.Background(), []byte(good)); err != nil {
		t.Fatal(err)
	}
	if n := p.Stats().Instances.Load(); n != 1 {
		t.Fatalf("%d instances after a call, want 1", n)
	}
	if n := p.Trim(); n != 1 {
		t.Fatalf("second Trim closed %d, want 1", n)
	}
}
