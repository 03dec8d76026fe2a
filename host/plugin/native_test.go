package plugin_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

// fakeNative is a native module whose evaluate answers by the input: "panic", "slow" (sleeps
// past any short timeout), "error", "host:NAME" (calls host function NAME and answers its
// reply), anything else an action none verdict naming the instance. Each instance reuses one
// verdict buffer, as the first-party roles do.
type fakeNative struct {
	env     plugin.NativeEnv
	id      int
	buf     []byte
	calling atomic.Int32 // calls running on this instance: must never exceed 1
}

func nativeModule(t *testing.T, wasm []byte, made *atomic.Int32) plugin.Native {
	t.Helper()
	return plugin.Native{Digest: sha256.Sum256(wasm), New: func(env plugin.NativeEnv) plugin.NativeInstance {
		return &fakeNative{env: env, id: int(made.Add(1))}
	}}
}

func (f *fakeNative) Describe() ([]byte, error) {
	cfg, _ := f.env.Config("config")
	return []byte(`{"name":"fake","abi":"1.1","config":` + cfg + `}`), nil
}

func (f *fakeNative) Evaluate(in []byte) ([]byte, error) {
	if f.calling.Add(1) != 1 {
		panic("two calls at once on one native instance")
	}
	defer f.calling.Add(-1)
	s := string(in)
	switch {
	case s == "panic":
		var v []int
		_ = v[len(in)] // an index out of range: a runtime panic, as a bug in a role would be
	case s == "slow":
		time.Sleep(50 * time.Millisecond)
	case s == "error":
		return nil, errors.New("the plugin's own error")
	case strings.HasPrefix(s, "host:"):
		return f.env.HostCall(strings.TrimPrefix(s, "host:"), []byte("ping"))
	case strings.HasPrefix(s, "typed:"):
		fn, ok := f.env.Typed(strings.TrimPrefix(s, "typed:")).(func(context.Context, string) string)
		if !ok {
			return nil, errors.New("no typed form")
		}
		return []byte(fn(f.env.Context(), "ping")), nil
	}
	f.buf = append(f.buf[:0], `{"action":"none","reason":"`...)
	f.buf = append(f.buf, s...)
	f.buf = append(f.buf, `"}`...)
	return f.buf, nil
}

func loadNative(t *testing.T, rt *plugin.Runtime, wasm []byte, timeout time.Duration, hostfns []plugin.HostFunc) *plugin.Plugin {
	t.Helper()
	p, err := rt.Load(context.Background(), plugin.Spec{Name: "native", Wasm: wasm,
		Config: map[string]string{"config": `{"k":1}`}, Timeout: timeout, PoolSize: 2, HostFunctions: hostfns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// A module whose bytes are a Native's digest runs as that Go code: no Wasm is compiled (the
// bytes here are not a module at all), describe and the config come through, failures are
// classified as a guest's are (a panic is a trap, the instance replaced and the process alive;
// a call past its timeout is a timeout), and the next call is served.
func TestNativeModule(t *testing.T) {
	wasm := []byte("not wasm: the first-party module's stand-in")
	var made atomic.Int32
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{Native: []plugin.Native{nativeModule(t, wasm, &made)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	p := loadNative(t, rt, wasm, 20*time.Millisecond, []plugin.HostFunc{{Name: "echo", Call: func(_ context.Context, req []byte) []byte {
		got["echo"] = string(req)
		return []byte(`{"action":"deny","reason":"host said no"}`)
	}}})
	if c := p.Convention(); c != "native" {
		t.Fatalf("convention = %s, want native", c)
	}
	ctx := context.Background()
	if d, err := p.Call(ctx, "describe", nil); err != nil || !strings.Contains(string(d), `"config":{"k":1}`) {
		t.Fatalf("describe = %s, %v", d, err)
	}
	for _, tc := range []struct {
		in       string
		want     error
		replaced bool
	}{
		{"panic", plugin.ErrTrap, true},
		{"slow", plugin.ErrTimeout, true},
		{"error", plugin.ErrPluginErr, false},
		{"host:nope", plugin.ErrPluginErr, false}, // a host function the stage was not given
	} {
		before := p.Stats().Replaced.Load()
		if out, err := p.Evaluate(ctx, []byte(tc.in)); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %s, %v; want %v", tc.in, out, err, tc.want)
		}
		if replaced := p.Stats().Replaced.Load() > before; replaced != tc.replaced {
			t.Errorf("%s: instance replaced = %v, want %v", tc.in, replaced, tc.replaced)
		}
		if out, err := p.Evaluate(ctx, []byte("ok")); err != nil || string(out) != `{"action":"none","reason":"ok"}` {
			t.Fatalf("after %s: %s, %v", tc.in, out, err)
		}
	}
	if out, err := p.Evaluate(ctx, []byte("host:echo")); err != nil || string(out) != `{"action":"deny","reason":"host said no"}` || got["echo"] != "ping" {
		t.Fatalf("host function: %s, %v (it got %q)", out, err, got["echo"])
	}
	if made.Load() < 3 { // two at load, and a new one once both were discarded
		t.Errorf("%d instances made; the panicked and the late one were not replaced", made.Load())
	}
	// A caller whose context ended gets no answer from a call that ran meanwhile.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Evaluate(cctx, []byte("ok")); err == nil {
		t.Error("a call under a cancelled context answered")
	}
}

// Any other bytes run in wazero: a module that is not the native one's keeps the direct path.
func TestNativeOnlyForItsDigest(t *testing.T) {
	var made atomic.Int32
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir(),
		Native: []plugin.Native{nativeModule(t, []byte("some other module"), &made)}})
	if err != nil {
		t.Fatal(err)
	}
	p := loadPkg(t, rt, "error", time.Second, misbehave)
	if c := p.Convention(); c != "direct" || made.Load() != 0 {
		t.Fatalf("convention %s, %d native instances: another module ran natively", c, made.Load())
	}
	if _, err := plugin.ParseDigest("abc"); err == nil {
		t.Error("a short digest parsed")
	}
	if _, err := plugin.ParseDigest(strings.Repeat("zz", 32)); err == nil {
		t.Error("a digest that is not hex parsed")
	}
}

// Concurrent calls each get their own answer: an instance is used by one call at a time, and
// the answer is the caller's copy, not the instance's buffer the next call overwrites (run
// with -race).
func TestNativePoolConcurrent(t *testing.T) {
	wasm := []byte("native pool")
	var made atomic.Int32
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{Native: []plugin.Native{nativeModule(t, wasm, &made)}})
	if err != nil {
		t.Fatal(err)
	}
	p := loadNative(t, rt, wasm, time.Second, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				in := strings.Repeat(string(rune('a'+g)), 1+i%40)
				out, err := p.Evaluate(context.Background(), []byte(in))
				time.Sleep(time.Duration(i%3) * time.Microsecond) // let another call reuse the instance
				if err != nil || string(out) != `{"action":"none","reason":"`+in+`"}` {
					errs <- errors.New(string(out))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a caller got another call's answer or an error: %v", err)
	}
	if made.Load() != 2 {
		t.Errorf("%d instances for a pool of 2", made.Load())
	}
}

// EvaluateVerdict hands the decoder the instance's own verdict buffer, uncopied, while the
// instance is held: what the decoder copied stays the caller's after later calls reuse that
// buffer, and a plain Evaluate on the same instance afterwards still gets a copy of its own
// (the borrow is that call's only). A decoder that kept the bytes would see them overwritten:
// the test's aliasing decoder shows the reuse it guards against. Run with -race.
func TestNativeEvaluateVerdict(t *testing.T) {
	wasm := []byte("native verdict")
	var made atomic.Int32
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{Native: []plugin.Native{nativeModule(t, wasm, &made)}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(context.Background(), plugin.Spec{Name: "native", Wasm: wasm, Timeout: time.Second, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	ctx := context.Background()
	copying := func(out []byte, dst *abi.Verdict) error { return json.Unmarshal(out, dst) }
	var kept []byte // what an aliasing decoder would keep
	aliasing := func(out []byte, dst *abi.Verdict) error { kept = out; return json.Unmarshal(out, dst) }

	var first, second abi.Verdict
	if err := p.EvaluateVerdict(ctx, []byte("first"), time.Second, &first, aliasing); err != nil || first.Reason != "first" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	keptFirst := string(kept)
	if err := p.EvaluateVerdict(ctx, []byte("second!"), time.Second, &second, copying); err != nil || second.Reason != "second!" {
		t.Fatalf("second = %+v, %v", second, err)
	}
	if first.Reason != "first" {
		t.Errorf("the first verdict changed to %q after the next call", first.Reason)
	}
	if string(kept) == keptFirst {
		t.Errorf("the decoder got a copy (%q unchanged): EvaluateVerdict copied the output", kept)
	}
	out, err := p.Evaluate(ctx, []byte("third"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EvaluateVerdict(ctx, []byte("fourth, longer"), time.Second, &second, copying); err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"action":"none","reason":"third"}` {
		t.Errorf("Evaluate's answer after EvaluateVerdict reads %s: not a copy", out)
	}
	// The decoder's error is the call's; the instance is not replaced for it.
	before := p.Stats().Replaced.Load()
	bad := errors.New("bad verdict")
	if err := p.EvaluateVerdict(ctx, []byte("x"), time.Second, &second, func([]byte, *abi.Verdict) error { return bad }); !errors.Is(err, bad) {
		t.Errorf("decoder error: got %v", err)
	}
	if err := p.EvaluateVerdict(ctx, []byte("error"), time.Second, &second, copying); !errors.Is(err, plugin.ErrPluginErr) {
		t.Errorf("plugin error: got %v", err)
	}
	if p.Stats().Replaced.Load() != before {
		t.Error("an instance was replaced")
	}
}

type ctxKey struct{}

// A host function's typed form (HostFunc.Typed) reaches a native instance through
// NativeEnv.Typed, called with the running call's context (NativeEnv.Context); a function
// without one, or one the stage was not given, has none.
func TestNativeTypedHostFunc(t *testing.T) {
	wasm := []byte("not wasm: the typed host function's stand-in")
	var made atomic.Int32
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{Native: []plugin.Native{nativeModule(t, wasm, &made)}})
	if err != nil {
		t.Fatal(err)
	}
	p := loadNative(t, rt, wasm, time.Second, []plugin.HostFunc{
		{Name: "bytes", Call: func(context.Context, []byte) []byte { return []byte(`{}`) }},
		{Name: "typed", Call: func(context.Context, []byte) []byte { return []byte(`{}`) },
			Typed: func(ctx context.Context, req string) string {
				v, _ := ctx.Value(ctxKey{}).(string)
				return `{"action":"deny","reason":"` + req + ` in ` + v + `"}`
			}},
	})
	for i, call := range []string{"call one", "call two"} {
		ctx := context.WithValue(context.Background(), ctxKey{}, call)
		out, err := p.Evaluate(ctx, []byte("typed:typed"))
		if want := `{"action":"deny","reason":"ping in ` + call + `"}`; err != nil || string(out) != want {
			t.Fatalf("call %d: %s, %v; want %s (the typed form, with this call's context)", i, out, err, want)
		}
	}
	for _, name := range []string{"bytes", "nope"} {
		if _, err := p.Evaluate(context.Background(), []byte("typed:"+name)); !errors.Is(err, plugin.ErrPluginErr) {
			t.Errorf("typed form of %q: %v, want none (the plugin's error)", name, err)
		}
	}
}
