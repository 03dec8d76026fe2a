package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a gateway.
type Options struct {
	Config config.Config // validated by New after defaults
	// Sections are the feature sections (File.Sections), validated by New with Config before
	// anything starts.
	Sections Sections
	Logger   *slog.Logger // nil = discard
	// Instance names this gateway in audit events; "" = hostname:port.
	Instance string
}

// Feature is an optional part of the gateway (bundle sources, approvals, dashboard, inference,
// judge, tokens, tool pinning...). The gateway runs the features in Features, in that order.
type Feature interface {
	Name() string
	// Init runs before the engine and routes are built: read config extensions, set host
	// function backends, set the Approver, add Hooks, wrap the Recorder, claim bundle loading.
	Init(ctx context.Context, g *Gateway) error
	// Start runs once the routes exist and (unless a feature claimed it) a bundle is active.
	Start(ctx context.Context, g *Gateway) error
	// Close releases what Init and Start took; it runs in reverse registration order.
	Close(ctx context.Context) error
}

// FeatureSpec names a feature and its constructor. Its config section is a field of Sections
// (the one typed struct of palisade.yaml), never registered at run time.
type FeatureSpec struct {
	Name string         // also its top-level config section
	New  func() Feature // a fresh feature for one gateway
}

// Features are the gateway's features in the order they run: Init in this order (so agents
// wraps the recorder first and its pinning hook runs before the tokens hook), then every
// AfterInit (bundles builds the first bundle with the Core), then Start; Close in reverse.
// The order is this list, never the init() order of file names.
var Features = []FeatureSpec{
	{"telemetry", func() Feature { return &telemetryFeature{} }},
	{"agents", func() Feature { return &agentsFeature{} }},
	{"approvals", func() Feature { return &approvals{} }},
	{"bundles", func() Feature { return &bundlesFeature{} }},
	{"infer", func() Feature { return &inferFeature{} }},
	{"llm", func() Feature { return &llmFeature{} }},
	{"tokens", func() Feature { return &tokens{} }},
	{"audit_sink", func() Feature { return &auditSinkFeature{} }},
}

// Gateway is a running Palisade gateway.
type Gateway struct {
	cfg      config.Config
	sections Sections
	log      *slog.Logger
	instance string

	bus      *bus.Bus
	nc       *nats.Conn
	audit    *audit.Publisher
	recent   *audit.Ring // the latest events: dashboard and own MCP server
	recorder engine.Recorder
	core     *Core
	active   chain.Active
	metrics  *engine.Metrics
	engine   *engine.Engine
	engOpts  engine.EngineOptions
	http     *proxy.HTTP
	authn    *authn.Verifier // the authn: section's resource server; nil = none
	budget   *sse.Budget     // limits.stream_buffer_bytes: every body, answer and event being read or judged
	echo     *echo.Echo
	admin    *admin.Server
	// rateLimit is limits.per_principal and limits.tools on /mcp; nil = none.
	rateLimit func(*abi.Envelope) *mcp.Error
	srv       *http.Server
	ln        net.Listener
	sockSrv   *http.Server // the engine socket (socket.go)
	sockLn    net.Listener
	features  []Feature
	stdio     []*proxy.StdioUpstream // upstreams with a command: processes the gateway supervises

	// bundles is the bundle manager (the bundles feature's), the one activation path of the
	// gateway; shadow is its shadow judge. Both are set in the bundles feature's Init and
	// AfterInit, before the gateway serves.
	bundles   *bundle.Manager
	shadow    *engine.Shadow
	tracer    trace.Tracer // the telemetry feature's; nil = tracing off
	closeOnce sync.Once
}

// New builds a gateway from o: everything is started except the HTTP listener (Start).
func New(ctx context.Context, o Options) (_ *Gateway, err error) {
	cfg := o.Config.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := o.Sections.Validate(&cfg); err != nil { // before the data dir, NATS or a listener
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{cfg: cfg, sections: o.Sections, log: o.Logger, instance: o.Instance, budget: sse.NewBudget(cfg.Limits.StreamBufferBytes)}
	defer func() {
		if err != nil {
			g.Close(context.Background())
		}
	}()
	if g.instance == "" {
		h, _ := os.Hostname()
		g.instance = h + ":" + portOf(cfg.Listen)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := g.startAuthn(ctx); err != nil { // authn.go: the issuer's keys, before NATS or a listener
		return nil, err
	}

	// NATS and audit.
	g.bus, err = bus.Start(ctx, bus.Options{
		DataDir: cfg.DataDir, Host: cfg.NATS.Host, Port: cfg.NATS.Port, URL: cfg.NATS.URL,
		Creds: cfg.NATS.Creds, ApproverCreds: cfg.NATS.ApproverCreds, Names: bus.Names{AuditStream: cfg.Audit.Stream},
		Logger: g.log.With("component", "nats"),
	})
	if err != nil {
		return nil, err
	}
	if err := g.bootstrapBus(ctx, audit.Options{Stream: cfg.Audit.Stream}, cfg.Bundle); err != nil {
		return nil, err
	}
	g.nc, err = g.bus.Connect("palisade-gateway "+g.instance, audit.ConnOptions()...)
	if err != nil {
		return nil, err
	}

	// Runtime, host functions, LLM judge, inference and bundle trust: the Core every mode shares.
	g.core, err = NewCore(ctx, CoreOptions{Config: cfg, Sections: g.sections, Logger: g.log})
	if err != nil {
		return nil, err
	}
	// Audit, opened by the Core as in every mode.
	ao := AuditOptions{Conn: g.nc, SpoolDir: filepath.Join(cfg.DataDir, "spool"), Gateway: g.instance}
	if id := g.bus.Identity(bus.RoleGateway); id != nil {
		ao.Signer = id
	} else {
		g.log.Warn("audit events unsigned: no gateway identity (set nats.creds for an external server)")
	}
	au, err := g.core.OpenAudit(ctx, ao)
	if err != nil {
		return nil, err
	}
	g.audit, g.recent = au.Publisher, au.Recent
	g.recorder = g.recent
	g.metrics = engine.NewMetrics()
	g.metrics.WatchStageMemory(func() []engine.StageMemory { return engine.ChainMemory(g.active.Load()) })
	g.metrics.WatchAudit(g.audit.Stats)
	g.echo = echo.New()
	g.echo.HideBanner, g.echo.HidePort = true, true
	g.admin, err = admin.NewContext(ctx, g.adminOptions())
	if err != nil {
		return nil, err
	}
	g.engOpts = g.core.EngineOptions(&g.active, nil, g.instance) // the recorder once features wrapped it
	g.engOpts.Metrics = g.metrics

	// Features: Init.
	for _, spec := range Features {
		f := spec.New()
		if err := f.Init(ctx, g); err != nil {
			return nil, fmt.Errorf("feature %s: %w", spec.Name, err)
		}
		g.features = append(g.features, f)
	}

	// Features that need every Init done first (the bundles feature builds its first bundle
	// with the host function backends and model loading the others set).
	for _, f := range g.features {
		if a, ok := f.(interface {
			AfterInit(ctx context.Context, g *Gateway) error
		}); ok {
			if err := a.AfterInit(ctx, g); err != nil {
				return nil, fmt.Errorf("feature %s: %w", f.Name(), err)
			}
		}
	}

	g.engOpts.Recorder = g.recorder
	g.engine = engine.NewEngine(g.engOpts)
	var ups []proxy.Upstream
	for _, u := range cfg.Upstreams {
		up := proxy.Upstream{Name: u.Name, URL: u.URL, Timeout: u.Timeout.D(), Headers: u.Headers}
		if u.OAuth != nil {
			cred, err := upstreamCredentials(u.OAuth)
			if err != nil {
				return nil, fmt.Errorf("upstream %s: oauth: %w", u.Name, err)
			}
			up.Credentials = cred
		}
		if u.Command != "" {
			s, err := proxy.NewStdioUpstream(proxy.StdioUpstreamOptions{Name: u.Name, Command: u.Command, Args: u.Args,
				Env: stdioEnv(os.Environ(), u.Env), Dir: u.Cwd, Logger: g.log})
			if err != nil {
				return nil, fmt.Errorf("upstream %s: %w", u.Name, err)
			}
			g.stdio = append(g.stdio, s)
			up.URL, up.Transport = s.URL(), s
		}
		ups = append(ups, up)
	}
	if l := newCallLimiter(cfg.Limits); l != nil {
		g.rateLimit = l.check // limits.per_principal, limits.tools (ratelimit.go)
	}
	hopts := proxy.HTTPOptions{RateLimit: g.rateLimit, Upstreams: ups, Engine: g.engine, BodyLimit: cfg.Limits.BodyBytes, ResponseLimit: cfg.Limits.ResponseBytes,
		StreamIdleTimeout: cfg.Limits.UpstreamIdleTimeout.D(), StreamBudget: cfg.Limits.StreamBufferBytes, Metrics: g.metrics, Logger: g.log,
		MaxBatch: cfg.Limits.BatchElements, UpstreamTotalTimeout: cfg.Limits.UpstreamTotalTimeout.D(), Budget: g.budget,
		Aggregate: proxy.AggregateOptions{Names: cfg.Aggregate.Names}, Tracer: g.tracer}
	if a := g.sections.Approvals; !a.Disabled {
		hopts.AskClient, hopts.AskURL = a.AskClient, a.AskURL // approvals.ask_client
	}
	if p := g.Pinner(); p != nil {
		hopts.Tools = p
	}
	hopts.SamplingContext = func(ctx context.Context, f func(context.Context, json.RawMessage) (json.RawMessage, error)) context.Context {
		return llm.WithClientSampler(ctx, clientSampler(f))
	}
	g.http, err = proxy.NewHTTP(hopts)
	if err != nil {
		return nil, err
	}
	g.http.Register(g.echo)
	g.registerAuthn()
	g.echo.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	g.echo.GET("/readyz", g.readyz)
	g.echo.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(g.metrics.Registry, promhttp.HandlerOpts{})))

	for _, f := range g.features {
		if err := f.Start(ctx, g); err != nil {
			return nil, fmt.Errorf("feature %s: %w", f.Name(), err)
		}
	}
	return g, nil
}

// bootstrapBus runs SetupNATS as the admin identity of the embedded server, before the gateway
// identity connects: that identity may not create, update, purge or delete streams, nor
// register signers. With an external server its operator runs `palisade nats setup` (host/bus
// README); the gateway's own connection then only uses what is there.
func (g *Gateway) bootstrapBus(ctx context.Context, o audit.Options, bundleSpec string) error {
	if !g.bus.Embedded() {
		return nil
	}
	nc, err := g.bus.ConnectAs(bus.RoleAdmin, "palisade-gateway-setup "+g.instance)
	if err != nil {
		return err
	}
	defer nc.Close()
	s := NATSSetup{AuditStream: o.Stream, Gateway: g.instance, BundleBucket: "-"}
	if id := g.bus.Identity(bus.RoleGateway); id != nil {
		s.Signers = []audit.Signer{id}
	}
	if a := g.sections.Approvals; a.Disabled || a.Local {
		s.ApprovalsBucket = "-"
	} else {
		s.ApprovalsBucket = a.Bucket
	}
	if src, err := bundle.ParseSource(bundleSpec, nc, g.log); err == nil {
		if b, ok := src.(*bundle.ObjectStoreSource); ok {
			s.BundleBucket = b.Bucket
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return SetupNATS(cctx, nc, s)
}

// NATSSetup names what SetupNATS creates.
type NATSSetup struct {
	AuditStream     string         // "" = PALISADE_AUDIT
	SignersBucket   string         // "" = PALISADE_AUDIT_SIGNERS
	ApprovalsBucket string         // "" = PALISADE_APPROVALS; "-" = none
	BundleBucket    string         // "" = PALISADE_BUNDLES; "-" = none
	Signers         []audit.Signer // audit signer keys to register (the gateway identity)
	Gateway         string         // recorded with each signer registration
	// Replicas is how many servers of a JetStream cluster keep each stream and bucket: 0 =
	// create what is missing with 1 and leave existing ones as they are; n = create with n, and
	// change an existing one to n (3 survives the loss of any one server of a 3-node cluster).
	Replicas int
}

// SetupNATS creates, over nc (an identity that may: admin), the streams and buckets a gateway
// uses and the gateway identity may not create: the audit stream (deny_delete, deny_purge; an
// existing one is upgraded), the signers bucket with s.Signers registered, the approvals
// bucket and the bundle bucket, each with s.Replicas copies. It is idempotent.
//
// A JetStream cluster that has just started, or has just lost a server, can refuse a placement
// for a moment ("no suitable peers for placement") while its meta leader still counts a peer
// as offline. SetupNATS then runs again, every placementRetry, until ctx ends; the error it
// returns at the end is the cluster's last refusal.
func SetupNATS(ctx context.Context, nc *nats.Conn, s NATSSetup) error {
	if s.Replicas < 0 {
		return fmt.Errorf("nats setup: replicas %d must not be negative", s.Replicas)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats setup: %w", err)
	}
	for {
		err := setupNATS(ctx, nc, js, s)
		if err == nil || !placementRefused(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (the cluster refused the placement until the set-up's time ran out)", err)
		case <-time.After(placementRetry):
		}
	}
}

// placementRetry is how long SetupNATS waits before it asks a cluster again that refused a
// placement.
const placementRetry = 250 * time.Millisecond

// placementRefused reports whether err is JetStream's "no peers available" refusal (error code
// 10005, JSClusterNoPeersErrF), which a cluster gives while it counts too few servers online.
func placementRefused(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == 10005
}

func setupNATS(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, s NATSSetup) error {
	if err := audit.EnsureStream(ctx, js, audit.Options{Stream: s.AuditStream, SignersBucket: s.SignersBucket, Replicas: s.Replicas}); err != nil {
		return err
	}
	if s.Replicas > 0 {
		// Create or resize the buckets first: the calls below only open what exists.
		if _, err := js.CreateOrUpdateKeyValue(ctx, audit.SignersBucketConfig(s.SignersBucket, s.Replicas)); err != nil {
			return fmt.Errorf("nats setup: signers bucket: %w", err)
		}
		if s.ApprovalsBucket != "-" {
			if _, err := js.CreateOrUpdateKeyValue(ctx, approval.BucketConfig(s.ApprovalsBucket, s.Replicas)); err != nil {
				return fmt.Errorf("nats setup: approvals bucket: %w", err)
			}
		}
		if s.BundleBucket != "-" {
			if _, err := js.CreateOrUpdateObjectStore(ctx, bundle.BucketConfig(s.BundleBucket, s.Replicas)); err != nil {
				return fmt.Errorf("nats setup: bundle bucket: %w", err)
			}
		}
	}
	for _, id := range s.Signers {
		if err := audit.RegisterSigner(ctx, js, s.SignersBucket, id, s.Gateway); err != nil {
			return err
		}
	}
	if s.ApprovalsBucket != "-" {
		if _, err := approval.EnsureBucket(ctx, js, s.ApprovalsBucket); err != nil {
			return err
		}
	}
	if s.BundleBucket != "-" {
		if _, err := bundle.OpenBucket(ctx, nc, s.BundleBucket); err != nil {
			return err
		}
	}
	return nil
}

// stdioEnv is the environment of a stdio upstream: the gateway's, less its PALISADE_*
// variables (tokens), plus the upstream's env.
func stdioEnv(environ []string, add map[string]string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "PALISADE_") {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out
}

func portOf(hostport string) string {
	_, p, _ := net.SplitHostPort(hostport)
	return p
}

// readyz reports the bundle, NATS and every upstream. It is 503 with no active bundle, a
// degraded bundle, or every upstream down; some upstreams down leave it 200 with status
// "ready" and upstreams_down naming them (the aggregate /mcp serves the others).
func (g *Gateway) readyz(c echo.Context) error {
	ch := g.active.Load()
	st := map[string]any{"bundle": nil, "nats": g.nc != nil && g.nc.IsConnected()}
	ups := map[string]proxy.UpstreamStatus{}
	var down []string
	for _, u := range g.http.UpstreamStatus() {
		ups[u.Name] = u
		if u.Status == proxy.StatusDown {
			down = append(down, u.Name)
		}
	}
	st["upstreams"] = ups
	if len(down) > 0 {
		st["upstreams_down"] = down
	}
	if ch != nil {
		st["bundle"] = ch.Info()
	}
	if ch == nil {
		st["status"] = "no active bundle"
		return c.JSON(http.StatusServiceUnavailable, st)
	}
	if d := ch.Info().Degraded; len(d) > 0 {
		// Serving, by the operator's choice, without stages that cannot run: not ready.
		st["status"] = "degraded"
		return c.JSON(http.StatusServiceUnavailable, st)
	}
	if len(down) > 0 && len(down) == len(ups) {
		st["status"] = "upstreams down"
		return c.JSON(http.StatusServiceUnavailable, st)
	}
	st["status"] = "ready"
	return c.JSON(http.StatusOK, st)
}

// clientSampler adapts the HTTP transport's sampling function to the LLM judge's mcp provider.
type clientSampler func(context.Context, json.RawMessage) (json.RawMessage, error)

func (f clientSampler) CreateMessage(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return f(ctx, params)
}

// BuildOptions are the options a bundle is built with on this gateway: the Core's, with the
// gateway's stage metrics.
func (g *Gateway) BuildOptions() bundle.BuildOptions {
	o := g.core.BuildOptions()
	o.OnStage = g.metrics.Stage
	return o
}

// Core returns the runtime, host functions and bundle trust policy the gateway builds with.
func (g *Gateway) Core() *Core { return g.core }

// Record publishes an event through the gateway's recorder chain.
func (g *Gateway) Record(ctx context.Context, ev audit.Event) {
	if ev.Gateway == "" {
		ev.Gateway = g.instance
	}
	if g.recorder != nil {
		g.recorder.Record(context.WithoutCancel(ctx), ev)
	}
}

// Start listens on the configured address and serves until Close.
func (g *Gateway) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", g.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", g.cfg.Listen, err)
	}
	hc := g.cfg.HTTP
	max := MaxConnections(hc.MaxConnections)
	g.ln = LimitListener(ln, max, "/healthz", g.log)
	g.srv = &http.Server{
		Handler:           SendTimeout(newGuard(g.echo, hc, g.authn), hc.SendTimeout.D()),
		ReadHeaderTimeout: hc.ReadHeaderTimeout.D(),
		// ReadTimeout bounds headers and body; net/http lifts the read deadline once the body
		// is read, so a long SSE answer is not cut (TestLongStreamOutlivesReadTimeout).
		ReadTimeout:    hc.ReadTimeout.D(),
		IdleTimeout:    hc.IdleTimeout.D(),
		MaxHeaderBytes: hc.MaxHeaderBytes,
		// No WriteTimeout: it would cut long-lived SSE answers. SendTimeout bounds each write.
	}
	if err := g.startSocket(); err != nil {
		ln.Close()
		return err
	}
	g.srv.RegisterOnShutdown(g.endLiveStreams) // approvals.go: SSE streams never go idle
	g.srv.RegisterOnShutdown(g.http.Close)     // MCP GET streams end too
	go func() {
		if err := g.srv.Serve(g.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.log.Error("http server", "err", err)
		}
	}()
	g.log.Info("gateway listening", "addr", ln.Addr().String(), "max_connections", max, "nats", g.bus.ClientURL(), "upstreams", len(g.cfg.Upstreams))
	return nil
}

// DashboardLogin returns a link to the dashboard that logs in once, within admin.LoginTTL (a
// one-time code in the fragment, admin.LoginCode), for `palisade serve` to print: where to look,
// without the admin token itself. ok is false when the gateway serves no dashboard or listens
// beyond loopback (the link would be a credential in a shared log).
func (g *Gateway) DashboardLogin() (link string, ok bool) {
	ip, isTCP := g.ln.Addr().(*net.TCPAddr)
	if !isTCP || !ip.IP.IsLoopback() || !g.hasUI() {
		return "", false
	}
	return fmt.Sprintf("http://%s%s/#login=%s", g.ln.Addr(), admin.UIPath, g.admin.LoginCode()), true
}

// hasUI reports whether the dashboard is served (the approvals feature registers it).
func (g *Gateway) hasUI() bool {
	for _, r := range g.echo.Routes() {
		if r.Path == admin.UIPath {
			return true
		}
	}
	return false
}

// Close stops serving, drains, flushes audit and stops NATS, in that order.
func (g *Gateway) Close(ctx context.Context) error {
	g.closeOnce.Do(func() {
		g.closeSocket(ctx)
		if g.srv != nil {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			g.srv.Shutdown(sctx)
			cancel()
		}
		for _, s := range g.stdio { // SIGTERM, then SIGKILL after its grace
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			if err := s.Close(cctx); err != nil {
				g.log.Warn("stdio upstream close", "err", err)
			}
			cancel()
		}
		for i := len(g.features) - 1; i >= 0; i-- {
			if err := g.features[i].Close(ctx); err != nil {
				g.log.Warn("feature close", "feature", g.features[i].Name(), "err", err)
			}
		}
		if ch := g.active.Swap(nil); ch != nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			ch.CloseWhenDrained(cctx)
			cancel()
		}
		if g.audit != nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			g.audit.Close(cctx)
			cancel()
		}
		if g.core != nil {
			g.core.Close(ctx)
		}
		if g.bus != nil {
			g.bus.Close()
		}
		if g.authn != nil {
			g.authn.Close()
		}
	})
	return nil
}
