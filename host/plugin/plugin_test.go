package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

func load(t *testing.T, rt *plugin.Runtime, mode string, timeout time.Duration) *plugin.Plugin {
	t.Helper()
	wasm, _ := testenv.ReadPlugin(t, "./host/internal/testenv/misbehave")
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
		mode string
		want error
	}{
		{"trap", plugin.ErrTrap},
		{"loop", plugin.ErrTimeout},
		{"grow", plugin.ErrTrap},
		{"error", plugin.ErrPluginErr},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p := load(t, rt, tc.mode, 200*time.Millisecond)
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
