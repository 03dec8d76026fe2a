package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/added060/palisade/host/telemetry"
	"go.opentelemetry.io/otel/trace"
)

func ratio(f float64) *float64 { return &f }

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    telemetry.Config
		path string // "" = valid
	}{
		{"off", telemetry.Config{}, ""},
		{"http", telemetry.Config{OTLPEndpoint: "http://127.0.0.1:4318"}, ""},
		{"grpc", telemetry.Config{OTLPEndpoint: "https://otel.example.com:4317", Protocol: "grpc", SampleRatio: ratio(0.25), Headers: map[string]string{"x-key": "k"}}, ""},
		{"no scheme", telemetry.Config{OTLPEndpoint: "collector:4318"}, "telemetry.otlp_endpoint"},
		{"no host", telemetry.Config{OTLPEndpoint: "http://"}, "telemetry.otlp_endpoint"},
		{"protocol", telemetry.Config{OTLPEndpoint: "http://c:4318", Protocol: "zipkin"}, "telemetry.protocol"},
		{"ratio zero", telemetry.Config{OTLPEndpoint: "http://c:4318", SampleRatio: ratio(0)}, "telemetry.sample_ratio"},
		{"ratio above one", telemetry.Config{OTLPEndpoint: "http://c:4318", SampleRatio: ratio(2)}, "telemetry.sample_ratio"},
		{"empty header", telemetry.Config{OTLPEndpoint: "http://c:4318", Headers: map[string]string{"": "v"}}, "telemetry.headers"},
		{"settings without endpoint", telemetry.Config{ServiceName: "gw"}, "telemetry.otlp_endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.path == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe *telemetry.FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("Validate = %v, want a FieldError at %s", err, tc.path)
			}
		})
	}
}

// TestOffIsNoop: without an endpoint New builds a tracer whose spans record nothing.
func TestOffIsNoop(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.Tracer().Start(context.Background(), "x")
	if span.IsRecording() || tel.Enabled() {
		t.Fatal("an off Telemetry records spans")
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

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
			sc := trace.SpanContextFromContext(telemetry.Extract(context.Background(), tc.hdr, tc.params))
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
	ctx := telemetry.Extract(context.Background(), http.Header{"Traceparent": {tp}}, nil)
	hdr := http.Header{"Traceparent": {"00-" + tid + "-2222222222222222-01"}, "Tracestate": {"x=y"}}
	telemetry.Inject(ctx, hdr)
	if got := hdr.Get("Traceparent"); got != tp {
		t.Fatalf("traceparent %q, want %q", got, tp)
	}
	if hdr.Get("Tracestate") != "" {
		t.Fatalf("tracestate %q kept", hdr.Get("Tracestate"))
	}
	hdr = http.Header{"Traceparent": {tp}}
	telemetry.Inject(context.Background(), hdr)
	if len(hdr.Values("Traceparent")) != 0 {
		t.Fatalf("traceparent %q passed without a span", hdr.Get("Traceparent"))
	}
}
