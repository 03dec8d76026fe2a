package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

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
}

// Runtime compiles plugins. One Runtime is shared by every stage of every bundle so that the
// compilation cache is shared.
type Runtime struct {
	cache  wazero.CompilationCache
	logger *slog.Logger
}

// NewRuntime returns a runtime whose compiled modules are cached in o.CacheDir.
func NewRuntime(ctx context.Context, o Options) (*Runtime, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{logger: o.Logger}
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
	// InitTimeout bounds an instance's first call, which also starts the guest's runtime (a Go
	// plugin's runtime and package init can take longer than a verdict may); 0 = 10s.
	InitTimeout time.Duration
	// Uninterruptible drops wazero's close-on-context-done checks, which make guest loops
	// several times slower, for plugins the operator trusts not to loop: Timeout then bounds
	// only how long a caller waits, and an instance still running past it is discarded when it
	// returns. Untrusted plugins must keep the default (false).
	Uninterruptible bool
	HostFunctions   []extism.HostFunction // see host/hostfn; every import the plugin declares must be here
	Logger          *slog.Logger          // nil = the runtime's
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
	compiled *extism.CompiledPlugin
	idle     chan *extism.Plugin
	slots    chan struct{} // one token per instance that may exist
	closed   atomic.Bool
	mu       sync.Mutex // guards live
	live     map[*extism.Plugin]struct{}
	cold     map[*extism.Plugin]bool // started but never called: the first call also initializes
	stats    Stats
}

// Stats counts calls and failures of one plugin.
type Stats struct {
	Calls     atomic.Int64
	Failures  atomic.Int64
	Timeouts  atomic.Int64
	Replaced  atomic.Int64
	Instances atomic.Int64
}

// Load compiles s.Wasm (using the cache), creates one instance to prove the module starts and
// returns the plugin. A module that fails to compile or to start is an error.
func (r *Runtime) Load(ctx context.Context, s Spec) (*Plugin, error) {
	s = s.withDefaults(r)
	ms := s.Timeout.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	manifest := extism.Manifest{
		Wasm:    []extism.Wasm{extism.WasmData{Data: s.Wasm, Name: "main"}},
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
	compiled, err := extism.NewCompiledPlugin(ctx, manifest, cfg, s.HostFunctions)
	if err != nil {
		return nil, fmt.Errorf("stage %q: compile: %w", s.Name, err)
	}
	p := &Plugin{
		spec:     s,
		compiled: compiled,
		idle:     make(chan *extism.Plugin, s.PoolSize),
		slots:    make(chan struct{}, s.PoolSize),
		live:     make(map[*extism.Plugin]struct{}),
		cold:     make(map[*extism.Plugin]bool),
	}
	for range s.PoolSize {
		p.slots <- struct{}{}
	}
	// Fill the pool before the plugin serves (a swap must not leave the first requests waiting
	// for instances to start), which also proves the module starts.
	errs := make(chan error, s.PoolSize)
	for range s.PoolSize {
		<-p.slots
		go func() {
			inst, err := p.newInstance(ctx)
			if err == nil {
				p.idle <- inst
			}
			errs <- err
		}()
	}
	for range s.PoolSize {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		p.Close(ctx)
		return nil, fmt.Errorf("stage %q: start: %w", s.Name, err)
	}
	return p, nil
}

func (p *Plugin) newInstance(ctx context.Context) (*extism.Plugin, error) {
	// Real clocks: wazero's default is a fake clock, and policies have time windows.
	mc := wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime()
	inst, err := p.compiled.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		p.slots <- struct{}{}
		return nil, err
	}
	log := p.spec.Logger
	name := p.spec.Name
	inst.SetLogger(func(l extism.LogLevel, msg string) {
		log.Debug("plugin log", "stage", name, "level", l.String(), "msg", msg)
	})
	p.mu.Lock()
	p.live[inst] = struct{}{}
	p.mu.Unlock()
	p.stats.Instances.Add(1)
	// Start the guest runtime now, under the init timeout, so the first verdict is not charged
	// for it: through describe when the plugin has it (it has no side effects by the ABI),
	// otherwise on the instance's first call.
	inst.Timeout = p.spec.InitTimeout
	if inst.FunctionExists("describe") {
		if _, _, err := inst.CallWithContext(ctx, "describe", nil); err != nil {
			p.discard(inst)
			return nil, fmt.Errorf("start: describe: %w", err)
		}
		inst.Timeout = p.spec.Timeout
	} else {
		p.mu.Lock()
		p.cold[inst] = true
		p.mu.Unlock()
	}
	return inst, nil
}

// acquire returns an idle instance, or a new one if the pool has room, or waits.
func (p *Plugin) acquire(ctx context.Context) (*extism.Plugin, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	select {
	case inst := <-p.idle:
		return inst, nil
	default:
	}
	select {
	case inst := <-p.idle:
		return inst, nil
	case <-p.slots:
		return p.newInstance(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Plugin) release(inst *extism.Plugin) {
	if p.closed.Load() {
		p.discard(inst)
		return
	}
	p.idle <- inst
}

// discard closes a broken instance and frees its slot; the next acquire creates a replacement.
func (p *Plugin) discard(inst *extism.Plugin) {
	p.mu.Lock()
	_, ok := p.live[inst]
	delete(p.live, inst)
	delete(p.cold, inst)
	p.mu.Unlock()
	if !ok {
		return
	}
	inst.Close(context.Background())
	p.stats.Instances.Add(-1)
	p.slots <- struct{}{}
}

// Call runs export fn with input on a pooled instance. A trap or timeout discards the instance.
func (p *Plugin) Call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	inst, err := p.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("stage %q: instance: %w", p.spec.Name, err)
	}
	p.stats.Calls.Add(1)
	var rc uint32
	var out []byte
	if p.spec.Uninterruptible {
		var abandoned bool
		rc, out, err, abandoned = p.callWatched(ctx, inst, fn, input)
		if abandoned {
			p.stats.Failures.Add(1)
			p.stats.Timeouts.Add(1)
			p.stats.Replaced.Add(1)
			return nil, fmt.Errorf("stage %q: %s: %w: %w", p.spec.Name, fn, ErrTimeout, err)
		}
	} else {
		rc, out, err = inst.CallWithContext(ctx, fn, input)
	}
	if inst.Timeout != p.spec.Timeout {
		p.mu.Lock()
		delete(p.cold, inst)
		p.mu.Unlock()
		inst.Timeout = p.spec.Timeout
	}
	if err != nil || rc != 0 {
		p.stats.Failures.Add(1)
		// Classify before the instance goes away.
		kind := ErrPluginErr
		switch {
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			kind = ErrTimeout
		case err != nil && isTimeout(err):
			kind = ErrTimeout
		case err != nil && isTrap(err):
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
	// Output is a view of instance memory in some SDK versions: copy before release.
	out = append([]byte(nil), out...)
	p.release(inst)
	return out, nil
}

// callWatched runs an uninterruptible call on its own goroutine and stops waiting for it after
// the instance's timeout (or when ctx ends). An abandoned instance is discarded once the call
// returns, which a plugin stuck in a loop never does: hence only for trusted plugins.
func (p *Plugin) callWatched(ctx context.Context, inst *extism.Plugin, fn string, input []byte) (uint32, []byte, error, bool) {
	type result struct {
		rc  uint32
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		rc, out, err := inst.CallWithContext(context.WithoutCancel(ctx), fn, input)
		done <- result{rc, append([]byte(nil), out...), err}
	}()
	t := time.NewTimer(inst.Timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.rc, r.out, r.err, false
	case <-t.C:
	case <-ctx.Done():
	}
	go func() {
		<-done
		p.discard(inst)
	}()
	return 0, nil, fmt.Errorf("still running after %s; abandoned", inst.Timeout), true
}

// Evaluate calls the evaluate export with an envelope and returns the raw verdict JSON.
func (p *Plugin) Evaluate(ctx context.Context, envelope []byte) ([]byte, error) {
	return p.Call(ctx, "evaluate", envelope)
}

// Exports reports whether the module exports fn.
func (p *Plugin) Exports(ctx context.Context, fn string) (bool, error) {
	inst, err := p.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer p.release(inst)
	return inst.FunctionExists(fn), nil
}

// Name is the stage name the plugin was loaded for.
func (p *Plugin) Name() string { return p.spec.Name }

// Stats returns the plugin's counters.
func (p *Plugin) Stats() *Stats { return &p.stats }

// Close closes every instance and the compiled module. Calls in flight fail with ErrClosed or a
// closed-module error; callers drain before closing (see host/chain).
func (p *Plugin) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	for {
		select {
		case inst := <-p.idle:
			p.discard(inst)
			continue
		default:
		}
		break
	}
	return p.compiled.Close(ctx)
}
