package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/pin"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/host/selfmcp"
	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go"
)

// AgentsConfig is the `agents:` section of palisade.yaml: where agents meet the gateway.
//
//	agents:
//	  hook_token: ""        # bearer token for POST /v1/hook (palisade hook --gateway); "" = http.client_token
//	  mcp_token: ""         # serve Palisade's own MCP server at /palisade/mcp with this bearer token; "" = off
//	  pinning: true         # pin tool definitions (DATA_DIR/pins); false = off
//	  hook_allow_stages: [rules]  # stages whose allow (with a rule) the hook answers as allow
type AgentsConfig struct {
	HookToken       string   `yaml:"hook_token"`
	MCPToken        string   `yaml:"mcp_token"`
	Pinning         *bool    `yaml:"pinning"`
	HookAllowStages []string `yaml:"hook_allow_stages"`
}

// SelfMCPPath is where a gateway serves Palisade's own MCP server: behind the resource server
// when the authn: section is set (callers' principals, grants bound to them), else when
// agents.mcp_token is set, behind that one token.
const SelfMCPPath = "/palisade/mcp"

// agentsFeature serves the Claude Code hook endpoint, pins tool definitions (engine hook), keeps
// recent events for audit://recent, and optionally serves Palisade's own MCP server.
type agentsFeature struct {
	cfg    AgentsConfig
	pinner *pin.Pinner
	self   *selfmcp.Server
	cancel context.CancelFunc
}

func (a *agentsFeature) Name() string { return "agents" }

func (a *agentsFeature) Init(ctx context.Context, g *Gateway) error {
	a.cfg = g.Sections().Agents
	g.engOpts.Hook.AllowStages = a.cfg.HookAllowStages
	if a.cfg.Pinning == nil || *a.cfg.Pinning {
		p, err := pin.New(pin.Options{Dir: filepath.Join(g.DataDir(), "pins"), Recorder: recordVia{g}, Gateway: g.Instance(), Logger: g.Logger()})
		if err != nil {
			return err
		}
		a.pinner = p
		g.AddHook(p)
	}
	return nil
}

func (a *agentsFeature) Start(ctx context.Context, g *Gateway) error {
	hookToken := a.cfg.HookToken
	if hookToken == "" {
		hookToken = g.Config().HTTP.ClientToken // required when the gateway listens off loopback
	}
	hook := proxy.HookAuth(hookToken, g.Proxy().HookHandler())
	if g.authn != nil { // authn:: an access token, its principal who the calls are judged as
		hook = proxy.HookVerify(g.authn, g.Proxy().HookHandler())
	}
	g.Echo().POST(engine.HookPath, echo.WrapHandler(hook))
	if a.pinner != nil {
		grp := g.Admin().Group()
		grp.GET("/pins/:server", func(c echo.Context) error {
			return c.JSON(http.StatusOK, map[string]any{"pins": a.pinner.Pins(c.Param("server")), "pending": a.pinner.Pending(c.Param("server"))})
		})
		grp.POST("/pins/:server/:tool/approve", func(c echo.Context) error {
			if err := a.pinner.Approve(c.Param("server"), c.Param("tool")); err != nil {
				return echo.NewHTTPError(http.StatusNotFound, err.Error())
			}
			return c.NoContent(http.StatusNoContent)
		})
	}
	if a.cfg.MCPToken != "" || g.authn != nil {
		s, err := selfmcp.New(selfmcp.Options{Engine: g.Engine(), Recent: g.Recent(), Logger: g.Logger(), Permissions: g.permissions(), Limits: g.selfLimits()})
		if err != nil {
			return err
		}
		// With authn: the resource server verifies callers here as on /mcp (listen.go), and
		// grants bind to their principal; agents.mcp_token is then not used.
		h := s.VerifiedHTTPHandler()
		if g.authn == nil {
			if h, err = s.HTTPHandler(a.cfg.MCPToken); err != nil {
				return err
			}
		}
		a.self = s
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		a.cancel = cancel
		go s.Watch(wctx)
		g.Echo().Any(SelfMCPPath, echo.WrapHandler(h))
	}
	return nil
}

func (a *agentsFeature) Close(context.Context) error {
	if a.cancel != nil {
		a.cancel()
	}
	return nil
}

// Pinner returns the gateway's tool pinner (nil when pinning is off or the agents feature is not
// running). The HTTP proxy passes tools/list results to its ObserveTools.
func (g *Gateway) Pinner() *pin.Pinner {
	for _, f := range g.features {
		if a, ok := f.(*agentsFeature); ok {
			return a.pinner
		}
	}
	return nil
}

// LocalOptions configure a Local engine: the one-process modes (palisade hook, proxy, mcp,
// policy) that decide in process without starting a gateway.
type LocalOptions struct {
	// Config supplies Bundle (a folder), DataDir, Plugins.CacheDir, NATS (URL, or the embedded
	// server's host and port of a running gateway) and Audit. Defaults apply.
	Config config.Config
	// Sections are the feature sections (File.Sections): agents, bundles, infer and llm apply.
	Sections Sections
	// Name tags this process's audit spool and NATS connection (hook, stdio, mcp).
	Name string
	// NATSTimeout bounds the first connection to NATS; 0 = 300ms. Unreachable NATS is no error:
	// events spool in DATA_DIR/spool-local/<id> and a later run replays them.
	NATSTimeout time.Duration
	// NoAudit records nothing (policy tests).
	NoAudit bool
	// Pinning adds tool-definition pinning (DATA_DIR/pins), shared with the gateway.
	Pinning bool
	// OneCall starts one instance per stage instead of a pool: the process decides one call
	// (the hook) and pays for every instance it starts.
	OneCall bool
	// SelfPaths are engine paths only the caller knows (the hook's socket folder): see
	// CoreOptions.SelfPaths.
	SelfPaths []string
	Logger    *slog.Logger // nil = discard
}

// Local is a decision engine in this process: the bundle's chain, audit to NATS or a spool.
type Local struct {
	Engine *engine.Engine
	Active *chain.Active
	Bundle *bundle.Bundle // the bundle built at start (WatchBundle swaps Active, not this)
	Pinner *pin.Pinner    // nil unless LocalOptions.Pinning
	Recent *audit.Ring    // the latest events (audit://recent)

	cfg  config.Config
	log  *slog.Logger
	core *Core
	// mgr is the one activation path (Core.NewManager, ephemeral): NewLocal, WatchBundle and
	// Refresh all activate through it; rec passes its events on once the mode has started.
	mgr *bundle.Manager
	rec startedRecorder
	nc  *nats.Conn
	pub *audit.Publisher
	// signed: the events are signed with the data dir's bus identity (openAudit found one).
	signed bool
	spool  string
	lock   *os.File

	refreshMu sync.Mutex
	stamp     string // the bundle folder's file stamp when last checked (Refresh)
	digest    string // the digest of the active bundle
	broken    error  // why the folder at stamp does not build; nil when it does
}

// WatchBundle checks the bundle folder every interval (0 = 2s) until ctx ends, the way Refresh
// does: when it changed, the new bundle is verified (the Core's trust policy), built (fixtures
// included) and swapped in through the mode's bundle manager, or the current one keeps deciding
// and the manager records why (bundle.rejected). Long-lived modes (proxy, mcp) run it; the hook
// does not.
func (l *Local) WatchBundle(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_ = l.Refresh(ctx) // a bundle that does not build is logged and recorded by Refresh
	}
}

// startedRecorder passes events to the ring once the mode has started: the bundle a process
// starts with is not an event (a hook process starts on every call), a later swap is.
type startedRecorder struct{ ring atomic.Pointer[audit.Ring] }

func (r *startedRecorder) Record(ctx context.Context, ev audit.Event) {
	if ring := r.ring.Load(); ring != nil {
		ring.Record(ctx, ev)
	}
}

// NewLocal builds the Core (NewCore, as the gateway does), verifies and builds the bundle named
// by o.Config.Bundle (a folder) with it, and connects audit. A bundle the trust policy refuses
// is refused here with the same error the gateway's bundle manager gives.
func NewLocal(ctx context.Context, o LocalOptions) (_ *Local, err error) {
	cfg := o.Config.WithDefaults()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NATSTimeout <= 0 {
		o.NATSTimeout = 300 * time.Millisecond
	}
	if o.Name == "" {
		o.Name = "local"
	}
	if cfg.Bundle == "" {
		return nil, errors.New("no bundle: give --bundle DIR, PALISADE_BUNDLE or bundle: in the config")
	}
	if st, serr := os.Stat(cfg.Bundle); serr != nil || !st.IsDir() {
		return nil, fmt.Errorf("bundle %s: one-process modes need a bundle folder", cfg.Bundle)
	}
	l := &Local{cfg: cfg, log: o.Logger, Active: &chain.Active{}}
	// Audit connects while the bundle builds: both are round trips or disk reads, and a hook
	// process pays for them on every tool call.
	// The publisher itself is opened by the Core (OpenAudit), as in serve, once NewCore is done.
	auditDone := make(chan error, 1)
	coreReady := make(chan struct{})
	if o.NoAudit {
		auditDone <- nil
	} else {
		go func() { auditDone <- l.openAudit(ctx, o, coreReady) }()
	}
	defer func() {
		if auditDone != nil {
			if aerr := <-auditDone; err == nil {
				err = aerr
			}
		}
		if err != nil {
			l.Close(context.Background())
		}
	}()
	// The same Core as the gateway: runtime, host functions (the llm: section's judge answers
	// sample; an mcp sampling provider is skipped, there is no client), the bundle's models on
	// ONNX Runtime, and the bundle trust policy (bundles.trusted_keys, allow_unsigned).
	core := CoreOptions{Config: cfg, Sections: o.Sections, Logger: o.Logger, SelfPaths: o.SelfPaths,
		Sequences: filepath.Join(cfg.DataDir, "bundles", "sequences.json"),
		Fixtures:  filepath.Join(cfg.DataDir, "bundles", "fixtures-passed.json")}
	if o.OneCall {
		core.MaxPool = 1
	}
	l.core, err = NewCore(ctx, core)
	close(coreReady)
	if err != nil {
		return nil, err
	}
	instance := o.Name + "@" + hostname()
	l.mgr, err = l.core.NewManager(bundle.ManagerOptions{Active: l.Active, Ephemeral: true, Recorder: &l.rec, Gateway: instance,
		Logger: o.Logger.With("component", "bundles")})
	if err != nil {
		return nil, err
	}
	if _, _, err := l.mgr.Activate(ctx, cfg.Bundle, "dir:"+cfg.Bundle); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", cfg.Bundle, err)
	}
	l.Bundle = l.mgr.Bundle()
	l.digest = l.Bundle.Digest
	aerr := <-auditDone
	auditDone = nil
	if aerr != nil {
		return nil, aerr
	}
	ac := o.Sections.Agents
	if l.Recent == nil { // NoAudit: events are kept for audit://recent only
		l.Recent = audit.NewRing(0, nil)
	}
	l.rec.ring.Store(l.Recent)
	eo := l.core.EngineOptions(l.Active, l.Recent, instance)
	eo.Unsigned = !l.signed
	eo.Hook.AllowStages = ac.HookAllowStages
	if a := l.Bundle.Manifest.Audit.Arguments; a != "" {
		eo.AuditArguments = a
	}
	if o.Pinning {
		l.Pinner, err = pin.New(pin.Options{Dir: filepath.Join(cfg.DataDir, "pins"), Recorder: l.Recent, Gateway: eo.Gateway, Logger: o.Logger})
		if err != nil {
			return nil, err
		}
		eo.Hooks = append(eo.Hooks, l.Pinner)
	}
	l.Engine = engine.NewEngine(eo)
	return l, nil
}

// Refresh makes the active chain the bundle folder's current contents, verified and built the
// way NewLocal does it (the Core's trust policy, fixtures included), or returns why it cannot:
// then the caller must not decide with the active chain, which no longer is the folder's. The
// long-lived hook engine calls it before every decision, so it answers what a new process
// would. A cheap stamp of the folder (each file's name, size, mtime, ctime and inode) is taken
// first; only when it changed is the folder hashed (bundle.Digest) and, when the digest
// changed, rebuilt.
func (l *Local) Refresh(ctx context.Context) error {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	dir := l.cfg.Bundle
	stamp, err := folderStamp(dir)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", dir, err)
	}
	if stamp == l.stamp {
		return l.broken
	}
	l.stamp, l.broken = stamp, nil
	d, err := bundle.Digest(dir)
	if err != nil {
		l.broken = fmt.Errorf("bundle %s: %w", dir, err)
		return l.broken
	}
	if d == l.digest && l.Active.Load() != nil {
		return nil
	}
	if _, _, err := l.mgr.Activate(ctx, dir, "dir:"+dir); err != nil {
		// The manager logged and recorded it (bundle.rejected) and kept the active chain.
		l.broken = fmt.Errorf("bundle %s: %w", dir, err)
		return l.broken
	}
	l.digest = l.mgr.Bundle().Digest
	return nil
}

// folderStamp summarizes dir's files by name, size, mode, mtime and, where the platform has
// them, ctime and inode (fileStat): a file rewritten in place changes its ctime even when its
// size and mtime are put back.
func folderStamp(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Stat(path) // follow links, as bundle.Digest reads through them
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q %d %o %d %s\n", path, fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), fileStat(fi))
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// NATSURL is where one-process modes publish audit: the configured URL, else a running gateway's
// embedded server.
func NATSURL(c config.Config) string {
	c = c.WithDefaults()
	if c.NATS.URL != "" {
		return c.NATS.URL
	}
	return "nats://" + net.JoinHostPort(c.NATS.Host, strconv.Itoa(c.NATS.Port))
}

// openAudit connects to NATS (never waiting past NATSTimeout) and opens a publisher on a spool
// directory of this process's own, locked so concurrent processes never share one.
func (l *Local) openAudit(ctx context.Context, o LocalOptions, coreReady <-chan struct{}) error {
	root := filepath.Join(l.cfg.DataDir, "spool-local")
	dir := filepath.Join(root, o.Name+"-"+audit.NewID())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	lock, err := lockDir(dir, true)
	if err != nil {
		return err
	}
	l.spool, l.lock = dir, lock
	opts := append([]nats.Option{nats.Name("palisade " + o.Name), nats.Timeout(o.NATSTimeout),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}, audit.ConnOptions()...)
	// The gateway identity of the data dir (or nats.creds): the embedded server of a gateway
	// sharing this data dir accepts it, and it signs the events. Without one, the connection
	// is anonymous (an external server without auth) and events go unsigned.
	// An external URL without nats.creds is reached without credentials.
	var signer audit.Signer
	id, ierr := bus.LoadIdentity(l.cfg.DataDir, bus.RoleGateway, l.cfg.NATS.Creds)
	if l.cfg.NATS.URL != "" && l.cfg.NATS.Creds == "" {
		id, ierr = nil, bus.ErrNoIdentity
	}
	switch {
	case ierr == nil:
		opts = append(opts, id.Options()...)
		signer = id
		l.signed = true
	case errors.Is(ierr, bus.ErrNoIdentity):
		l.log.Debug("no nats identity; connecting without credentials", "err", ierr)
	default:
		return fmt.Errorf("audit: %w", ierr)
	}
	l.nc, err = nats.Connect(NATSURL(l.cfg), opts...)
	if err != nil {
		return fmt.Errorf("audit: nats: %w", err)
	}
	<-coreReady
	if l.core == nil {
		return nil // NewCore failed: NewLocal returns its error
	}
	a, err := l.core.OpenAudit(ctx, AuditOptions{Conn: l.nc, SpoolDir: dir, Gateway: o.Name + "@" + hostname(), Signer: signer, PublishTimeout: time.Second})
	if err != nil {
		return err
	}
	l.pub, l.Recent = a.Publisher, a.Recent
	if l.nc.IsConnected() {
		l.replayLeftovers(ctx, root, o.Name)
	}
	return nil
}

// maxReplays bounds how many leftover spools one run replays, so a hook right after a long
// outage stays quick; the next runs take the rest.
const maxReplays = 8

// replayLeftovers publishes spools that earlier processes left (NATS was down then), oldest
// first within each mode (names end in a time-sorted id), one at a time, skipping those another
// live process holds.
func (l *Local) replayLeftovers(ctx context.Context, root, name string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	replayed := 0
	for _, e := range ents {
		if replayed >= maxReplays {
			return
		}
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || dir == l.spool || !strings.Contains(e.Name(), "-") {
			continue
		}
		lock, err := lockDir(dir, false)
		if err != nil {
			continue // a live process owns it
		}
		replayed++
		p, err := audit.New(ctx, audit.Options{Conn: l.nc, Stream: l.cfg.Audit.Stream, SpoolDir: dir, PublishTimeout: time.Second, Logger: l.log})
		if err == nil {
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = p.Flush(fctx)
			_ = p.Close(fctx)
			cancel()
			if p.Stats().Pending == 0 {
				_ = os.RemoveAll(dir)
			}
		}
		lock.Close()
	}
}

// lockDir takes an exclusive flock on dir/lock; wait=false fails at once when it is held.
func lockDir(dir string, wait bool) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// AuditStats reports the local publisher's counters (zero when audit is off).
func (l *Local) AuditStats() audit.Stats {
	if l.pub == nil {
		return audit.Stats{}
	}
	return l.pub.Stats()
}

// Close flushes audit (bounded by ctx: unpublished events stay in the spool for the next run),
// closes the chain and the runtime.
func (l *Local) Close(ctx context.Context) error {
	if l.pub != nil {
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if l.nc != nil && l.nc.IsConnected() {
			_ = l.pub.Flush(fctx)
		}
		_ = l.pub.Close(fctx)
		cancel()
		if l.pub.Stats().Pending == 0 && l.spool != "" {
			_ = os.RemoveAll(l.spool)
		}
	}
	if l.nc != nil {
		l.nc.Close()
	}
	if l.lock != nil {
		l.lock.Close()
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if ch := l.Active.Swap(nil); ch != nil {
		_ = ch.CloseWhenDrained(cctx) // removes its staged copy
	}
	if l.mgr != nil {
		_ = l.mgr.Close(cctx) // the chains swapped out, drained and closed
	}
	cancel()
	if l.core != nil {
		_ = l.core.Close(ctx)
	}
	return nil
}

// upstreamNames are the configured upstreams' names: MCP servers the hook resolves Claude
// Code's mcp__<server>__<tool> names against, besides Claude Code's own configuration.
func upstreamNames(c config.Config) []string {
	var out []string
	for _, u := range c.Upstreams {
		out = append(out, u.Name)
	}
	return out
}
