package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/plugin"
)

// hangLimit is how long a test waits before it calls a call hung: generous, so a loaded machine
// never trips it, and far below the seconds (or forever) that a missed stop costs.
const hangLimit = 60 * time.Second

// within runs f and fails the test if it has not returned after hangLimit.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(hangLimit):
		t.Fatalf("%s: still running after %s", what, hangLimit)
		panic("unreachable")
	}
}

// runawayHostFunctions are the host functions runaway_*.wat import: tick returns at once, block
// waits until its call's context ends (as a slow LLM sample would).
func runawayHostFunctions() []plugin.HostFunc {
	return []plugin.HostFunc{
		{Name: "tick", Call: func(ctx context.Context, req []byte) []byte { return nil }},
		{Name: "block", Call: func(ctx context.Context, req []byte) []byte {
			select {
			case <-ctx.Done():
			case <-time.After(hangLimit):
			}
			return nil
		}},
	}
}

// TestRunawayIsStopped: on every convention, each way a guest can run away (a call-free loop,
// unbounded and exponential recursion, a loop calling a host function, a host function
// blocking past the deadline) ends in ErrTimeout or ErrTrap, and the plugin serves afterwards
// on a replaced instance.
func TestRunawayIsStopped(t *testing.T) {
	rt := newRuntime(t)
	for _, conv := range []string{"direct", "extism"} {
		wasm := wat(t, "testdata/runaway_"+conv+".wat")
		for _, mode := range []string{"loop", "recursion", "fib", "tick", "block"} {
			t.Run(conv+"/"+mode, func(t *testing.T) {
				p, err := rt.Load(context.Background(), plugin.Spec{
					Name: "runaway", Wasm: wasm, Timeout: 50 * time.Millisecond, InitTimeout: 50 * time.Millisecond, PoolSize: 1,
					HostFunctions: runawayHostFunctions(),
				})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				if got := p.Convention(); got != conv {
					t.Fatalf("convention = %s, want %s", got, conv)
				}
				for i := range 2 {
					err := within(t, mode, func() error {
						_, err := p.Evaluate(context.Background(), []byte(mode))
						return err
					})
					if !errors.Is(err, plugin.ErrTimeout) && !errors.Is(err, plugin.ErrTrap) {
						t.Fatalf("%s %d: err = %v, want ErrTimeout or ErrTrap", mode, i, err)
					}
					out, err := p.Evaluate(context.Background(), []byte("good"))
					if err != nil || string(out) != `{"action":"none"}` {
						t.Fatalf("call after %s %d: %q %v", mode, i, out, err)
					}
				}
				if got := p.Stats().Replaced.Load(); got != 2 {
					t.Errorf("replaced %d instances, want 2", got)
				}
			})
		}
	}
}

// startWAT is a plugin of convention conv whose start function, which runs inside
// instantiation, loops forever or, when bounded, for 2^31 iterations (a second or more).
func startWAT(conv string, bounded bool) string {
	body := "(loop $l (br $l))"
	if bounded {
		body = "(local $i i32) (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) " +
			"(br_if $l (i32.ne (local.get $i) (i32.const 0x80000000))))"
	}
	exports := `(func (export "evaluate") (result i32) (i32.const 0))`
	if conv == "direct" {
		exports = `(func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "evaluate") (param i32) (result i64) (i64.const 0))`
	}
	return "(module (memory (export \"memory\") 1) (func $spin " + body + ") (start $spin)\n  " + exports + ")"
}

// TestLoopingStartIsStopped: a start function that does not return runs inside instantiation;
// Load fails with ErrTimeout instead of hanging, on every convention, trusted or not, and the
// runtime loads and serves other plugins afterwards. An untrusted start is stopped; a trusted
// one is abandoned, and keeps running (and holding up Go's stop-the-world pauses) until it
// returns, so the trusted rows use a start that returns after a second or so.
func TestLoopingStartIsStopped(t *testing.T) {
	rt := newRuntime(t)
	for _, conv := range []string{"direct", "extism"} {
		for _, trusted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/trusted=%v", conv, trusted), func(t *testing.T) {
				wasm := watText(t, startWAT(conv, trusted))
				err := within(t, "Load", func() error {
					p, err := rt.Load(context.Background(), plugin.Spec{
						Name: "start", Wasm: wasm, Timeout: 50 * time.Millisecond,
						InitTimeout: 100 * time.Millisecond, PoolSize: 2, Uninterruptible: trusted,
					})
					if err == nil {
						p.Close(context.Background())
					}
					return err
				})
				if !errors.Is(err, plugin.ErrTimeout) {
					t.Fatalf("Load: err = %v, want ErrTimeout", err)
				}
				good := map[string]string{"direct": "../../sdk/wat/minimal.wat", "extism": "testdata/extism_minimal.wat"}[conv]
				p, err := rt.Load(context.Background(), plugin.Spec{Name: "good", Wasm: wat(t, good), PoolSize: 1, Uninterruptible: trusted})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				if out, err := p.Evaluate(context.Background(), []byte("x")); err != nil || string(out) != `{"action":"none"}` {
					t.Fatalf("after the looping start: %q %v", out, err)
				}
			})
		}
	}
}

// watText assembles WAT source (see wat).
func watText(t *testing.T, src string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.wat")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return wat(t, path)
}

// TestTimeoutHammer: many concurrent calls of a call-free loop with a tiny timeout each end in
// ErrTimeout. The deadline timer races the guest's check on every call; a check that could
// miss it (issue 20) left a call spinning for 2^32 checks, which hangLimit catches.
func TestTimeoutHammer(t *testing.T) {
	rt := newRuntime(t)
	for _, conv := range []string{"direct", "extism"} {
		t.Run(conv, func(t *testing.T) {
			p, err := rt.Load(context.Background(), plugin.Spec{
				Name: "hammer", Wasm: wat(t, "testdata/runaway_"+conv+".wat"), Timeout: time.Millisecond,
				InitTimeout: time.Millisecond, PoolSize: 4, HostFunctions: runawayHostFunctions(),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			const workers, calls = 4, 100
			errs := make(chan error, workers*calls)
			within(t, "hammer", func() struct{} {
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for range calls {
							_, err := p.Evaluate(context.Background(), []byte("loop"))
							if !errors.Is(err, plugin.ErrTimeout) {
								errs <- err
							}
						}
					})
				}
				wg.Wait()
				return struct{}{}
			})
			close(errs)
			for err := range errs {
				t.Errorf("err = %v, want ErrTimeout", err)
			}
		})
	}
}

// TestRetireNearTheCap: a guest whose memory grows a page per call is retired, after a call that
// succeeded, once it holds three quarters of its 8-page cap, and a fresh instance takes the next
// call: no call fails, where without retirement the eighth would trap out of memory.
func TestRetireNearTheCap(t *testing.T) {
	rt := newRuntime(t)
	p, err := rt.Load(context.Background(), plugin.Spec{Name: "grow", Wasm: wat(t, "testdata/grow_direct.wat"),
		Timeout: 10 * time.Second, InitTimeout: 10 * time.Second, PoolSize: 1, MaxPages: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	for i := range 30 {
		out, err := p.Evaluate(context.Background(), []byte("x"))
		if err != nil || string(out) != `{"action":"none"}` {
			t.Fatalf("call %d: %q %v", i, out, err)
		}
		if b := p.Stats().LinearBytes.Load(); b > 8<<16 {
			t.Fatalf("call %d: %d bytes of linear memory over an 8-page cap", i, b)
		}
	}
	if r := p.Stats().Retired.Load(); r < 4 {
		t.Errorf("retired %d instances in 30 calls, want one every 5 calls", r)
	}
	if f := p.Stats().Failures.Load(); f != 0 {
		t.Errorf("%d failed calls", f)
	}
}

// TestConsecutiveCallsShareAnInstance: one call at a time is served by one instance of a pool
// of two (the pool is LIFO), so testdata/grow_direct.wat's page a call reaches the retire
// mark (6 of 8 pages) on the fifth call; a FIFO pool alternated and took nine.
func TestConsecutiveCallsShareAnInstance(t *testing.T) {
	rt := newRuntime(t)
	p, err := rt.Load(context.Background(), plugin.Spec{Name: "grow", Wasm: wat(t, "testdata/grow_direct.wat"),
		Timeout: 10 * time.Second, InitTimeout: 10 * time.Second, PoolSize: 2, MaxPages: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	for i := range 5 {
		if _, err := p.Evaluate(context.Background(), []byte("x")); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if r := p.Stats().Retired.Load(); r != 1 {
		t.Errorf("retired %d instances after 5 calls one at a time, want 1 (every call on one instance)", r)
	}
}

// TestEvaluateWithinBound: EvaluateWithin's bound (host/chain passes four times the stage's
// timeout) covers the wait for an instance and the call together, as a context with that
// deadline did: with the only instance busy, a call gives up waiting at the bound with an error
// that is context.DeadlineExceeded; a call that runs away is stopped at the bound when that is
// sooner than the plugin's own timeout; a call within it returns its verdict.
func TestEvaluateWithinBound(t *testing.T) {
	rt := newRuntime(t)
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "runaway", Wasm: wat(t, "testdata/runaway_direct.wat"), Timeout: 2 * time.Second, InitTimeout: 2 * time.Second, PoolSize: 1,
		HostFunctions: runawayHostFunctions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if out, err := p.EvaluateWithin(context.Background(), []byte("good"), time.Minute); err != nil || string(out) != `{"action":"none"}` {
		t.Fatalf("within a minute: %q %v", out, err)
	}

	busy := make(chan error, 1)
	go func() {
		_, err := p.Evaluate(context.Background(), []byte("block")) // holds the instance for its 2 s
		busy <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it take the instance
	err = within(t, "wait", func() error {
		_, err := p.EvaluateWithin(context.Background(), []byte("good"), 50*time.Millisecond)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting past the bound: err = %v, want context.DeadlineExceeded", err)
	}
	if err := <-busy; !errors.Is(err, plugin.ErrTimeout) {
		t.Fatalf("blocking call: err = %v, want ErrTimeout", err)
	}

	// A plugin whose own timeout is 20 s: a loop under a 100 ms bound must end long before.
	long, err := rt.Load(context.Background(), plugin.Spec{
		Name: "runaway-long", Wasm: wat(t, "testdata/runaway_direct.wat"), Timeout: 20 * time.Second, InitTimeout: 20 * time.Second, PoolSize: 1,
		HostFunctions: runawayHostFunctions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close(context.Background())
	start := time.Now()
	err = within(t, "loop", func() error {
		_, err := long.EvaluateWithin(context.Background(), []byte("loop"), 100*time.Millisecond)
		return err
	})
	if !errors.Is(err, plugin.ErrTimeout) {
		t.Fatalf("loop: err = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el >= 10*time.Second {
		t.Fatalf("loop ran %s under a 100ms bound: the plugin's own 20 s timeout stopped it", el)
	}
}
