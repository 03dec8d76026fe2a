package gateway

import (
	"context"
	"net/http"

	"github.com/added060/palisade/host/llm"
	"github.com/labstack/echo/v4"
)

// llmFeature runs health checks for the Core's LLM judge (the `llm:` section: providers,
// preference, timeout, cache, breaker) and serves its status. Without the section, sample
// answers "no LLM provider configured" and judge stages apply their on_error.
type llmFeature struct {
	judge  *llm.Judge
	cancel context.CancelFunc
}

func (f *llmFeature) Name() string { return "llm" }

func (f *llmFeature) Init(ctx context.Context, g *Gateway) error {
	f.judge = g.Core().Judge // built (and the section validated) by NewCore
	if f.judge == nil {
		return nil
	}
	c := g.Sections().LLM // not nil: NewCore built the judge from it
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.cancel = cancel
	go f.judge.RunHealthChecks(hctx, c.HealthInterval)
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
