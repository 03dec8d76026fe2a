package config

import (
	"errors"
	"testing"
)

func valid() Config {
	return Config{Bundle: "b", Upstreams: []Upstream{{Name: "a", URL: "http://127.0.0.1:1/mcp"}}}
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		path string
	}{
		{"listen", func(c *Config) { c.Listen = "nope" }, "listen"},
		{"no bundle", func(c *Config) { c.Bundle = "" }, "bundle"},
		{"no upstreams", func(c *Config) { c.Upstreams = nil }, "upstreams"},
		{"bad url", func(c *Config) { c.Upstreams = append(c.Upstreams, Upstream{Name: "b", URL: "ftp://x"}) }, "upstreams[1].url"},
		{"dup name", func(c *Config) { c.Upstreams = append(c.Upstreams, Upstream{Name: "a", URL: "http://x"}) }, "upstreams[1].name"},
		{"url and command", func(c *Config) { c.Upstreams[0].Command = "node" }, "upstreams[0]"},
		{"neither url nor command", func(c *Config) { c.Upstreams[0].URL = "" }, "upstreams[0]"},
		{"args with url", func(c *Config) { c.Upstreams[0].Args = []string{"x"} }, "upstreams[0].url"},
		{"headers with command", func(c *Config) {
			c.Upstreams = append(c.Upstreams, Upstream{Name: "b", Command: "node", Headers: map[string]string{"A": "b"}})
		}, "upstreams[1].headers"},
		{"bad env name", func(c *Config) {
			c.Upstreams = append(c.Upstreams, Upstream{Name: "b", Command: "node", Env: map[string]string{"A=B": "c"}})
		}, "upstreams[1].env"},
		{"slash name", func(c *Config) { c.Upstreams[0].Name = "a/b" }, "upstreams[0].name"},
		{"oauth with command", func(c *Config) {
			c.Upstreams = append(c.Upstreams, Upstream{Name: "b", Command: "node", OAuth: &UpstreamOAuth{}})
		}, "upstreams[1].oauth"},
		{"oauth token url", func(c *Config) {
			c.Upstreams[0].OAuth = &UpstreamOAuth{TokenURL: "http://idp.example/token", ClientID: "c", ClientSecretFile: "f"}
		}, "upstreams[0].oauth.token_url"},
		{"oauth client id", func(c *Config) {
			c.Upstreams[0].OAuth = &UpstreamOAuth{TokenURL: "https://idp.example/token", ClientSecretFile: "f"}
		}, "upstreams[0].oauth.client_id"},
		{"oauth secret", func(c *Config) {
			c.Upstreams[0].OAuth = &UpstreamOAuth{TokenURL: "https://idp.example/token", ClientID: "c"}
		}, "upstreams[0].oauth.client_secret_file"},
		{"oauth and an Authorization header", func(c *Config) {
			c.Upstreams[0].OAuth = &UpstreamOAuth{TokenURL: "https://idp.example/token", ClientID: "c", ClientSecretFile: "f"}
			c.Upstreams[0].Headers = map[string]string{"authorization": "Bearer x"}
		}, "upstreams[0].headers"},
		{"audit", func(c *Config) { c.Audit.Arguments = "all" }, "audit.arguments"},
		{"nats url", func(c *Config) { c.NATS.URL = "::" }, "nats.url"},
		{"log level", func(c *Config) { c.Log.Level = "loud" }, "log.level"},
		{"batch elements", func(c *Config) { c.Limits.BatchElements = -1 }, "limits.batch_elements"},
		{"upstream total timeout", func(c *Config) { c.Limits.UpstreamTotalTimeout = -1 }, "limits.upstream_total_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mod(&c)
			c = c.WithDefaults()
			err := c.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("err = %v, want a FieldError at %s", err, tc.path)
			}
		})
	}
	c := valid()
	c.Upstreams = append(c.Upstreams, Upstream{Name: "fs", Command: "node", Args: []string{"server.js"}, Env: map[string]string{"DEBUG": "1"}, Cwd: "."})
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	if c.Limits.BatchElements != DefaultBatchElements || c.Limits.UpstreamTotalTimeout.D() != DefaultUpstreamTotalTimeout {
		t.Errorf("defaults: batch_elements %d, upstream_total_timeout %s", c.Limits.BatchElements, c.Limits.UpstreamTotalTimeout.D())
	}
}

func TestParseStrictAndOverride(t *testing.T) {
	if _, err := Parse([]byte("limits: {bodybytes: 3}\n")); err == nil {
		t.Fatal("unknown nested field accepted")
	}
	c, err := Parse([]byte("listen: 127.0.0.1:1\nbundle: x\nupstreams: [{name: a, url: 'http://h/mcp'}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PALISADE_LISTEN": "127.0.0.1:2", "PALISADE_NATS_URL": "nats://127.0.0.1:4333"}
	if err := c.Override(func(k string) string { return env[k] }, map[string]string{"listen": "127.0.0.1:3"}); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:3" || c.NATS.URL != "nats://127.0.0.1:4333" {
		t.Fatalf("flag must beat env, env must beat file: %+v", c)
	}
	if err := c.Override(func(string) string { return "" }, map[string]string{"upstream": "x=http://a/mcp,y=http://b/mcp"}); err != nil || len(c.Upstreams) != 2 || c.Upstreams[1].Name != "y" {
		t.Fatalf("upstream flag: %v %+v", err, c.Upstreams)
	}
	if err := c.Override(func(string) string { return "" }, map[string]string{"upstream": "nonsense"}); err == nil {
		t.Fatal("bad --upstream accepted")
	}
}

// TestParseNamesThePath checks that Parse refuses an unknown key or a bad value at any depth,
// naming its path.
func TestParseNamesThePath(t *testing.T) {
	for _, tc := range []struct{ label, yaml, path string }{
		{"unknown section", "mystery: 1\n", "mystery"},
		{"nested key", "limits:\n  body_bytes: 1\n  bodybytes: 2\n", "limits.bodybytes"},
		{"in a list", "upstreams:\n  - name: a\n    url: http://x/\n  - name: b\n    ulr: http://y/\n", "upstreams[1].ulr"},
		{"wrong type", "nats:\n  port: many\n", "nats.port"},
		{"bad duration", "limits:\n  body_bytes: 1\n  upstream_timeout: sixty\n", "limits.upstream_timeout"},
		{"bad duration in a flow map", "upstreams:\n  - {name: a, url: http://x/, timeout: sixty}\n", "upstreams[0].timeout"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("err = %v, want a FieldError at %s", err, tc.path)
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"127.0.0.1:8420", true}, {"localhost:1", true}, {"LOCALHOST", true}, {"[::1]:8420", true},
		{"::1", true}, {"127.1.2.3:80", true}, {"0.0.0.0:8420", false}, {":8420", false},
		{"[::]:8420", false}, {"10.0.0.1:8420", false}, {"evil.example.com", false},
		{"localhost.evil.com:80", false}, {"", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := LoopbackHost(tc.in); got != tc.want {
				t.Errorf("LoopbackHost(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestValidateListenAndHTTP(t *testing.T) {
	base := func() Config {
		return Config{Bundle: "b", Upstreams: []Upstream{{Name: "a", URL: "http://127.0.0.1:1/mcp"}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		path string // "" = valid
	}{
		{"loopback default", func(*Config) {}, ""},
		// Off loopback without a token is refused by gateway.Sections.Validate, which also sees
		// the authn: section (TestNonLoopbackListenNeedsClientToken).
		{"every interface without token", func(c *Config) { c.Listen = "0.0.0.0:8420" }, ""},
		{"every interface with token", func(c *Config) { c.Listen = "0.0.0.0:8420"; c.HTTP.ClientToken = "t" }, ""},
		{"bad origin", func(c *Config) { c.HTTP.AllowedOrigins = []string{"app.test"} }, "http.allowed_origins[0]"},
		{"origin with path", func(c *Config) { c.HTTP.AllowedOrigins = []string{"https://app.test/x"} }, "http.allowed_origins[0]"},
		{"bad host", func(c *Config) { c.HTTP.AllowedHosts = []string{"a b"} }, "http.allowed_hosts[0]"},
		{"negative limit", func(c *Config) { c.HTTP.MaxConnections = -1 }, "http.max_connections"},
		{"negative timeout", func(c *Config) { c.HTTP.ReadTimeout = -1 }, "http.read_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			c = c.WithDefaults()
			err := c.Validate()
			var fe *FieldError
			switch {
			case tc.path == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.path != "" && (!errors.As(err, &fe) || fe.Path != tc.path):
				t.Fatalf("Validate: %v, want a %s field error", err, tc.path)
			}
		})
	}
}
