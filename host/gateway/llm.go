package gateway

import (
	"context"
	"net/http"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/llm"
	"github.com/labstack/echo/v4"
)

func init() {
	config.RegisterExtension("llm")
	RegisterFeature("llm", func() Feature { return &llmFeature{} })
}

// llmFeature backs the sample host function with the LLM judge configured in the `llm:`
// section (providers, preference, timeout, cache, breaker). Without the section, sample answers
// "no LLM provider configured" and judge stages apply their on_error.
type llmFeature struct {
	judge  *llm.Judge
	cancel context.CancelFunc
}

func (f *llmFeature) Name() string { return "llm" }

func (f *llmFeature) Init(ctx context.Context, g *Gateway) error {
	if _, ok := g.Config().Extensions["llm"]; !ok {
		return nil
	}
	var c llm.Config
	if err := g.Config().Extension("llm", &c); err != nil {
		return err
	}
	o := c.Options()
	o.Logger = g.Logger().With("component", "llm")
	j, err := llm.New(o)
	if err != nil {
		return &config.FieldError{Path: "llm", Err: err}
	}
	f.judge = j
	g.HostDeps().Sampler = j
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.cancel = cancel
	go j.RunHealthChecks(hctx, c.HealthInterval)
	return nil
}

func (f *llmFeature) Start(ctx context.Context, g *Gateway) error {
	if f.judge == nil {
		return nil
	}
	g.Admin().Group().GET("/llm", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"providers": f.judge.Status(), "counters": f.judge.Counters()})
	})
	return nil
}

func (f *llmFeature) Close(context.Context) error {
	if f.cancel != nil {
		f.cancel()
	}
	return nil
}
