package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/infer"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"
)

// InferConfig is the `infer:` section: where ONNX Runtime is and how models run.
type InferConfig struct {
	Library  string `yaml:"library"`   // libonnxruntime path; "" = $PALISADE_ONNXRUNTIME_LIB, build/ort, /usr/local/lib
	Provider string `yaml:"provider"`  // overrides every model's provider: cpu | cuda | kserve; "" = as declared
	MaxTexts int    `yaml:"max_texts"` // per infer call; 0 = 256
}

// inferFeature exposes the inference registries of the bundles the gateway's Core built
// (metrics and /admin/api/infer). The Core itself turns each bundle's models: section into an
// infer.Registry (the infer: section configures it).
type inferFeature struct {
	core *Core
}

func (f *inferFeature) Name() string { return "infer" }

func (f *inferFeature) Init(ctx context.Context, g *Gateway) error {
	f.core = g.Core()
	return nil
}

// modelLoader returns the bundle.BuildOptions.Models function for cfg: a bundle's models:
// section becomes an infer.Registry; track (if not nil) hears of each registry opened and closed.
func modelLoader(cfg InferConfig, log *slog.Logger, track func(*infer.Registry, bool)) func(ctx context.Context, dir string, nodes []yaml.Node) (hostfn.Inferer, io.Closer, error) {
	return func(ctx context.Context, dir string, nodes []yaml.Node) (hostfn.Inferer, io.Closer, error) {
		specs := make([]infer.ModelSpec, 0, len(nodes))
		for i := range nodes {
			var s infer.ModelSpec
			if err := nodes[i].Decode(&s); err != nil {
				return nil, nil, fmt.Errorf("models[%d]: %w", i, err)
			}
			if cfg.Provider != "" {
				s.Provider = cfg.Provider
			}
			specs = append(specs, s)
		}
		reg, err := infer.New(ctx, infer.Options{Models: specs, BaseDir: dir, LibraryPath: cfg.Library, MaxTexts: cfg.MaxTexts, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		if track != nil {
			track(reg, true)
		}
		return reg, closerFunc(func() error {
			if track != nil {
				track(reg, false)
			}
			return reg.Close()
		}), nil
	}
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// Describe implements prometheus.Collector.
func (f *inferFeature) Describe(ch chan<- *prometheus.Desc) {
	ch <- inferModelDesc
	ch <- inferTextsDesc
	ch <- inferErrorsDesc
	ch <- inferRemoteFallbacksDesc
}

var (
	inferModelDesc = prometheus.NewDesc("palisade_infer_model_info",
		"1 per loaded model; active differs from configured when CUDA or KServe fell back (reason in doctor and /admin/api/infer); runtime is what evaluates the local model (go for a trainer's linear model, onnxruntime, or none).",
		[]string{"model", "configured", "active", "runtime"}, nil)
	inferTextsDesc           = prometheus.NewDesc("palisade_infer_texts_total", "Texts classified.", []string{"model"}, nil)
	inferErrorsDesc          = prometheus.NewDesc("palisade_infer_errors_total", "Failed inference calls.", []string{"model"}, nil)
	inferRemoteFallbacksDesc = prometheus.NewDesc("palisade_infer_remote_fallbacks_total", "KServe calls that fell back to the local model.", []string{"model"}, nil)
)

// Collect implements prometheus.Collector.
func (f *inferFeature) Collect(ch chan<- prometheus.Metric) {
	for _, st := range f.core.InferStatus() {
		for _, m := range st.Models {
			configured := m.Provider
			if configured == "" {
				configured = infer.ProviderCPU
			}
			rt := m.Runtime
			if rt == "" {
				rt = "none"
			}
			ch <- prometheus.MustNewConstMetric(inferModelDesc, prometheus.GaugeValue, 1, m.Name, configured, m.Active, rt)
			ch <- prometheus.MustNewConstMetric(inferTextsDesc, prometheus.CounterValue, float64(m.Texts), m.Name)
			ch <- prometheus.MustNewConstMetric(inferErrorsDesc, prometheus.CounterValue, float64(m.Errors), m.Name)
			ch <- prometheus.MustNewConstMetric(inferRemoteFallbacksDesc, prometheus.CounterValue, float64(m.RemoteFallbacks), m.Name)
		}
	}
}

func (f *inferFeature) Start(ctx context.Context, g *Gateway) error {
	if err := g.Metrics().Registry.Register(f); err != nil {
		return err
	}
	g.Admin().Group().GET("/infer", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"registries": f.core.InferStatus()})
	})
	return nil
}

func (f *inferFeature) Close(context.Context) error { return nil }
