package gateway

import (
	"context"
	"errors"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/telemetry"
)

// validateTelemetry names the first bad field of the `telemetry:` section.
func validateTelemetry(c telemetry.Config) error {
	if err := c.Validate(); err != nil {
		var fe *telemetry.FieldError
		if errors.As(err, &fe) {
			return &config.FieldError{Path: fe.Path, Err: fe.Err}
		}
		return &config.FieldError{Path: "telemetry", Err: err}
	}
	return nil
}

// telemetryFeature traces every judged request to an OTLP collector (the `telemetry:`
// section, host/telemetry). It is first in Features so that it closes last: the spans of the
// final requests are flushed after everything else stopped. Off, it sets no tracer and the
// proxy starts no span.
type telemetryFeature struct {
	t *telemetry.Telemetry
}

func (f *telemetryFeature) Name() string { return "telemetry" }

func (f *telemetryFeature) Init(ctx context.Context, g *Gateway) error {
	c := g.sections.Telemetry
	if !c.Enabled() {
		return nil
	}
	t, err := telemetry.New(ctx, c)
	if err != nil {
		return err
	}
	f.t, g.tracer = t, t.Tracer()
	g.log.Info("tracing on", "otlp_endpoint", c.OTLPEndpoint, "protocol", c.Protocol)
	return nil
}

func (f *telemetryFeature) Start(context.Context, *Gateway) error { return nil }

func (f *telemetryFeature) Close(ctx context.Context) error {
	if f.t == nil {
		return nil
	}
	return f.t.Shutdown(ctx)
}
