package gateway

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
)

// BundlesConfig is the `bundles:` section of palisade.yaml. The top-level `bundle:` names the
// source: a folder or .tar.gz (watched), an http(s) URL (polled with ETag) or
// nats://BUCKET[/OBJECT] (an Object Store object, watched; nats:// alone = PALISADE_BUNDLES/current).
//
//	bundles:
//	  trusted_keys:            # public key files (relative to the working directory) or the
//	                           # keys' text ("palisade-ed25519-pub ...")
//	    - keys/release.pub
//	  allow_unsigned: false    # true = accept bundles without signature.json (never a bad one);
//	                           # with no bundles section at all, `palisade serve` refuses a
//	                           # local folder/archive (File.TrustChoice; --allow-unsigned),
//	                           # proxy, hook, mcp and policy test load it unsigned with a
//	                           # warning, and remote sources need a signature
//	  serve_degraded: false    # true = serve a bundle whose stages cannot all run here (its
//	                           # model or ONNX Runtime missing): /readyz says degraded (503)
//	                           # and every decision's audit event names the stages; false
//	                           # refuses such a bundle in every mode (policy test included)
//	  keep: 5                  # bundles kept for rollback
//	  watch: true              # false = activate at start only
//	  poll: 1s                 # folder/archive source: poll period
//	  debounce: 500ms          # folder/archive source: quiet time before activating
//	  http_interval: 30s       # http source: poll period
//	  resync: 5s               # nats source: re-read period besides the watch
//	  wait: 10s                # nats source: how long each read from the bucket may take
//	  shadow: ./policy-next    # a shadow bundle: a source as `bundle:` (relative to the config
//	                           # file), signed like any other; it judges a copy of every
//	                           # recorded call off the hot path and decides nothing; each audit
//	                           # event carries its verdict (docs/DESIGN.md "Shadow bundle")
//	  shadow_queue: 4096       # calls waiting for the shadow; a full queue drops the judgement
//	  shadow_workers: 4        # goroutines judging with the shadow chain
//	  shadow_max_delay: 2s     # a call queued longer is recorded unjudged (shadow.dropped)
type BundlesConfig struct {
	TrustedKeys    []string        `yaml:"trusted_keys"`
	AllowUnsigned  bool            `yaml:"allow_unsigned"`
	ServeDegraded  bool            `yaml:"serve_degraded"`
	Keep           int             `yaml:"keep"`
	Watch          *bool           `yaml:"watch"`
	Poll           config.Duration `yaml:"poll"`
	Debounce       config.Duration `yaml:"debounce"`
	HTTPInterval   config.Duration `yaml:"http_interval"`
	Resync         config.Duration `yaml:"resync"`
	Wait           config.Duration `yaml:"wait"`
	Shadow         string          `yaml:"shadow"`
	ShadowQueue    int             `yaml:"shadow_queue"`
	ShadowWorkers  int             `yaml:"shadow_workers"`
	ShadowMaxDelay config.Duration `yaml:"shadow_max_delay"`
}

// BundleManager returns the gateway's bundle manager (nil before the bundles feature's
// AfterInit). Use it to activate, roll back or list bundles from Go.
func BundleManager(g *Gateway) *bundle.Manager { return g.bundles }

// Shadow returns the gateway's shadow judge (nil before the bundles feature's Init): its
// counters and recent disagreements. Load, clear and promote the shadow bundle with
// BundleManager(g).LoadShadow, ClearShadow and PromoteShadow.
func Shadow(g *Gateway) *engine.Shadow { return g.shadow }

// bundlesFeature claims bundle loading: it verifies signatures against trusted keys, keeps
// history for rollback, follows the configured source, and serves the admin bundle routes.
type bundlesFeature struct {
	cfg    BundlesConfig
	g      *Gateway
	m      *bundle.Manager
	src    bundle.Source
	shadow *engine.Shadow
	ssrc   bundle.Source // the shadow's source; nil = none configured
	cancel context.CancelFunc
	done   chan struct{}
	sdone  chan struct{}
}

func (f *bundlesFeature) Name() string { return "bundles" }

// gatewayRecorder sends events through the gateway's recorder chain as it is when they happen.
type gatewayRecorder struct{ g *Gateway }

func (r gatewayRecorder) Record(ctx context.Context, ev audit.Event) { r.g.Record(ctx, ev) }

func (f *bundlesFeature) Init(ctx context.Context, g *Gateway) error {
	f.cfg = g.Core().Bundles // decoded and its keys loaded by NewCore
	f.g = g
	var err error
	f.src, err = bundle.ParseSource(g.Config().Bundle, g.NATS(), g.Logger().With("component", "bundles"))
	if err != nil {
		return &config.FieldError{Path: "bundle", Err: err}
	}
	if spec := f.cfg.Shadow; spec != "" {
		if base := g.Config().BaseDir; base != "" && !filepath.IsAbs(spec) && !strings.Contains(spec, "://") {
			spec = filepath.Join(base, spec) // relative to the config file, as `bundle:`
		}
		f.ssrc, err = bundle.ParseSource(spec, g.NATS(), g.Logger().With("component", "bundles", "slot", "shadow"))
		if err != nil {
			return &config.FieldError{Path: "bundles.shadow", Err: err}
		}
	}
	// The shadow judge is always there (idle workers) so the admin API can load a shadow
	// bundle at any time; the engine built after Init records through it.
	f.shadow = engine.NewShadow(engine.ShadowOptions{Queue: f.cfg.ShadowQueue, Workers: f.cfg.ShadowWorkers,
		MaxDelay: f.cfg.ShadowMaxDelay.D(), Metrics: g.Metrics(), Logger: g.Logger().With("component", "shadow")})
	g.engOpts.Shadow = f.shadow
	g.shadow = f.shadow
	return nil
}

// AfterInit creates the manager and activates the first bundle once every feature's Init is
// done. The manager verifies with the Core's trust policy and builds with the Core.
func (f *bundlesFeature) AfterInit(ctx context.Context, g *Gateway) error {
	var err error
	f.m, err = g.Core().NewManager(bundle.ManagerOptions{
		Active: g.Active(), Build: g.BuildOptions(), DataDir: g.DataDir(),
		Keep: f.cfg.Keep, Recorder: gatewayRecorder{g}, Gateway: g.Instance(), Logger: g.Logger().With("component", "bundles"),
		Shadow: f.shadow.Slot(),
	})
	if err != nil {
		return err
	}
	g.bundles = f.m
	if err := f.first(ctx); err != nil {
		return err
	}
	f.firstShadow(ctx)
	return nil
}

// firstShadow loads the configured shadow bundle. A shadow that fails (unsigned, tampered,
// fixtures) is logged and recorded (bundle.rejected, detail.slot shadow) but does not stop the
// gateway: the active bundle decides either way.
func (f *bundlesFeature) firstShadow(ctx context.Context) {
	var err error
	t := f.m.ShadowTarget()
	switch s := f.ssrc.(type) {
	case nil:
		// No shadow source in the config: the shadow loaded before a restart (admin API,
		// `palisade tune --shadow`) judges again, checked again.
		if e, err := f.m.RestoreShadow(ctx); err == nil {
			f.g.Logger().Info("shadow bundle restored", "bundle", e.Name, "version", e.Version, "digest", e.Digest)
		} else if !errors.Is(err, bundle.ErrNoShadow) {
			f.g.Logger().Error("shadow bundle not restored; serving without a shadow", "err", err)
		}
		return
	case *bundle.DirSource:
		s.Interval, s.Debounce = f.cfg.Poll.D(), f.cfg.Debounce.D()
		_, _, err = t.Activate(ctx, s.Path, s.String())
	case *bundle.HTTPSource:
		s.Interval = f.cfg.HTTPInterval.D()
		_, err = s.Poll(ctx, t)
	case *bundle.ObjectStoreSource:
		s.Resync = f.cfg.Resync.D()
		s.FetchTimeout = f.cfg.Wait.D()
		if s.FetchTimeout <= 0 {
			s.FetchTimeout = 10 * time.Second
		}
		_, err = s.Sync(ctx, t)
	}
	if err != nil {
		f.g.Logger().Error("shadow bundle not loaded; serving without a shadow", "source", f.ssrc.String(), "err", err)
	}
}

// first activates the configured bundle, falling back to the newest kept one; a NATS source
// with nothing published yet lets the gateway start without a bundle (it is not ready until one
// arrives).
func (f *bundlesFeature) first(ctx context.Context) error {
	log := f.g.Logger()
	var err error
	switch s := f.src.(type) {
	case *bundle.DirSource:
		s.Interval, s.Debounce = f.cfg.Poll.D(), f.cfg.Debounce.D()
		_, _, err = f.m.Activate(ctx, s.Path, s.String())
	case *bundle.HTTPSource:
		s.Interval = f.cfg.HTTPInterval.D()
		_, err = s.Poll(ctx, f.m)
	case *bundle.ObjectStoreSource:
		s.Resync = f.cfg.Resync.D()
		s.FetchTimeout = f.cfg.Wait.D()
		if s.FetchTimeout <= 0 {
			s.FetchTimeout = 10 * time.Second
		}
		_, err = s.Sync(ctx, f.m)
	}
	if _, ok := f.m.Current(); ok {
		return nil
	}
	e, rerr := f.m.Restore(ctx)
	if rerr == nil {
		log.Warn("serving the last kept bundle", "bundle", e.Name, "version", e.Version, "source_err", err)
		return nil
	}
	if _, ok := f.src.(*bundle.ObjectStoreSource); ok {
		log.Warn("no bundle yet: waiting for one on the bucket", "source", f.src.String(), "err", err)
		return nil
	}
	if err == nil {
		err = errors.New("no bundle")
	}
	return fmt.Errorf("bundle %s: %w", f.src, err)
}

func (f *bundlesFeature) Start(_ context.Context, g *Gateway) error {
	admin.RegisterBundles(g.Admin(), f.m)
	admin.RegisterShadow(g.Admin(), f.m, f.shadow)
	f.done, f.sdone = make(chan struct{}), make(chan struct{})
	if f.cfg.Watch != nil && !*f.cfg.Watch {
		close(f.done)
		close(f.sdone)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		defer close(f.done)
		_ = f.src.Run(ctx, f.m)
	}()
	go func() {
		defer close(f.sdone)
		if f.ssrc != nil {
			_ = f.ssrc.Run(ctx, f.m.ShadowTarget())
		}
	}()
	return nil
}

func (f *bundlesFeature) Close(ctx context.Context) error {
	if f.cancel != nil {
		f.cancel()
	}
	if f.done != nil {
		<-f.done
		<-f.sdone
	}
	if f.shadow != nil {
		// The listener is closed: judge and record what is queued before audit closes.
		if err := f.shadow.Close(ctx); err != nil {
			f.g.Logger().Warn("shadow queue not drained", "err", err)
		}
	}
	if f.m != nil {
		return f.m.Close(ctx)
	}
	return nil
}
