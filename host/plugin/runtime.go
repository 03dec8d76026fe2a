package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/host/internal/atomicfile"
	"github.com/added060/palisade/sdk/go/abi"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// Errors a stage call can fail with. Callers match them with errors.Is.
var (
	ErrTimeout   = errors.New("plugin: timeout")
	ErrTrap      = errors.New("plugin: trap")
	ErrPluginErr = errors.New("plugin: returned an error")
	ErrClosed    = errors.New("plugin: closed")
)

// Defaults applied by Spec.withDefaults.
const (
	DefaultTimeout  = 250 * time.Millisecond
	DefaultMaxPages = 256 // 16 MiB
)

// Options configure a Runtime.
type Options struct {
	CacheDir string       // compiled modules; "" disables the disk cache (an in-memory cache is still shared)
	Logger   *slog.Logger // nil = discard
	// Native are modules run as Go code linked into the host when a stage's module is
	// byte for byte one of them (native.go; host/firstparty gives the first-party module's).
	Native []Native
}

// Runtime compiles plugins. One Runtime is shared by every stage of every bundle so that the
// compilation cache is shared.
type Runtime struct {
	cache    wazero.CompilationCache
	cacheDir string // "" = no disk cache
	logger   *slog.Logger
	native   []Native

	mu        sync.Mutex
	rewritten map[rewriteKey][]byte // instrument's output by the module's hash and stop mode, without a disk cache
	// shared holds the direct-convention modules live stages run, by module bytes and runtime
	// settings: stages running the same module share its runtime and compiled module (direct.go).
	shared map[sharedKey]*sharedModule
}

// instrumentedCache bounds Runtime.rewritten; past it the map starts over.
const instrumentedCache = 64

// instrumented returns wasm with stop checks for mode (instrument.go), from the disk cache (or,
// without one, from memory) when seen before (rewriting a 4 MB Go module takes tens of milliseconds, which a
// process per call, like palisade hook, would pay on every start); wazero caches the result's
// compiled form like any module's.
func (r *Runtime) instrumented(wasm []byte, mode stopMode) ([]byte, error) {
	key := rewriteKey{sha256.Sum256(wasm), mode}
	r.mu.Lock()
	out, ok := r.rewritten[key]
	r.mu.Unlock()
	if ok {
		return out, nil
	}
	var path string
	if r.cacheDir != "" {
		name := fmt.Sprintf("%s-v%d-%d.wasm", hex.EncodeToString(key.sum[:]), instrumentVersion, mode)
		path = filepath.Join(r.cacheDir, "instrumented", name)
	}
	if b, err := os.ReadFile(path); path != "" && err == nil && bytes.HasPrefix(b, []byte("\x00asm")) {
		out = b
	} else {
		if out, err = instrument(wasm, mode); err != nil {
			return nil, err
		}
		if path != "" {
			r.writeCache(path, out)
		}
	}
	if path != "" {
		// The disk cache serves the next build; keeping every rewritten module in memory too
		// would hold megabytes per plugin for the life of the process.
		return out, nil
	}
	r.mu.Lock()
	if r.rewritten == nil || len(r.rewritten) >= instrumentedCache {
		r.rewritten = map[rewriteKey][]byte{}
	}
	r.rewritten[key] = out
	r.mu.Unlock()
	return out, nil
}

// rewriteKey identifies one rewrite: the input module's hash and the stop mode.
type rewriteKey struct {
	sum  [sha256.Size]byte
	mode stopMode
}

// NewRuntime returns a runtime whose compiled modules are cached in o.CacheDir.
func NewRuntime(ctx context.Context, o Options) (*Runtime, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{logger: o.Logger, cacheDir: o.CacheDir, native: o.Native}
	if o.CacheDir != "" {
		if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("plugin cache dir: %w", err)
		}
		c, err := wazero.NewCompilationCacheWithDir(o.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("plugin cache dir %s: %w", o.CacheDir, err)
		}
		r.cache = c
	} else {
		r.cache = wazero.NewCompilationCache()
	}
	return r, nil
}

// writeCache stores b at path atomically; a failure only costs the next start a rewrite.
func (r *Runtime) writeCache(path string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.logger.Debug("plugin cache", "err", err)
		return
	}
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		r.logger.Debug("plugin cache", "err", err)
	}
}

// Close releases the compilation cache. Plugins loaded from it must be closed first.
func (r *Runtime) Close(ctx context.Context) error { return r.cache.Close(ctx) }

// Spec describes one stage's plugin.
type Spec struct {
	Name     string            // stage name, for logs and errors
	Wasm     []byte            // the module
	Config   map[string]string // Extism config (config_get)
	Timeout  time.Duration     // per call; 0 = DefaultTimeout
	MaxPages uint32            // memory cap in 64 KiB pages; 0 = DefaultMaxPages
	PoolSize int               // instances kept; 0 = 2
	// Warm is how many of the pool's instances Load starts (0 = all of them); the rest start
	// on the first call that finds every started one busy. A stage called rarely (a judge
	// that runs only on sampled calls) need not hold its whole pool's memory.
	Warm int
	// InitTimeout bounds an instance's first call, which also starts the guest's runtime (a Go
	// plugin's runtime and package init can take longer than a verdict may); 0 = 10s.
	InitTimeout time.Duration
	// Uninterruptible drops wazero's close-on-context-done checks, which make guest loops
	// several times slower, for plugins the operator trusts not to loop: Timeout then bounds
	// only how long a caller waits, and an instance still running past it is discarded when it
	// returns. Untrusted plugins must keep the default (false).
	//
	// # Notes
	//
	// Compiled Wasm cannot be preempted: a guest that never returns also holds up every Go
	// stop-the-world (each GC cycle) of the process, not just its own instance. The same goes
	// for instantiation: a trusted start function still running at InitTimeout fails Load (or
	// the new instance) with ErrTimeout and is abandoned, still running. The default's checks
	// cost 0-10 % on loops and up to 2× on tiny functions called in a loop (README).
	Uninterruptible bool
	HostFunctions   []HostFunc   // see host/hostfn; every import the plugin declares must be here
	Logger          *slog.Logger // nil = the runtime's

	// closeOnContextDone runs a direct plugin uninstrumented with wazero's close-on-context-done
	// instead: the alternative the rewriter was chosen over, kept for BenchmarkInterruption.
	closeOnContextDone bool
}

func (s Spec) withDefaults(r *Runtime) Spec {
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxPages == 0 {
		s.MaxPages = DefaultMaxPages
	}
	if s.PoolSize <= 0 {
		s.PoolSize = 2
	}
	if s.Warm <= 0 || s.Warm > s.PoolSize {
		s.Warm = s.PoolSize
	}
	if s.InitTimeout <= 0 {
		s.InitTimeout = 10 * time.Second
	}
	if s.InitTimeout < s.Timeout {
		s.InitTimeout = s.Timeout
	}
	if s.Logger == nil {
		s.Logger = r.logger
	}
	return s
}

// Plugin is a compiled module with a pool of instances. It is safe for concurrent use.
type Plugin struct {
	spec     Spec
	compiled *extism.CompiledPlugin // Extism compatibility, or
	direct   *directStage           // the direct convention (its module may be shared with other stages), or
	native   *Native                // the module run natively (native.go)
	// The idle instances are a stack (LIFO): a call takes the one released last, whose linear
	// memory, Go heap and stack the previous call left in the CPU's caches. A FIFO pool makes
	// consecutive calls alternate between instances, each finding the other's memory cold.
	// ready holds one token per instance on the stack: a call takes a token (or waits for one,
	// with its context and deadline, in a select) and then pops; release pushes, then adds one.
	idle   []instance // guarded by mu
	ready  chan struct{}
	slots  chan struct{} // one token per instance that may exist
	closed atomic.Bool
	mu     sync.Mutex // guards idle, live and cold
	live   map[instance]struct{}
	cold   map[instance]bool // started but never called: the first call also initializes
	stats  Stats
	// undescribed: describe answered zero bytes, which a plugin does when it has no describe
	// (the Go SDK always exports it); Exports("describe") then reports false.
	undescribed atomic.Bool
}

// instance is one instantiated module of either convention, used by one call at a time.
type instance interface {
	// call runs export fn on input; rc != 0 is the plugin's own error (err says what).
	call(ctx context.Context, fn string, input []byte) (rc uint32, out []byte, err error)
	exports(fn string) bool
	close(ctx context.Context)
}

// extismInstance is an instance on the Extism compatibility path.
type extismInstance struct {
	p       *extism.Plugin
	timeout time.Duration
}

func (e *extismInstance) call(ctx context.Context, fn string, input []byte) (uint32, []byte, error) {
	e.p.Timeout = e.timeout
	return e.p.CallWithContext(ctx, fn, input)
}
func (e *extismInstance) exports(fn string) bool    { return e.p.FunctionExists(fn) }
func (e *extismInstance) close(ctx context.Context) { e.p.Close(ctx) }

// Stats counts calls and failures of one plugin.
type Stats struct {
	Calls     atomic.Int64
	Failures  atomic.Int64
	Timeouts  atomic.Int64
	Replaced  atomic.Int64
	Instances atomic.Int64
	// Retired counts instances closed after a successful call because their linear memory had
	// reached retireShare of the cap (direct convention): the next call starts a fresh one.
	Retired atomic.Int64
	// LinearBytes is the linear memory this plugin's live instances have grown to (direct
	// convention, where host/plugin maps it; 0 elsewhere). Compare with MaxPages × 64 KiB per
	// instance: a Go guest's heap grows 4 MiB at a time, and one that reaches its cap traps.
	LinearBytes atomic.Int64
}

// retireShare is the share of its memory cap past which an instance is retired after a call.
const retireShare = 0.75

// nearCap reports whether a direct-convention instance's linear memory has reached
// retireShare of the cap and grown since its first call: a guest that needs that much from
// the start would only be started again and again.
func (p *Plugin) nearCap(inst instance) bool {
	in, ok := inst.(*directInstance)
	if !ok {
		return false
	}
	size := in.mem.Size()
	if in.firstSize == 0 {
		in.firstSize = size
	}
	return size > in.firstSize && float64(size) >= retireShare*float64(p.MaxBytes())
}

// MaxBytes is the memory cap of one instance: MaxPages × 64 KiB.
func (p *Plugin) MaxBytes() int64 { return int64(p.spec.MaxPages) << 16 }

// Load compiles s.Wasm (using the cache), creates one instance to prove the module starts and
// returns the plugin. A module that fails to compile or to start is an error. The calling
// convention is detected from the module's exports: palisade_alloc means the direct convention,
// anything else is an Extism plugin (the compatibility path, sdk/ABI.md "Extism compatibility").
// A module that is byte for byte one of Options.Native runs as the host's own Go code instead
// (native.go).
func (r *Runtime) Load(ctx context.Context, s Spec) (*Plugin, error) {
	s = s.withDefaults(r)
	p := &Plugin{
		spec:  s,
		idle:  make([]instance, 0, s.PoolSize),
		ready: make(chan struct{}, s.PoolSize),
		slots: make(chan struct{}, s.PoolSize),
		live:  make(map[instance]struct{}),
		cold:  make(map[instance]bool),
	}
	if n := r.nativeFor(s.Wasm); n != nil {
		p.native = n
	} else if exportsDirect(s.Wasm) {
		wasm := s.Wasm
		stopped := !s.Uninterruptible && !s.closeOnContextDone
		if stopped {
			var err error
			if wasm, err = r.instrumented(s.Wasm, stopByGlobal); err != nil {
				return nil, fmt.Errorf("stage %q: instrument: %w", s.Name, err)
			}
		}
		st, err := r.directStageFor(ctx, s, wasm, stopped)
		if err != nil {
			return nil, fmt.Errorf("stage %q: compile: %w", s.Name, err)
		}
		st.linear = &p.stats.LinearBytes
		p.direct = st
	} else {
		compiled, err := r.compileExtism(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("stage %q: compile: %w", s.Name, err)
		}
		p.compiled = compiled
	}
	for range s.PoolSize {
		p.slots <- struct{}{}
	}
	// Fill the pool (its Warm part) before the plugin serves (a swap must not leave the first
	// requests waiting for instances to start), which also proves the module starts.
	_, err := p.startIdle(ctx, s.Warm)
	if err != nil {
		p.Close(ctx)
		return nil, fmt.Errorf("stage %q: start: %w", s.Name, err)
	}
	// Instances come from the compiled module: the module's bytes (megabytes for a Go guest)
	// need not live as long as the plugin.
	p.spec.Wasm = nil
	return p, nil
}

func (r *Runtime) compileExtism(ctx context.Context, s Spec) (*extism.CompiledPlugin, error) {
	ms := s.Timeout.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	wasm := s.Wasm
	if !s.Uninterruptible {
		// wazero's close-on-context-done checks only loop headers: instrument adds the
		// function-entry checks that stop loop-free recursion (stopByWazero).
		var err error
		if wasm, err = r.instrumented(s.Wasm, stopByWazero); err != nil {
			return nil, fmt.Errorf("instrument: %w", err)
		}
	}
	manifest := extism.Manifest{
		Wasm:    []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Config:  s.Config,
		Timeout: uint64(ms),
		Memory:  &extism.ManifestMemory{MaxPages: s.MaxPages},
	}
	rc := wazero.NewRuntimeConfig().WithCompilationCache(r.cache).WithCloseOnContextDone(true)
	if s.Uninterruptible {
		manifest.Timeout = 0 // Extism turns close-on-context-done on whenever a timeout is set
		rc = wazero.NewRuntimeConfig().WithCompilationCache(r.cache)
	}
	cfg := extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: rc,
	}
	return extism.NewCompiledPlugin(ctx, manifest, cfg, extismHostFunctions(s.HostFunctions))
}

// Convention names the calling convention the plugin was detected to use: "direct" (the one
// every SDK targets) or "extism" (the compatibility path).
func (p *Plugin) Convention() string {
	if p.native != nil {
		return "native"
	}
	if p.direct != nil {
		return "direct"
	}
	return "extism"
}

func (p *Plugin) newInstance(ctx context.Context) (instance, error) {
	inst, err := p.startInstance(ctx)
	if err != nil {
		if !errors.Is(err, errAbandoned) { // an abandoned start frees its slot when it returns
			p.slots <- struct{}{}
		}
		if errors.Is(err, errInterrupted) || errors.Is(err, errAbandoned) || isTimeout(err) {
			err = fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		return nil, err
	}
	return p.initInstance(ctx, inst)
}

// startInstance instantiates the module under the init timeout: the guest's start function
// (and, for direct plugins, _initialize) runs here. An untrusted guest is stopped at the
// deadline (direct: instrument moved the start function under the stop timer; Extism: wazero's
// close-on-context-done); a trusted one cannot be stopped and is abandoned (see startWatched).
func (p *Plugin) startInstance(ctx context.Context) (instance, error) {
	// Real clocks: wazero's default is a fake clock, and policies have time windows.
	mc := wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime()
	timeout := p.spec.InitTimeout
	start := func(ctx context.Context) (instance, error) {
		ictx, cancel := context.WithTimeout(context.WithValue(ctx, initTimeoutKey{}, timeout), timeout)
		defer cancel()
		if p.native != nil {
			return newNativeInstance(p.native, p.spec), nil
		}
		if p.direct != nil {
			in, err := p.direct.instantiate(ictx, mc)
			if err != nil {
				return nil, err // not a nil *directInstance in a non-nil instance
			}
			return in, nil
		}
		in, err := p.compiled.Instance(ictx, extism.PluginInstanceConfig{ModuleConfig: mc})
		if err != nil {
			return nil, err
		}
		log := p.spec.Logger
		name := p.spec.Name
		in.SetLogger(func(l extism.LogLevel, msg string) {
			log.Debug("plugin log", "stage", name, "level", l.String(), "msg", msg)
		})
		return &extismInstance{p: in, timeout: p.spec.Timeout}, nil
	}
	if p.spec.Uninterruptible {
		return p.startWatched(ctx, timeout, start)
	}
	return start(ctx)
}

// startWatched runs start on its own goroutine and stops waiting for it after timeout (or when
// ctx ends), like callWatched: a trusted guest's start function runs inside instantiation,
// which nothing interrupts. An abandoned instance is closed, and its pool slot freed, once
// start returns, which a guest stuck in a loop never does.
func (p *Plugin) startWatched(ctx context.Context, timeout time.Duration, start func(context.Context) (instance, error)) (instance, error) {
	type result struct {
		inst instance
		err  error
	}
	done := make(chan result, 1)
	go func() {
		inst, err := start(context.WithoutCancel(ctx))
		done <- result{inst, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.inst, r.err
	case <-t.C:
	case <-ctx.Done():
	}
	go func() {
		if r := <-done; r.err == nil {
			r.inst.close(context.Background())
		}
		p.slots <- struct{}{}
	}()
	return nil, fmt.Errorf("instantiate (trusted, so not interruptible) after %s: %w", timeout, errAbandoned)
}

// initInstance adds a started instance to the pool's books and starts its guest runtime.
func (p *Plugin) initInstance(ctx context.Context, inst instance) (instance, error) {
	p.mu.Lock()
	p.live[inst] = struct{}{}
	p.mu.Unlock()
	p.stats.Instances.Add(1)
	// Start the guest runtime now, under the init timeout, so the first verdict is not charged
	// for it: through describe when the plugin has it (it has no side effects by the ABI),
	// otherwise on the instance's first call.
	if inst.exports("describe") {
		_, out, err := p.invoke(ctx, inst, "describe", nil, p.spec.InitTimeout)
		if err != nil {
			p.discard(inst)
			if errors.Is(err, errInterrupted) || errors.Is(err, errAbandoned) || isTimeout(err) {
				err = fmt.Errorf("%w: %w", ErrTimeout, err)
			}
			return nil, fmt.Errorf("start: describe: %w", err)
		}
		if len(out) == 0 {
			p.undescribed.Store(true)
		}
	} else {
		p.mu.Lock()
		p.cold[inst] = true
		p.mu.Unlock()
	}
	return inst, nil
}

// invoke calls fn on inst bounded by timeout. An interruptible call is stopped by the runtime;
// an uninterruptible one is abandoned (see callWatched) and reported as a timeout.
func (p *Plugin) invoke(ctx context.Context, inst instance, fn string, input []byte, timeout time.Duration) (uint32, []byte, error) {
	if p.native != nil {
		return callNative(ctx, inst, fn, input, timeout)
	}
	if p.spec.Uninterruptible {
		return p.callWatched(ctx, inst, fn, input, timeout)
	}
	if e, ok := inst.(*extismInstance); ok {
		e.timeout = timeout // Extism applies it with close-on-context-done
		return inst.call(ctx, fn, input)
	}
	in := inst.(*directInstance)
	if !in.d.stopped { // closeOnContextDone
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return in.call(ctx, fn, input)
	}
	return in.callBounded(ctx, fn, input, timeout)
}

// acquire returns an idle instance, or a new one if the pool has room, or waits: until ctx ends
// or, when deadline is set, until then. The timer for the deadline is made only when it has to
// wait, so a call that finds an idle instance costs none.
func (p *Plugin) acquire(ctx context.Context, deadline time.Time) (instance, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	select {
	case <-p.ready:
		return p.pop(), nil
	default:
	}
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-p.ready:
		return p.pop(), nil
	case <-p.slots:
		return p.newInstance(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-expired:
		return nil, fmt.Errorf("no instance free within the bound: %w", context.DeadlineExceeded)
	}
}

func (p *Plugin) release(inst instance) {
	if p.closed.Load() {
		p.discard(inst)
		return
	}
	p.mu.Lock()
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	p.ready <- struct{}{}
}

// pop takes the instance released last; the caller holds one of ready's tokens, so the stack
// has at least one (release pushes before it adds the token).
func (p *Plugin) pop() instance {
	p.mu.Lock()
	n := len(p.idle) - 1
	inst := p.idle[n]
	p.idle[n] = nil
	p.idle = p.idle[:n]
	p.mu.Unlock()
	return inst
}

// takeIdle pops an idle instance without waiting; false when none is idle.
func (p *Plugin) takeIdle() (instance, bool) {
	select {
	case <-p.ready:
		return p.pop(), true
	default:
		return nil, false
	}
}

// discard closes a broken instance and frees its slot; the next acquire creates a replacement.
func (p *Plugin) discard(inst instance) {
	p.mu.Lock()
	_, ok := p.live[inst]
	delete(p.live, inst)
	delete(p.cold, inst)
	p.mu.Unlock()
	if !ok {
		return
	}
	inst.close(context.Background())
	p.stats.Instances.Add(-1)
	p.slots <- struct{}{}
}

// errAbandoned marks an uninterruptible call that was still running at its timeout.
var errAbandoned = errors.New("still running at the timeout; abandoned")

// Call runs export fn with input on a pooled instance. A trap or timeout discards the instance.
func (p *Plugin) Call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	return p.call(ctx, fn, input, time.Time{})
}

// call is Call; a deadline that is set bounds the wait for an instance and the call together,
// as a context with that deadline would, without the context's timer per call.
func (p *Plugin) call(ctx context.Context, fn string, input []byte, deadline time.Time) ([]byte, error) {
	return p.callRead(ctx, fn, input, deadline, nil, nil)
}

// callRead is call; with read set, it hands the output to read while the instance is still
// held and returns read's error and no bytes. The output is then not copied out of the
// instance: read sees the instance's own bytes (a native instance's reused verdict buffer, a
// Wasm instance's memory), which are the next call's once the instance is back in the pool.
func (p *Plugin) callRead(ctx context.Context, fn string, input []byte, deadline time.Time, read func([]byte, *abi.Verdict) error, dst *abi.Verdict) ([]byte, error) {
	inst, err := p.acquire(ctx, deadline)
	if err != nil {
		return nil, fmt.Errorf("stage %q: instance: %w", p.spec.Name, err)
	}
	p.stats.Calls.Add(1)
	timeout := p.spec.Timeout
	p.mu.Lock()
	cold := p.cold[inst]
	if cold {
		delete(p.cold, inst)
		timeout = p.spec.InitTimeout
	}
	p.mu.Unlock()
	if !deadline.IsZero() {
		// What is left of the bound after the wait; a call with none left still runs and is
		// stopped at its first check, as one under an expired context is.
		timeout = min(timeout, max(time.Until(deadline), time.Nanosecond))
	}
	if n, ok := inst.(*nativeInstance); ok {
		n.borrow = read != nil // no copy of its verdict buffer: read is done before release
	}
	rc, out, err := p.invoke(ctx, inst, fn, input, timeout)
	if errors.Is(err, errAbandoned) {
		p.stats.Failures.Add(1)
		p.stats.Timeouts.Add(1)
		p.stats.Replaced.Add(1)
		return nil, fmt.Errorf("stage %q: %s: %w: %w", p.spec.Name, fn, ErrTimeout, err)
	}
	if err != nil || rc != 0 {
		p.stats.Failures.Add(1)
		// Classify before the instance goes away.
		kind := ErrPluginErr
		switch {
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			kind = ErrTimeout
		case errors.Is(err, errInterrupted):
			kind = ErrTimeout
		case err != nil && rc == 0 && isTimeout(err):
			kind = ErrTimeout
		case err != nil && rc == 0 && isTrap(err):
			kind = ErrTrap
		case err != nil && p.compiled != nil && isTimeout(err):
			kind = ErrTimeout
		case err != nil && p.compiled != nil && isTrap(err):
			kind = ErrTrap
		}
		if kind == ErrTimeout {
			p.stats.Timeouts.Add(1)
		}
		if kind != ErrPluginErr {
			p.stats.Replaced.Add(1)
			p.discard(inst)
		} else {
			p.release(inst)
		}
		if err == nil {
			err = fmt.Errorf("exit code %d", rc)
		}
		return nil, fmt.Errorf("stage %q: %s: %w: %w", p.spec.Name, fn, kind, err)
	}
	var readErr error
	switch {
	case read != nil:
		// Read while the instance is held: the bytes are still this call's.
		readErr, out = read(out, dst), nil
	case p.compiled != nil:
		// Output is a view of instance memory in some SDK versions: copy before release.
		out = append([]byte(nil), out...)
	}
	if p.nearCap(inst) {
		// Retire it now, between calls, rather than let a later call trap out of memory
		// and fail: a guest's heap that creeps (a Go runtime never gives memory back) reaches
		// any cap in time.
		p.stats.Retired.Add(1)
		p.spec.Logger.Info("plugin instance retired near its memory cap", "stage", p.spec.Name,
			"linear_bytes", inst.(*directInstance).mem.Size(), "cap_bytes", p.MaxBytes())
		p.discard(inst)
		return out, readErr
	}
	p.release(inst)
	return out, readErr
}

// callWatched runs an uninterruptible call on its own goroutine and stops waiting for it after
// timeout (or when ctx ends). An abandoned instance is discarded once the call returns, which a
// plugin stuck in a loop never does: hence only for trusted plugins.
func (p *Plugin) callWatched(ctx context.Context, inst instance, fn string, input []byte, timeout time.Duration) (uint32, []byte, error) {
	type result struct {
		rc  uint32
		out []byte
		err error
	}
	done := make(chan result, 1)
	// The guest cannot see the deadline, but its host functions can: a slow one gives up.
	dl := time.Now().Add(timeout)
	if c, ok := ctx.Deadline(); ok && c.Before(dl) {
		dl = c
	}
	cctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), dl)
	go func() {
		defer cancel()
		rc, out, err := inst.call(cctx, fn, input)
		done <- result{rc, append([]byte(nil), out...), err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.rc, r.out, r.err
	case <-t.C:
	case <-ctx.Done():
	}
	go func() {
		<-done
		p.discard(inst)
	}()
	return 0, nil, fmt.Errorf("after %s: %w", timeout, errAbandoned)
}

// Evaluate calls the evaluate export with an envelope and returns the raw verdict JSON.
func (p *Plugin) Evaluate(ctx context.Context, envelope []byte) ([]byte, error) {
	return p.Call(ctx, "evaluate", envelope)
}

// EvaluateWithin is Evaluate with the wait for an instance and the call bounded together by
// bound (host/chain's per-stage bound), at the cost of no timer when an instance is free.
func (p *Plugin) EvaluateWithin(ctx context.Context, envelope []byte, bound time.Duration) ([]byte, error) {
	return p.call(ctx, "evaluate", envelope, time.Now().Add(bound))
}

// EvaluateVerdict is EvaluateWithin for a caller that wants only the decoded verdict: decode
// reads the output into dst before the instance goes back to the pool, so the output is never
// copied (one allocation a stage call fewer). decode must keep nothing that aliases the bytes
// it is given (host/chain's DecodeVerdict copies every string and raw value it keeps): they
// are the instance's, and its next call's once decode returns. The error is the call's, or
// else decode's as it returned it.
func (p *Plugin) EvaluateVerdict(ctx context.Context, envelope []byte, bound time.Duration, dst *abi.Verdict, decode func(out []byte, dst *abi.Verdict) error) error {
	_, err := p.callRead(ctx, "evaluate", envelope, time.Now().Add(bound), decode, dst)
	return err
}

// Exports reports whether the module exports fn.
func (p *Plugin) Exports(ctx context.Context, fn string) (bool, error) {
	inst, err := p.acquire(ctx, time.Time{})
	if err != nil {
		return false, err
	}
	defer p.release(inst)
	if fn == "describe" && p.undescribed.Load() {
		return false, nil
	}
	return inst.exports(fn), nil
}

// Name is the stage name the plugin was loaded for.
func (p *Plugin) Name() string { return p.spec.Name }

// Stats returns the plugin's counters.
func (p *Plugin) Stats() *Stats { return &p.stats }

// Trim closes the pool's idle instances and returns how many; their slots stay free, so the
// next call starts an instance as a first call does. Calls in flight keep theirs.
func (p *Plugin) Trim() int {
	n := 0
	for {
		inst, ok := p.takeIdle()
		if !ok {
			return n
		}
		p.discard(inst)
		n++
	}
}

// Renew replaces the pool's idle instances with fresh ones and returns how many it started. A
// guest's linear memory never shrinks, so an instance keeps the size its largest calls grew it
// to: host/bundle renews a stage's instances after the bundle's fixtures (attack payloads, long
// outputs) so that serving starts from an instance's size at start, not at the fixtures' peak.
// Calls in flight keep theirs; a slot a call took meanwhile is left to that call. On an error
// the slot is free again, and the next call starts an instance as a first call does.
func (p *Plugin) Renew(ctx context.Context) (int, error) {
	return p.startIdle(ctx, p.Trim())
}

// startIdle takes up to n free slots without waiting, starts an instance in each, side by side,
// and leaves them idle; it returns how many started and the first error (a failed start frees
// its slot again, newInstance).
func (p *Plugin) startIdle(ctx context.Context, n int) (int, error) {
	errs := make(chan error, n)
	taken := 0
take:
	for range n {
		select {
		case <-p.slots:
		default:
			break take
		}
		taken++
		go func() {
			inst, err := p.newInstance(ctx)
			if err == nil {
				p.release(inst)
			}
			errs <- err
		}()
	}
	started := 0
	var err error
	for range taken {
		switch e := <-errs; {
		case e == nil:
			started++
		case err == nil:
			err = e
		}
	}
	return started, err
}

// Close closes every instance and the compiled module. Calls in flight fail with ErrClosed or a
// closed-module error; callers drain before closing (see host/chain).
func (p *Plugin) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	for {
		inst, ok := p.takeIdle()
		if !ok {
			break
		}
		p.discard(inst)
	}
	switch {
	case p.native != nil:
		return nil
	case p.direct != nil:
		p.direct.release(ctx) // the module closes with the last stage that runs it
		return nil
	}
	return p.compiled.Close(ctx)
}
