package engine

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// startApprovalSpan starts the span of a held call's wait for a person, a child of the request's
// span in ctx; end records who decided and what. With no recording span in ctx (tracing off)
// it starts nothing.
func startApprovalSpan(ctx context.Context) (context.Context, func(Resolution)) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return ctx, func(Resolution) {}
	}
	ctx, wait := span.TracerProvider().Tracer("github.com/added060/palisade").Start(ctx, "palisade.approval")
	return ctx, func(r Resolution) {
		wait.SetAttributes(attribute.String("palisade.action", r.Action), attribute.String("palisade.decided_by", r.DecidedBy))
		wait.End()
	}
}
