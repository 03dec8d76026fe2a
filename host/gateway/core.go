package gateway

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/version"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
)

// CoreOptions configure NewCore.
type CoreOptions struct {
	// Config supplies Bundle (the source, for the trust default), Plugins.CacheDir and
	// Audit. Defaults apply.
	Config config.Config
	// Sections supplies the bundles, infer and llm sections (File.Sections).
	Sections Sections
	// MaxPool caps every stage's instance pool (0 = as the bundle says); the hook, which decides
	// one call per process, sets 1.
	MaxPool int
	// MemoryCache keeps compiled modules in memory only, ignoring Plugins.CacheDir (policy test
	// without --data-dir writes nothing).
	MemoryCache bool
	// Sequences, if set, is the file in which Build remembers the last sequence accepted per
	// bundle name and refuses an older one (bundle.Sequences): the rollback protection of the
	// one-process modes (NewLocal sets DATA_DIR/bundles/sequences.json). "" = none (policy test).
	Sequences string
	// Fixtures, if set, is the file in which Build remembers the bundles whose fixtures passed
	// on this host and version (bundle.FixtureMemo), so a process per session does not rerun
	// them on every start (NewLocal sets DATA_DIR/bundles/fixtures-passed.json). "" = always run.
	Fixtures string
	// SelfPaths are the engine's own paths only the caller knows (the hook's socket folder),
	// added to SelfPaths' list for the envelopes' `engine` field.
	SelfPaths []string
	Logger    *slog.Logger // nil = discard
}

// Core is what every way into Palisade decides with, built in one place by NewCore for `serve`
// (New), `proxy`, `hook` and `mcp` (NewLocal) and `policy test`: the plugin runtime, the host
// function backends (kv; sample through the llm: section's judge; infer through ONNX Runtime for
// each bundle's models:) and the bundle trust policy (bundles.trusted_keys and allow_unsigned).
// So one bundle gets the same stages, the same models and the same signature check, and is
// refused for the same reason, in every mode.
type Core struct {
	Runtime *plugin.Runtime
	// Deps are the host function backends bundles are built with; Sampler is nil without an
	// llm: section, and Inferer is set per bundle from its models: section.
	Deps hostfn.Deps
	// Judge is the llm: section's judge (nil without one).
	Judge *llm.Judge
	// Keys are the trusted bundle keys; AllowUnsigned lets a bundle without signature.json pass
	// (a badly signed one never does). Without a bundles: section a local folder or archive
	// loads unsigned with a warning (development: proxy, hook, mcp, policy test; serve refuses
	// such a config first, File.TrustChoice) and a remote source must be signed.
	Keys          bundle.KeySet
	AllowUnsigned bool
	// Bundles is the decoded bundles: section (sources, watch and keep settings).
	Bundles BundlesConfig

	cfg     config.Config // with defaults
	infer   InferConfig
	maxPool int
	log     *slog.Logger
	seq     *bundle.Sequences   // nil = no rollback protection
	fixed   *bundle.FixtureMemo // nil = fixtures always run
	self    *abi.Engine         // the engine's own paths (SelfPaths)

	mu   sync.Mutex
	regs map[*infer.Registry]bool
}

// NewCore builds the core from o. It first validates the feature sections (Sections.Validate),
// so each mode refuses the same bad config up front, naming the field (*config.FieldError).
func NewCore(ctx context.Context, o CoreOptions) (_ *Core, err error) {
	cfg := o.Config.WithDefaults()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Core{maxPool: o.MaxPool, log: o.Logger, regs: map[*infer.Registry]bool{}}
	if o.Sequences != "" {
		c.seq = &bundle.Sequences{Path: o.Sequences}
	}
	if o.Fixtures != "" {
		c.fixed = &bundle.FixtureMemo{Path: o.Fixtures, Host: version.String()}
	}
	if err := o.Sections.Validate(&cfg); err != nil {
		return nil, err
	}
	c.cfg = cfg
	// 1. Bundle trust.
	if o.Sections.Bundles != nil {
		c.Bundles = *o.Sections.Bundles
	}
	keys := make([]string, len(c.Bundles.TrustedKeys)) // the caller's slice is left alone
	for i, k := range c.Bundles.TrustedKeys {
		keys[i] = cfg.Resolve(k)
	}
	c.Bundles.TrustedKeys = keys
	if c.Keys, err = bundle.LoadKeys(c.Bundles.TrustedKeys); err != nil {
		return nil, &config.FieldError{Path: "bundles.trusted_keys", Err: err}
	}
	c.AllowUnsigned = c.Bundles.AllowUnsigned
	c.self = SelfPaths(cfg, c.Bundles.TrustedKeys, o.SelfPaths)
	if o.Sections.Bundles == nil && localSource(cfg.Bundle) {
		c.AllowUnsigned = true
		o.Logger.Warn("no bundles section in config: the local bundle is loaded without signature checks; add bundles.trusted_keys to require signatures")
	}
	if len(c.Keys) == 0 && !c.AllowUnsigned {
		o.Logger.Warn("no trusted bundle keys and unsigned bundles not allowed: every bundle will be rejected (set bundles.trusted_keys)")
	}
	// 2. Inference (ONNX Runtime is loaded when a bundle declares models).
	c.infer = o.Sections.Infer
	c.infer.Library = cfg.Resolve(c.infer.Library)
	// 3. LLM providers (the judge behind the sample host function).
	if lc := o.Sections.LLM; lc != nil {
		lo := lc.Options()
		lo.Logger = o.Logger.With("component", "llm")
		if c.Judge, err = llm.New(lo); err != nil {
			return nil, &config.FieldError{Path: "llm", Err: err}
		}
		c.Deps.Sampler = c.Judge
	}
	// 4. Host functions and the plugin runtime.
	c.Deps.KV = hostfn.NewMemKV()
	cache := cfg.Plugins.CacheDir
	if o.MemoryCache {
		cache = ""
	}
	native, err := firstparty.Natives()
	if err != nil {
		return nil, err
	}
	if c.Runtime, err = plugin.NewRuntime(ctx, plugin.Options{CacheDir: cache, Logger: o.Logger, Native: native}); err != nil {
		return nil, err
	}
	return c, nil
}

// localSource reports whether a bundle source is a folder or an archive (not http, https or
// nats): the sources that load unsigned when the config has no bundles: section.
func localSource(src string) bool {
	return !strings.HasPrefix(src, "nats:") && !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://")
}

// BuildOptions are the options every bundle is built with: this core's runtime, host function
// backends and model loading.
func (c *Core) BuildOptions() bundle.BuildOptions {
	track := func(r *infer.Registry, add bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if add {
			c.regs[r] = true
		} else {
			delete(c.regs, r)
		}
	}
	return bundle.BuildOptions{Runtime: c.Runtime, Deps: c.Deps, Logger: c.log, MaxPool: c.maxPool,
		Models: modelLoader(c.infer, c.log.With("component", "infer"), track), ServeDegraded: c.Bundles.ServeDegraded}
}

// Verify applies the trust policy to the bundle folder dir (bundle.CheckTrust): the same check,
// with the same errors, as the gateway's bundle manager.
func (c *Core) Verify(dir string) (keyID, digest string, err error) {
	return bundle.CheckTrust(dir, c.Keys, c.AllowUnsigned)
}

// NewManager makes the bundle manager a mode activates bundles with: the one activation path
// of every mode (bundle.Manager: a private staged copy, this core's trust policy checked over
// the copy, built from the copy only with this core's runtime, host functions and models, the
// sequence checked, bundle.activated and bundle.rejected recorded). o supplies what only the
// mode knows: the slot, the recorder, and for serve the data dir, shadow slot and per-stage
// metrics (o.Build; zero = BuildOptions). The trust policy is always this core's. An ephemeral
// manager (the one-process modes) gets the core's sequences file and fixture memo.
func (c *Core) NewManager(o bundle.ManagerOptions) (*bundle.Manager, error) {
	o.Keys, o.AllowUnsigned = c.Keys, c.AllowUnsigned
	if o.Build.Runtime == nil {
		o.Build = c.BuildOptions()
	}
	if o.Logger == nil {
		o.Logger = c.log
	}
	if o.Ephemeral {
		o.Sequences = c.seq
		if o.Build.Fixtures == nil {
			o.Build.Fixtures = c.fixed
		}
	}
	return bundle.NewManager(o)
}

// Build verifies and builds the bundle folder dir through an ephemeral manager (NewManager):
// staged once, the trust policy checked over the copy, built from the copy only, so the folder
// changing meanwhile cannot slip unchecked bytes into the chain. skipFixtures leaves the
// bundle's fixtures to the caller (policy test). With CoreOptions.Sequences set, a bundle whose
// sequence is below the last one accepted under its name is refused (bundle.ErrOlder). The
// bundle's staged copy is removed when its chain closes.
func (c *Core) Build(ctx context.Context, dir string, skipFixtures bool) (*bundle.Bundle, error) {
	o := c.BuildOptions()
	o.SkipFixtures = skipFixtures
	m, err := c.NewManager(bundle.ManagerOptions{Active: &chain.Active{}, Ephemeral: true, Build: o})
	if err != nil {
		return nil, err
	}
	if _, _, err := m.Activate(ctx, dir, "dir:"+dir); err != nil {
		return nil, err
	}
	return m.Bundle(), nil
}

// InferStatus reports the inference registries of the bundles built by this core and still open.
func (c *Core) InferStatus() []infer.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]infer.Status, 0, len(c.regs))
	for r := range c.regs {
		out = append(out, r.Status())
	}
	return out
}

// Close closes the plugin runtime (close the chains built with it first).
func (c *Core) Close(ctx context.Context) error {
	if c.Runtime == nil {
		return nil
	}
	return c.Runtime.Close(ctx)
}

// AuditOptions say where one mode's audit events go: what only that mode knows. The stream
// (audit.stream) and the logger come from the Core.
type AuditOptions struct {
	Conn           *nats.Conn    // nil = spool only until connected
	SpoolDir       string        // required: this process's own spool
	Gateway        string        // instance id stamped on events (host:port, or mode@host)
	Signer         audit.Signer  // nil = unsigned events
	PublishTimeout time.Duration // JetStream ack wait; 0 = audit.DefaultPublishTimeout
}

// Audit is one mode's audit: the publisher, and the one ring of recent events in front of it
// that the dashboard and the own MCP server read. Recent is the recorder an engine starts from.
type Audit struct {
	Publisher *audit.Publisher
	Recent    *audit.Ring
}

// OpenAudit opens the audit publisher on the config's stream and puts the ring of recent events
// in front of it. `serve` (New) and the one-process modes (NewLocal) both open audit here.
func (c *Core) OpenAudit(ctx context.Context, o AuditOptions) (*Audit, error) {
	p, err := audit.New(ctx, audit.Options{Conn: o.Conn, Stream: c.cfg.Audit.Stream, SpoolDir: o.SpoolDir, Gateway: o.Gateway,
		Signer: o.Signer, PublishTimeout: o.PublishTimeout, Logger: c.log.With("component", "audit")})
	if err != nil {
		return nil, err
	}
	return &Audit{Publisher: p, Recent: audit.NewRing(0, p)}, nil
}

// EngineOptions are the decision engine's options every mode starts from: the active chain, the
// recorder, the instance id stamped on events, audit.arguments, and the configured upstreams the
// hook resolves mcp__<server>__<tool> names against. A mode adds what only it has (metrics,
// hooks, an approver) and calls engine.NewEngine. Self is where the engine's own files are
// (SelfPaths), which every request envelope carries.
func (c *Core) EngineOptions(active *chain.Active, rec engine.Recorder, gateway string) engine.EngineOptions {
	return engine.EngineOptions{Active: active, Recorder: rec, Gateway: gateway, AuditArguments: c.cfg.Audit.Arguments, Logger: c.log,
		Hook: engine.HookOptions{Servers: upstreamNames(c.cfg)}, Self: c.self}
}
