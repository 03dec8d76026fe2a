package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

const (
	tid = "4bf92f3577b34da6a3ce929d0e0e4736"
	sid = "00f067aa0ba902b7"
	tp  = "00-" + tid + "-" + sid + "-01"
)

func TestExtract(t *testing.T) {
	meta := json.RawMessage(`{"name":"echo","_meta":{"traceparent":"00-` + tid + `-1111111111111111-01","tracestate":"a=1"}}`)
	for _, tc := range []struct {
		name   string
		hdr    http.Header
		params json.RawMessage
		want   string // span id; "" = no remote span
	}{
		{"header", http.Header{"Traceparent": {tp}}, nil, sid},
		{"header wins over _meta", http.Header{"Traceparent": {tp}}, meta, sid},
		{"_meta (SEP-414)", http.Header{}, meta, "1111111111111111"},
		{"bad header falls back to _meta", http.Header{"Traceparent": {"00-zz"}}, meta, "1111111111111111"},
		{"nothing", http.Header{}, json.RawMessage(`{"name":"echo"}`), ""},
		{"bad _meta", http.Header{}, json.RawMessage(`{"_meta":{"traceparent":42}}`), ""},
		{"not JSON", http.Header{}, json.RawMessage(`{`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := trace.SpanContextFromContext(extractTraceContext(context.Background(), tc.hdr, tc.params))
			if tc.want == "" {
				if sc.IsValid() {
					t.Fatalf("got span context %v, want none", sc)
				}
				return
			}
			if !sc.IsRemote() || sc.TraceID().String() != tid || sc.SpanID().String() != tc.want {
				t.Fatalf("got trace %s span %s remote %v, want %s %s", sc.TraceID(), sc.SpanID(), sc.IsRemote(), tid, tc.want)
			}
		})
	}
}

// TestInjectReplacesTheClientsHeader: the upstream gets the gateway's context, never the
// client's header unchanged, and none at all without a span.
func TestInjectReplacesTheClientsHeader(t *testing.T) {
	ctx := extractTraceContext(context.Background(), http.Header{"Traceparent": {tp}}, nil)
	hdr := http.Header{"Traceparent": {"00-" + tid + "-2222222222222222-01"}, "Tracestate": {"x=y"}}
	injectTraceContext(ctx, hdr)
	if got := hdr.Get("Traceparent"); got != tp {
		t.Fatalf("traceparent %q, want %q", got, tp)
	}
	if hdr.Get("Tracestate") != "" {
		t.Fatalf("tracestate %q kept", hdr.Get("Tracestate"))
	}
	hdr = http.Header{"Traceparent": {tp}}
	injectTraceContext(context.Background(), hdr)
	if len(hdr.Values("Traceparent")) != 0 {
		t.Fatalf("traceparent %q passed without a span", hdr.Get("Traceparent"))
	}
}
