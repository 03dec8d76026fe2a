package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
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
type BundlesConfig struct {
	TrustedKeys   []string        `yaml:"trusted_keys"`
	AllowUnsigned bool            `yaml:"allow_unsigned"`
	ServeDegraded bool            `yaml:"serve_degraded"`
	Keep          int             `yaml:"keep"`
	Watch         *bool           `yaml:"watch"`
	Poll          config.Duration `yaml:"poll"`
	Debounce      config.Duration `yaml:"debounce"`
	HTTPInterval  config.Duration `yaml:"http_interval"`
	Resync        config.Duration `yaml:"resync"`
	Wait          config.Duration `yaml:"wait"`
}

// managers maps a gateway to its bundle manager (a registry, so that three gateways can live
// in one test process).
var managers sync.Map // *Gateway → *bundle.Manager

// BundleManager returns the gateway's bundle manager (nil before the bundles feature's Init).
// Use it to activate, roll back or list bundles from Go.
func BundleManager(g *Gateway) *bundle.Manager {
	m, _ := managers.Load(g)
	mm, _ := m.(*bundle.Manager)
	return mm
}

// bundlesFeature claims bundle loading: it verifies signatures against trusted keys, keeps
// history for rollback, follows the configured source, and serves the admin bundle routes.
type bundlesFeature struct {
	cfg    BundlesConfig
	g      *Gateway
	m      *bundle.Manager
	src    bundle.Source
	cancel context.CancelFunc
	done   chan struct{}
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
	g.ClaimBundles()
	return nil
}

// AfterInit creates the manager and activates the first bundle once every feature's Init is
// done. The manager verifies with the Core's trust policy and builds with the Core.
func (f *bundlesFeature) AfterInit(ctx context.Context, g *Gateway) error {
	c := g.Core()
	var err error
	f.m, err = bundle.NewManager(bundle.ManagerOptions{
		Active: g.Active(), Build: g.BuildOptions(), DataDir: g.DataDir(), Keys: c.Keys, AllowUnsigned: c.AllowUnsigned,
		Keep: f.cfg.Keep, Recorder: gatewayRecorder{g}, Gateway: g.Instance(), Logger: g.Logger().With("component", "bundles"),
	})
	if err != nil {
		return err
	}
	managers.Store(g, f.m)
	return f.first(ctx)
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
	f.done = make(chan struct{})
	if f.cfg.Watch != nil && !*f.cfg.Watch {
		close(f.done)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		defer close(f.done)
		_ = f.src.Run(ctx, f.m)
	}()
	return nil
}

func (f *bundlesFeature) Close(ctx context.Context) error {
	if f.cancel != nil {
		f.cancel()
	}
	if f.done != nil {
		<-f.done
	}
	if f.g != nil {
		managers.Delete(f.g)
	}
	if f.m != nil {
		return f.m.Close(ctx)
	}
	return nil
}
