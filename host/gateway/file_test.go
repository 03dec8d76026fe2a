package gateway_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
)

// TestFileRefusesUnknownKeysNamingThePath decodes one misspelt key in every section of
// palisade.yaml, core and feature alike: each is refused with its path.
func TestFileRefusesUnknownKeysNamingThePath(t *testing.T) {
	for _, tc := range []struct{ yaml, path string }{
		{"listn: x\n", "listn"},
		{"http:\n  read_timeout: 1s\n  readtimeout: 1s\n", "http.readtimeout"},
		{"limits:\n  body_byte: 1\n", "limits.body_byte"},
		{"nats:\n  urll: nats://x\n", "nats.urll"},
		{"audit:\n  argument: full\n", "audit.argument"},
		{"plugins:\n  cache: x\n", "plugins.cache"},
		{"log:\n  levl: debug\n", "log.levl"},
		{"admin:\n  tokn: x\n", "admin.tokn"},
		{"upstreams:\n  - name: a\n    url: http://x/\n    header: {}\n", "upstreams[0].header"},
		{"agents:\n  pining: false\n", "agents.pining"},
		{"approvals:\n  timeout: 1m\n  on_timout: deny\n", "approvals.on_timout"},
		{"bundles:\n  keep: 3\n  wtach: false\n", "bundles.wtach"},
		{"infer:\n  libary: x\n", "infer.libary"},
		{"llm:\n  providers: [{name: l, kind: local, modle: x}]\n", "llm.providers[0].modle"},
		{"llm:\n  cache: {size: 1, ttls: 1s}\n", "llm.cache.ttls"},
		{"tokens:\n  ttl: 1m\n  key: x\n", "tokens.key"},
		{"audit_sink:\n  postgres: {dsn: x, retension: 1h}\n", "audit_sink.postgres.retension"},
		{"audit_sink:\n  mysql: {}\n", "audit_sink.mysql"},
		{"authn:\n  issuer: https://login.example.com\n  isuer: x\n", "authn.isuer"},
		{"authn:\n  introspection: {client_id: a, secret: b}\n", "authn.introspection.secret"},
		{"tokens:\n  ttl: soon\n", ""}, // a bad duration: refused (yaml.v3 gives no line for it)
	} {
		t.Run(tc.yaml, func(t *testing.T) {
			_, err := gateway.ParseFile([]byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *config.FieldError
			if tc.path != "" && (!errors.As(err, &fe) || fe.Path != tc.path) {
				t.Fatalf("err = %v, want a FieldError at %s", err, tc.path)
			}
		})
	}
}

// TestBadSectionRefusedBeforeAnythingStarts gives New a bad value in a feature section: it is
// refused naming the field, before the data dir is made, the embedded NATS server started or a
// listener opened.
func TestBadSectionRefusedBeforeAnythingStarts(t *testing.T) {
	for _, tc := range []struct{ yaml, path string }{
		{"approvals:\n  on_timeout: maybe\n", "approvals.on_timeout"},
		{"infer:\n  provider: tpu\n", "infer.provider"},
		{"bundles:\n  trusted_keys: [no-such-key.pub]\n", "bundles.trusted_keys"},
		{"tokens:\n  ttl: -1s\n", "tokens.ttl"},
		{"llm:\n  providers: [{name: x, kind: no-such-kind}]\n", "llm"},
		{"audit_sink:\n  postgres: {retention: 720h}\n", "audit_sink.postgres.dsn"},
		{"audit_sink:\n  postgres: {dsn: 'postgres://u@h:notaport/db'}\n", "audit_sink.postgres.dsn"},
		{"audit_sink:\n  postgres: {dsn: 'host=/tmp', retention: -1h}\n", "audit_sink.postgres.retention"},
		{"audit_sink:\n  postgres: {dsn: 'host=/tmp', batch_size: -5}\n", "audit_sink.postgres.batch_size"},
		{"authn:\n  resource: https://gw.example.com/mcp\n", "authn.issuer"},
		{"authn:\n  issuer: https://login.example.com\n  resource: https://gw.example.com/mcp\n  algorithms: [none]\n", "authn.algorithms[0]"},
		{"authn:\n  issuer: http://login.example.com\n  resource: https://gw.example.com/mcp\n", "authn.issuer"},
		{"telemetry:\n  otlp_endpoint: collector:4318\n", "telemetry.otlp_endpoint"},
		{"telemetry:\n  otlp_endpoint: http://127.0.0.1:4318\n  protocol: thrift\n", "telemetry.protocol"},
		{"telemetry:\n  otlp_endpoint: http://127.0.0.1:4318\n  sample_ratio: 1.5\n", "telemetry.sample_ratio"},
		{"telemetry:\n  service_name: gw\n", "telemetry.otlp_endpoint"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			f, err := gateway.ParseFile([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "data")
			f.Listen, f.DataDir, f.Bundle = "127.0.0.1:0", data, t.TempDir()
			f.NATS.Port = -1 // embedded: it would write under data
			f.Upstreams = []config.Upstream{{Name: "u", URL: "http://127.0.0.1:1/mcp"}}
			if err := f.Validate(); err == nil {
				t.Fatal("File.Validate accepted it")
			}
			g, err := gateway.New(context.Background(), gateway.Options{Config: f.Config, Sections: f.Sections})
			if err == nil {
				g.Close(context.Background())
				t.Fatal("New accepted it")
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("err = %v, want a FieldError at %s", err, tc.path)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("data dir exists after a refused config (something started): %v", err)
			}
		})
	}
}
