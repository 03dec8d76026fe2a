package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Names of the direct call convention (sdk/ABI.md "Exports" and "Host functions").
const (
	directAllocExport = "palisade_alloc" // (func (param i32) (result i32)): the input buffer
	directHostModule  = "palisade"       // host functions for direct plugins
	directErrFlag     = 1 << 31          // set in a packed result's length: the bytes are an error message
)

// directModule is one module compiled for the direct convention, shared by every stage whose
// module bytes (after instrument) are identical: one wazero runtime with WASI and the palisade
// host module, and one CompiledModule, so the guest is decoded and compiled once however many
// stages run it. What differs between those stages lives in directStage: config, host
// functions, memory cap, logger, linear memory count. Host functions find the calling
// instance's stage through insts.
type directModule struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	stopped  bool // instrumented with a stop check (instrument.go); false for trusted plugins
	minPages uint32
	insts    sync.Map // api.Module → *directInstance, for host functions to find their caller
}

// directStage is one stage's share of a directModule: everything but the compiled code.
type directStage struct {
	d        *directModule
	name     string
	config   map[string]string
	hostfns  map[string]func(ctx context.Context, req []byte) []byte
	logf     func(level int32, msg string)
	maxBytes uint64        // the stage's memory cap (Spec.MaxPages), enforced by the allocator
	linear   *atomic.Int64 // the plugin's Stats.LinearBytes: its instances' linear memory
	release  func(ctx context.Context)
}

// sharedKey identifies the directModule a stage can share: the module bytes it runs and every
// setting that is the runtime's rather than the stage's. The host module's function names are
// part of it (each stage's calls go to its own functions, but the module exports one set).
type sharedKey struct {
	sum                [sha256.Size]byte
	stopped            bool
	closeOnContextDone bool
	hostfns            string // the host functions' names, sorted, joined by NUL
}

// sharedModule is a directModule in Runtime.shared: built once (ready closes), counted.
type sharedModule struct {
	ready chan struct{}
	d     *directModule
	err   error
	refs  int // guarded by Runtime.mu
}

func hostFuncNames(fs []HostFunc) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), "\x00")
}

// directStageFor returns s's share of the directModule for wasm (already instrumented when
// stopped), compiling it only when no live stage runs the same bytes under the same runtime
// settings.
func (r *Runtime) directStageFor(ctx context.Context, s Spec, wasm []byte, stopped bool) (*directStage, error) {
	key := sharedKey{sha256.Sum256(wasm), stopped, s.closeOnContextDone, hostFuncNames(s.HostFunctions)}
	r.mu.Lock()
	if r.shared == nil {
		r.shared = map[sharedKey]*sharedModule{}
	}
	sm, found := r.shared[key]
	if !found {
		sm = &sharedModule{ready: make(chan struct{})}
		r.shared[key] = sm
	}
	sm.refs++
	r.mu.Unlock()
	if !found {
		sm.d, sm.err = newDirectModule(ctx, r.cache, s, wasm, stopped)
		close(sm.ready)
	} else {
		<-sm.ready
	}
	var once sync.Once
	release := func(ctx context.Context) {
		once.Do(func() {
			r.mu.Lock()
			sm.refs--
			last := sm.refs == 0
			if last && r.shared[key] == sm {
				delete(r.shared, key)
			}
			r.mu.Unlock()
			if last && sm.d != nil {
				sm.d.close(ctx)
			}
		})
	}
	if sm.err != nil {
		release(ctx)
		return nil, sm.err
	}
	if s.MaxPages < sm.d.minPages {
		release(ctx)
		return nil, fmt.Errorf("the module's memory starts at %d pages, over the stage's cap of %d", sm.d.minPages, s.MaxPages)
	}
	st := &directStage{d: sm.d, name: s.Name, config: s.Config, maxBytes: uint64(s.MaxPages) << 16,
		hostfns: make(map[string]func(context.Context, []byte) []byte, len(s.HostFunctions)), release: release}
	for _, f := range s.HostFunctions {
		st.hostfns[f.Name] = f.Call
	}
	log, name := s.Logger, s.Name
	st.logf = func(level int32, msg string) {
		log.Debug("plugin log", "stage", name, "level", level, "msg", msg)
	}
	return st, nil
}

// exportsDirect reports whether wasm follows the direct convention: it exports palisade_alloc.
func exportsDirect(wasm []byte) bool {
	names, err := exportNames(wasm)
	if err != nil {
		return false
	}
	_, ok := names[directAllocExport]
	return ok
}

// newDirectModule compiles wasm (already instrumented when interruptible) in a runtime of its
// own. The runtime has no memory limit of its own: each stage's cap is its instances' allocator's
// (withLinearMemory), so stages with different caps share the module.
func newDirectModule(ctx context.Context, cache wazero.CompilationCache, s Spec, wasm []byte, interruptible bool) (*directModule, error) {
	rc := wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(s.closeOnContextDone)
	d := &directModule{rt: wazero.NewRuntimeWithConfig(ctx, rc), stopped: interruptible}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, d.rt); err != nil {
		d.close(ctx)
		return nil, fmt.Errorf("wasi: %w", err)
	}
	if err := d.hostModule(ctx, s.HostFunctions); err != nil {
		d.close(ctx)
		return nil, fmt.Errorf("host module: %w", err)
	}
	c, err := d.rt.CompileModule(ctx, wasm)
	if err != nil {
		d.close(ctx)
		return nil, err
	}
	d.compiled = c
	if f, ok := c.ExportedFunctions()["evaluate"]; !ok || !sig(f, []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}) {
		d.close(ctx)
		return nil, errors.New("direct convention: evaluate must be (func (param i32) (result i64))")
	}
	if f := c.ExportedFunctions()[directAllocExport]; !sig(f, []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}) {
		d.close(ctx)
		return nil, errors.New("direct convention: palisade_alloc must be (func (param i32) (result i32))")
	}
	for _, m := range c.ExportedMemories() {
		d.minPages = max(d.minPages, m.Min())
	}
	// Compiled: the function bodies are not read again (codebodies.go).
	if n, err := dropCodeBodies(c); err != nil && s.Logger != nil {
		s.Logger.Warn("wazero's function bodies kept after compiling", "stage", s.Name, "err", err)
	} else if s.Logger != nil {
		s.Logger.Debug("wazero's function bodies released after compiling", "stage", s.Name, "bytes", n)
	}
	return d, nil
}

func sig(f api.FunctionDefinition, params, results []api.ValueType) bool {
	if f == nil || len(f.ParamTypes()) != len(params) || len(f.ResultTypes()) != len(results) {
		return false
	}
	for i, p := range params {
		if f.ParamTypes()[i] != p {
			return false
		}
	}
	for i, r := range results {
		if f.ResultTypes()[i] != r {
			return false
		}
	}
	return true
}

// hostModule instantiates module "palisade": config_get, result_read, log and the host
// functions named in fs, each (ptr, len) → length of a pending result the guest copies with
// result_read. Every function answers from the calling instance's own stage (config, host
// functions, logger): fs gives only the names, and a stage that lacks one is refused (a trap).
func (d *directModule) hostModule(ctx context.Context, fs []HostFunc) error {
	i32 := api.ValueTypeI32
	b := d.rt.NewHostModuleBuilder(directHostModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
		in := d.instance(m)
		key, ok := m.Memory().Read(uint32(stack[0]), uint32(stack[1]))
		if !ok || in == nil {
			stack[0] = api.EncodeI32(-1)
			return
		}
		v, found := in.st.config[string(key)]
		if !found {
			stack[0] = api.EncodeI32(-1)
			return
		}
		in.pending = append(in.pending[:0], v...)
		stack[0] = uint64(len(in.pending))
	}), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("config_get")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
		in := d.instance(m)
		if in == nil {
			return
		}
		if !m.Memory().Write(uint32(stack[0]), in.pending) {
			panic(errors.New("result_read: out of bounds"))
		}
		in.pending = in.pending[:0]
	}), []api.ValueType{i32}, nil).Export("result_read")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
		in := d.instance(m)
		if in == nil {
			return
		}
		if msg, ok := m.Memory().Read(uint32(stack[1]), uint32(stack[2])); ok {
			in.st.logf(api.DecodeI32(stack[0]), string(msg))
		}
	}), []api.ValueType{i32, i32, i32}, nil).Export("log")
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		name := f.Name
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			in := d.instance(m)
			req, ok := m.Memory().Read(uint32(stack[0]), uint32(stack[1]))
			if !ok || in == nil {
				panic(errors.New("host function: request out of bounds"))
			}
			call := in.st.hostfns[name]
			if call == nil {
				panic(fmt.Errorf("host function %s: not given to stage %q", name, in.st.name))
			}
			// The request is a view of guest memory: the callee gets its own copy.
			in.pending = append(in.pending[:0], call(ctx, append([]byte{}, req...))...)
			stack[0] = uint64(len(in.pending))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func (d *directModule) instance(m api.Module) *directInstance {
	v, ok := d.insts.Load(m)
	if !ok {
		return nil
	}
	return v.(*directInstance)
}

func (d *directModule) close(ctx context.Context) {
	d.rt.Close(ctx)
}

// directInstance is one instance of a direct module. Export handles are looked up once and
// called with CallWithStack on a stack reused across calls; it is used by one call at a time.
type directInstance struct {
	d       *directModule
	st      *directStage
	mod     api.Module
	mem     api.Memory
	alloc   api.Function
	fns     map[string]api.Function
	stack   [2]uint64
	pending []byte // a host function's or config_get's result, until result_read
	stderr  *stderrHead
	// firstSize is the linear memory after the first call Plugin.Call finished (0 before it):
	// an instance is retired near its cap only once it has grown past it.
	firstSize uint32

	// Interruption (d.stopped): a timer sets stop at the deadline; the guest traps at its next
	// function entry or loop header. mu orders the timer against re-arming for the next call.
	stop     api.MutableGlobal
	count    api.MutableGlobal // the instrumentation's check counter: 0 sends the guest to the stop check
	timer    *time.Timer
	mu       sync.Mutex
	deadline time.Time // zero when no call is running
	fired    bool      // the timer stopped the current call
}

// errInterrupted is the error of a call the deadline stopped.
var errInterrupted = errors.New("interrupted at the deadline")

// instantiate starts an instance of st's module with st's memory cap and linear memory count.
func (st *directStage) instantiate(ctx context.Context, mc wazero.ModuleConfig) (*directInstance, error) {
	d := st.d
	if !d.stopped {
		// Not rewritten: a start section and _initialize run inside InstantiateModule, which
		// nothing can interrupt; newInstance runs it on a goroutine it can abandon.
		mc = mc.WithStartFunctions("_initialize")
	} else {
		mc = mc.WithStartFunctions() // run palisade_start and _initialize below, under the stop timer
	}
	head := &stderrHead{}
	mod, err := d.rt.InstantiateModule(withLinearMemory(ctx, st.maxBytes, st.linear), d.compiled, mc.WithName("").WithStderr(head))
	if err != nil {
		return nil, head.wrap(err)
	}
	in := &directInstance{d: d, st: st, mod: mod, mem: mod.Memory(), alloc: mod.ExportedFunction(directAllocExport), fns: map[string]api.Function{}, stderr: head}
	if in.mem == nil {
		mod.Close(ctx)
		return nil, errors.New("direct convention: the module exports no memory")
	}
	d.insts.Store(mod, in)
	if d.stopped {
		g, ok := mod.ExportedGlobal(stopExport).(api.MutableGlobal)
		if !ok {
			in.close(ctx)
			return nil, errors.New("instrumented module lacks its stop global")
		}
		in.stop = g
		if c, ok := mod.ExportedGlobal(countExport).(api.MutableGlobal); ok {
			in.count = c
		}
		in.timer = time.AfterFunc(time.Hour, in.expire)
		in.timer.Stop()
		// The module's start function (moved out of the start section by instrument), then
		// WASI's reactor initializer, both under one init timeout.
		in.arm(ctx, initTimeout(ctx))
		for _, name := range []string{startExport, "_initialize"} {
			f := mod.ExportedFunction(name)
			if f == nil {
				continue
			}
			if err = f.CallWithStack(ctx, in.stack[:]); err != nil {
				err = fmt.Errorf("%s: %w", name, head.wrap(err))
				break
			}
		}
		if in.disarm() && err != nil {
			err = fmt.Errorf("%w: %w", errInterrupted, err)
		}
		if err != nil {
			in.close(ctx)
			return nil, err
		}
	}
	return in, nil
}

type initTimeoutKey struct{}

// initTimeout is the init timeout Plugin.newInstance put in ctx (wazero's instantiate takes no
// other parameter); 10s without one.
func initTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(initTimeoutKey{}).(time.Duration); ok {
		return d
	}
	return 10 * time.Second
}

// arm starts the stop timer for a call bounded by timeout and ctx's deadline, and returns
// that deadline.
func (in *directInstance) arm(ctx context.Context, timeout time.Duration) time.Time {
	dl := time.Now().Add(timeout)
	if c, ok := ctx.Deadline(); ok && c.Before(dl) {
		dl = c
	}
	in.mu.Lock()
	in.deadline, in.fired = dl, false
	in.stop.Set(0)
	in.mu.Unlock()
	in.timer.Reset(time.Until(dl))
	return dl
}

// disarm stops the timer after a call and reports whether it stopped the call.
func (in *directInstance) disarm() bool {
	in.timer.Stop()
	in.mu.Lock()
	fired := in.fired
	in.deadline, in.fired = time.Time{}, false
	in.stop.Set(0)
	in.mu.Unlock()
	return fired
}

// expire is the timer's function: it sets the stop flag if a call is still running past its
// deadline (a late run of a timer from an earlier call finds no deadline, or one not yet due).
func (in *directInstance) expire() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.deadline.IsZero() {
		return
	}
	if d := time.Until(in.deadline); d > 0 {
		in.timer.Reset(d)
		return
	}
	in.fired = true
	in.stop.Set(1)
	if in.count != nil {
		in.count.Set(uint64(stopNow))
	}
}

// callBounded is call under the stop timer: a guest still running at the deadline traps at its
// next check, and the error wraps errInterrupted. Host functions the guest calls get a context
// with the call's deadline, so a slow one (an LLM sample) is bounded too.
func (in *directInstance) callBounded(ctx context.Context, fn string, input []byte, timeout time.Duration) (uint32, []byte, error) {
	cc := &callContext{Context: ctx, deadline: in.arm(ctx, timeout)}
	rc, out, err := in.call(cc, fn, input)
	cc.release()
	if in.disarm() && err != nil {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	return rc, out, err
}

// callContext is the context of one bounded call: the caller's, with the call's deadline. Its
// Done channel (a timer) is made only when a host function asks for it, so a call that uses
// none costs one small allocation instead of context.WithDeadline's timer.
type callContext struct {
	context.Context // the caller's
	deadline        time.Time
	once            sync.Once
	inner           context.Context    // made by the first Done or Err, or by release
	cancel          context.CancelFunc // nil when release made inner
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *callContext) Done() <-chan struct{}       { return c.bound().Done() }
func (c *callContext) Err() error                  { return c.bound().Err() }

func (c *callContext) bound() context.Context {
	c.once.Do(func() { c.inner, c.cancel = context.WithDeadline(c.Context, c.deadline) })
	return c.inner
}

// release ends the context after the call, for a host function that kept it.
func (c *callContext) release() {
	c.once.Do(func() { c.inner = endedContext{c.Context} })
	if c.cancel != nil {
		c.cancel()
	}
}

// endedContext is a context whose call has returned.
type endedContext struct{ context.Context }

func (endedContext) Done() <-chan struct{} { return closedChan }
func (endedContext) Err() error            { return context.Canceled }

// closedChan is a closed channel, never written: endedContext's Done.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (in *directInstance) exports(fn string) bool {
	return in.function(fn) != nil
}

func (in *directInstance) function(fn string) api.Function {
	f, ok := in.fns[fn]
	if !ok {
		f = in.mod.ExportedFunction(fn)
		if f != nil && !sig(f.Definition(), []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}) {
			f = nil
		}
		in.fns[fn] = f
	}
	return f
}

// call writes input into the buffer palisade_alloc returns, calls fn(len) and reads the packed
// (ptr << 32 | len) result once. A result whose length has bit 31 set is a plugin error.
func (in *directInstance) call(ctx context.Context, fn string, input []byte) (uint32, []byte, error) {
	f := in.function(fn)
	if f == nil {
		return 0, nil, fmt.Errorf("unknown function: %s", fn)
	}
	s := in.stack[:]
	s[0] = uint64(len(input))
	in.stderr.reset()
	if err := in.alloc.CallWithStack(ctx, s); err != nil {
		return 0, nil, in.stderr.wrap(err)
	}
	if len(input) > 0 && !in.mem.Write(uint32(s[0]), input) {
		return 0, nil, fmt.Errorf("wasm error: palisade_alloc returned %#x, out of bounds for %d bytes", uint32(s[0]), len(input))
	}
	s[0] = uint64(len(input))
	if err := f.CallWithStack(ctx, s); err != nil {
		return 0, nil, in.stderr.wrap(err)
	}
	ptr, n := uint32(s[0]>>32), uint32(s[0])
	failed := n&directErrFlag != 0
	n &^= directErrFlag
	b, ok := in.mem.Read(ptr, n)
	if !ok {
		return 0, nil, fmt.Errorf("wasm error: %s returned %d bytes at %#x, out of bounds", fn, n, ptr)
	}
	out := append([]byte(nil), b...)
	if failed {
		if len(out) == 0 {
			out = []byte("plugin error")
		}
		return 1, nil, errors.New(string(out))
	}
	return 0, out, nil
}

func (in *directInstance) close(ctx context.Context) {
	if in.timer != nil {
		in.timer.Stop()
	}
	in.d.insts.Delete(in.mod)
	in.mod.Close(ctx)
}

// stderrHead keeps the first stderrHeadBytes a guest writes to stderr since the last reset,
// and drops the rest. A Go guest's runtime prints why it stops there before it traps ("fatal
// error: out of memory", then the goroutine dump): without it a trap reads only "unreachable".
type stderrHead struct {
	mu  sync.Mutex
	buf []byte
}

const stderrHeadBytes = 256

func (h *stderrHead) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := stderrHeadBytes - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *stderrHead) reset() {
	h.mu.Lock()
	h.buf = h.buf[:0]
	h.mu.Unlock()
}

// wrap adds the first line the guest wrote to stderr (quoted: it is the guest's text) to err.
func (h *stderrHead) wrap(err error) error {
	h.mu.Lock()
	line, _, _ := bytes.Cut(bytes.TrimSpace(h.buf), []byte("\n"))
	h.mu.Unlock()
	if len(line) == 0 {
		return err
	}
	return fmt.Errorf("%w (guest stderr: %q)", err, line)
}
