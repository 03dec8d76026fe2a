package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// requestSpan is the span of one judged request (HTTPOptions.Tracer); its zero value (tracing
// off) does nothing.
type requestSpan struct {
	span trace.Span
	out  *engine.Outcome // set once judged: the final action and the bundle come from it
}

// startRequestSpan starts a request's span as a child of the client's trace context (its
// traceparent header, or params._meta.traceparent per SEP-414) and returns ctx carrying it:
// the engine's stage and approval spans, the upstream span and the audit event's trace id all
// read it from there.
func (h *HTTP) startRequestSpan(ctx context.Context, hdr http.Header, p *mcp.Parsed) (context.Context, requestSpan) {
	if h.o.Tracer == nil {
		return ctx, requestSpan{}
	}
	env := p.Envelope
	ctx = extractTraceContext(ctx, hdr, p.Message.Params)
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", env.Method),
		attribute.String("palisade.server", env.Server),
		attribute.String("palisade.audit_id", env.ID),
	}
	if env.Tool != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.name", env.Tool))
	}
	if env.Session != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", env.Session))
	}
	name := env.Method
	if env.Tool != "" {
		name += " " + env.Tool
	}
	ctx, span := h.o.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, requestSpan{span: span}
}

// end records the final action and ends the span.
func (s *requestSpan) end() {
	if s.span == nil {
		return
	}
	action := "error" // refused before judging: rate limit, memory budget, no chain
	if s.out != nil {
		action = s.out.Action
		if info := s.out.Chain.Info(); info.Name != "" {
			s.span.SetAttributes(attribute.String("palisade.bundle", info.Name+"@"+info.Version))
		}
	}
	s.span.SetAttributes(attribute.String("palisade.action", action))
	s.span.End()
}

// upstreamSpan is the span of one call to an upstream; its zero value does nothing.
type upstreamSpan struct{ span trace.Span }

// startUpstreamSpan starts the client span of a forwarded request: send puts its context in the
// upstream's traceparent.
func (h *HTTP) startUpstreamSpan(ctx context.Context, up *upstream) (context.Context, upstreamSpan) {
	if h.o.Tracer == nil {
		return ctx, upstreamSpan{}
	}
	ctx, span := h.o.Tracer.Start(ctx, "upstream "+up.Name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("palisade.server", up.Name), attribute.String("server.address", up.URL)))
	return ctx, upstreamSpan{span: span}
}

// end records the upstream's HTTP status (0 = no answer) or its error.
func (s upstreamSpan) end(status int, err error) {
	if s.span == nil {
		return
	}
	if status != 0 {
		s.span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	if err != nil {
		s.span.SetStatus(codes.Error, err.Error())
	} else if status >= 400 {
		s.span.SetStatus(codes.Error, "HTTP "+strconv.Itoa(status))
	}
	s.span.End()
}

var propagator = propagation.TraceContext{}

// extractTraceContext returns ctx carrying the remote span context of a client's request: its traceparent
// and tracestate headers, or when the request has no valid traceparent header, the same keys in
// the MCP message's params._meta (SEP-414). A malformed value is ignored.
func extractTraceContext(ctx context.Context, hdr http.Header, params json.RawMessage) context.Context {
	if c := propagator.Extract(ctx, propagation.HeaderCarrier(hdr)); trace.SpanContextFromContext(c).IsValid() {
		return c
	}
	if len(params) == 0 {
		return ctx
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	for _, k := range propagator.Fields() {
		if v, ok := p.Meta[k].(string); ok {
			carrier[k] = v
		}
	}
	return propagator.Extract(ctx, carrier)
}

// injectTraceContext writes the span context of ctx into hdr as traceparent and tracestate, replacing what
// was there; with no valid span context it removes them, so the client's header never passes
// unchanged.
func injectTraceContext(ctx context.Context, hdr http.Header) {
	for _, k := range propagator.Fields() {
		hdr.Del(k)
	}
	propagator.Inject(ctx, propagation.HeaderCarrier(hdr))
}
