package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Native is a module the host can run as Go code linked into its own binary instead of in
// wazero: the first-party module, whose Go source the host is built from (host/firstparty). A
// stage runs natively only when its module's bytes hash to Digest, which the build records
// from the module it built from the same source (the Makefile's `build`); any other module,
// a later bundle's first-party module included, runs in wazero as before. The bytes hashed are
// the ones the bundle's signature was checked on (Spec.Wasm), read once.
type Native struct {
	Digest [32]byte
	// New returns one instance's state for a stage: env gives its config values and host
	// functions. The instance is used by one call at a time, as a Wasm instance is.
	New func(env NativeEnv) NativeInstance
}

// NativeEnv is what a native instance may ask of the host: the stage's config values, as
// config_get answers them, and the host functions granted to the stage, each called with the
// current call's context.
type NativeEnv struct {
	Config   func(key string) (string, bool)
	HostCall func(name string, req []byte) ([]byte, error)
	// Typed is the typed form (HostFunc.Typed) of the host function name granted to the stage,
	// nil when it has none (or the stage has no such function: HostCall fails for it). The
	// instance calls it with Context's context, as HostCall would.
	Typed func(name string) any
	// Context is the running call's context (Background between calls).
	Context func() context.Context
}

// NativeInstance is one native instance: describe's JSON, and evaluate's verdict JSON, which
// the instance may reuse on its next call (the host copies it). An error is the plugin's own (the stage's failure mode).
type NativeInstance interface {
	Describe() ([]byte, error)
	Evaluate(input []byte) ([]byte, error)
}

// ParseDigest reads a module digest in hex (what sha256sum prints).
func ParseDigest(s string) ([32]byte, error) {
	var d [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(d) {
		return d, fmt.Errorf("native module digest %q: want 64 hex digits (sha256)", s)
	}
	copy(d[:], b)
	return d, nil
}

// nativeFor returns the native module whose digest is wasm's, or nil.
func (r *Runtime) nativeFor(wasm []byte) *Native {
	if len(r.native) == 0 {
		return nil
	}
	sum := sha256.Sum256(wasm)
	for i := range r.native {
		if r.native[i].Digest == sum {
			return &r.native[i]
		}
	}
	return nil
}

// nativeInstance runs one native instance under the instance interface, so the pool, the
// stats and the failure handling are Plugin's as for any instance.
type nativeInstance struct {
	inst NativeInstance
	ctx  context.Context // the running call's, for host functions; nil between calls
	// borrow is set for a call whose verdict is read before the instance is released
	// (Plugin.EvaluateVerdict): its verdict buffer is handed out without a copy.
	borrow bool
}

// newNativeInstance starts an instance of n for the stage s.
func newNativeInstance(n *Native, s Spec) *nativeInstance {
	in := &nativeInstance{}
	fns := make(map[string]func(context.Context, []byte) []byte, len(s.HostFunctions))
	var typed map[string]any
	for _, f := range s.HostFunctions {
		fns[f.Name] = f.Call
		if f.Typed != nil {
			if typed == nil {
				typed = map[string]any{}
			}
			typed[f.Name] = f.Typed
		}
	}
	callCtx := func() context.Context {
		if in.ctx == nil {
			return context.Background()
		}
		return in.ctx
	}
	cfg, name := s.Config, s.Name
	in.inst = n.New(NativeEnv{
		Config: func(key string) (string, bool) {
			v, ok := cfg[key]
			return v, ok
		},
		HostCall: func(fn string, req []byte) ([]byte, error) {
			call := fns[fn]
			if call == nil {
				// In Wasm this import traps; natively the call fails, which the stage's failure
				// mode answers in the same way.
				return nil, fmt.Errorf("host function %s: not given to stage %q", fn, name)
			}
			return call(callCtx(), req), nil
		},
		Typed:   func(fn string) any { return typed[fn] },
		Context: callCtx,
	})
	return in
}

// call runs export fn. A panic is the Wasm guest's trap: the call fails as one (ErrTrap, the
// instance is discarded) and the process goes on.
func (in *nativeInstance) call(ctx context.Context, fn string, input []byte) (rc uint32, out []byte, err error) {
	in.ctx = ctx
	defer func() {
		in.ctx = nil
		if r := recover(); r != nil {
			rc, out, err = 0, nil, fmt.Errorf("%w: %v", errNativePanic, r)
		}
	}()
	switch fn {
	case "evaluate":
		out, err = in.inst.Evaluate(input)
	case "describe":
		out, err = in.inst.Describe()
	default:
		return 0, nil, fmt.Errorf("native module: no export %q", fn)
	}
	if err != nil {
		return 1, nil, err
	}
	if in.borrow {
		// Plugin.EvaluateVerdict: the verdict is decoded before the instance goes back to
		// the pool, and decoding copies what it keeps.
		return 0, out, nil
	}
	// The instance reuses its verdict buffer, and it goes back to the pool before the caller
	// reads the answer: the caller gets its own copy, as from a Wasm instance's memory.
	return 0, append([]byte(nil), out...), nil
}

func (in *nativeInstance) exports(fn string) bool    { return fn == "evaluate" || fn == "describe" }
func (in *nativeInstance) close(ctx context.Context) {}

// callNative runs a native call on the caller's goroutine. Go code cannot be stopped from
// outside, so the stage's timeout is applied when the call returns: one that ran past it (or
// whose context ended meanwhile) is a timeout, decided by the stage's failure mode exactly as a
// Wasm call stopped at its deadline, and its answer is dropped. What bounds how long it runs is
// the first-party code's own input limits (shell.MaxParseBytes, the injection scanner's
// windows), the same code that runs 7–25× slower in the guest.
func callNative(ctx context.Context, inst instance, fn string, input []byte, timeout time.Duration) (uint32, []byte, error) {
	start := time.Now()
	rc, out, err := inst.call(ctx, fn, input)
	if took := time.Since(start); took > timeout {
		return 0, nil, fmt.Errorf("native call took %s, past the timeout of %s: %w", took.Round(time.Microsecond), timeout, errInterrupted)
	}
	if cerr := ctx.Err(); cerr != nil {
		return 0, nil, fmt.Errorf("native call: %w", cerr)
	}
	return rc, out, err
}

// errNativePanic marks a native call that panicked, the native form of a trap.
var errNativePanic = errors.New("native module panicked")
