package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/added060/palisade/host/telemetry"
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
