package telemetry

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Protocols of OTLP export.
const (
	ProtocolHTTP = "http" // OTLP/HTTP protobuf, POST <endpoint>/v1/traces
	ProtocolGRPC = "grpc" // OTLP/gRPC
)

// Scope is the instrumentation scope name of every span the gateway makes.
const Scope = "github.com/added060/palisade"

// Config is palisade.yaml's `telemetry:` section. The zero value is off.
type Config struct {
	// OTLPEndpoint is the collector: a URL (http://host:4318, https://host:4318, or for grpc
	// http://host:4317); "" = tracing off, with a no-op tracer.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// Protocol is http or grpc; "" = http.
	Protocol string `yaml:"protocol"`
	// ServiceName is the resource's service.name; "" = palisade.
	ServiceName string `yaml:"service_name"`
	// SampleRatio is the share of new traces kept (0 < r <= 1), parent-based: a client's
	// sampled trace is always kept; nil = 1.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// Headers are sent with every export (an API key for a hosted collector).
	Headers map[string]string `yaml:"headers"`
}

// Enabled reports whether c turns tracing on.
func (c Config) Enabled() bool { return c.OTLPEndpoint != "" }

// FieldError names the bad field of the section, relative to `telemetry.`.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate names the first bad field of c (*FieldError with a path like telemetry.protocol).
func (c Config) Validate() error {
	fe := func(path, format string, a ...any) error {
		return &FieldError{Path: "telemetry." + path, Err: fmt.Errorf(format, a...)}
	}
	if c.OTLPEndpoint == "" {
		if c.Protocol != "" || c.ServiceName != "" || c.SampleRatio != nil || len(c.Headers) > 0 {
			return fe("otlp_endpoint", "required when the telemetry section sets anything else (tracing is off without it)")
		}
		return nil
	}
	u, err := url.Parse(c.OTLPEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fe("otlp_endpoint", "%q must be an http:// or https:// URL with a host", c.OTLPEndpoint)
	}
	switch c.Protocol {
	case "", ProtocolHTTP, ProtocolGRPC:
	default:
		return fe("protocol", "%q must be http or grpc", c.Protocol)
	}
	if r := c.SampleRatio; r != nil && (*r <= 0 || *r > 1) {
		return fe("sample_ratio", "%v must be above 0 and at most 1", *r)
	}
	for k := range c.Headers {
		if k == "" {
			return fe("headers", "a header name must not be empty")
		}
	}
	return nil
}

// Telemetry is the gateway's tracing: a Tracer, and Shutdown to flush it.
type Telemetry struct {
	tp     *sdktrace.TracerProvider // nil when off
	tracer trace.Tracer
}

// New builds the tracer c asks for: with OTLPEndpoint "" a no-op tracer that costs nothing;
// otherwise an SDK provider batching spans to the collector. Nothing is sent before the first
// span, so a collector that is down does not stop the gateway (the exporter retries, then drops).
func New(ctx context.Context, c Config) (*Telemetry, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !c.Enabled() {
		return &Telemetry{tracer: noop.NewTracerProvider().Tracer(Scope)}, nil
	}
	exp, err := exporter(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("telemetry: exporter: %w", err)
	}
	name := c.ServiceName
	if name == "" {
		name = "palisade"
	}
	ratio := 1.0
	if c.SampleRatio != nil {
		ratio = *c.SampleRatio
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(name))),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	)
	return &Telemetry{tp: tp, tracer: tp.Tracer(Scope)}, nil
}

func exporter(ctx context.Context, c Config) (*otlptrace.Exporter, error) {
	u, _ := url.Parse(c.OTLPEndpoint) // Validate parsed it
	if c.Protocol == ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host), otlptracegrpc.WithHeaders(c.Headers)}
		if u.Scheme == "http" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/v1/traces"
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(path), otlptracehttp.WithHeaders(c.Headers)}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return otlptracehttp.New(ctx, opts...)
}

// Tracer is the tracer spans start from; a no-op one when tracing is off.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// Enabled reports whether spans are exported.
func (t *Telemetry) Enabled() bool { return t.tp != nil }

// Shutdown exports the spans still batched and stops the exporter. Safe on an off Telemetry.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.tp == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}
