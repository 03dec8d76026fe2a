package authn_test

import (
	"errors"
	"net/http"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/authn"
	"gopkg.in/yaml.v3"
)

func TestConfigValidate(t *testing.T) {
	ok := authn.Config{Issuer: "https://login.example.com/realms/eng", Resource: "https://gw.example.com/mcp"}
	for _, tc := range []struct {
		name string
		edit func(*authn.Config)
		path string // "" = valid
	}{
		{"minimal", func(*authn.Config) {}, ""},
		{"loopback http issuer", func(c *authn.Config) { c.Issuer = "http://127.0.0.1:8080" }, ""},
		{"every field", func(c *authn.Config) {
			c.Audience, c.JWKSURL, c.Algorithms = []string{"api://gw"}, "https://login.example.com/keys", []string{"RS256", "PS256"}
			c.Scopes, c.Claims, c.Leeway = []string{"mcp:tools"}, []string{"groups"}, 30*time.Second
			c.Introspection = &authn.Introspection{URL: "https://login.example.com/introspect", ClientID: "gw", ClientSecret: "s"}
		}, ""},
		{"no issuer", func(c *authn.Config) { c.Issuer = "" }, "authn.issuer"},
		{"http issuer off loopback", func(c *authn.Config) { c.Issuer = "http://login.example.com" }, "authn.issuer"},
		{"relative resource", func(c *authn.Config) { c.Resource = "/mcp" }, "authn.resource"},
		{"resource with a fragment", func(c *authn.Config) { c.Resource = "https://gw.example.com/mcp#x" }, "authn.resource"},
		{"empty audience", func(c *authn.Config) { c.Audience = []string{"a", " "} }, "authn.audience[1]"},
		{"bad jwks url", func(c *authn.Config) { c.JWKSURL = "keys.json" }, "authn.jwks_url"},
		{"alg none", func(c *authn.Config) { c.Algorithms = []string{"RS256", "none"} }, "authn.algorithms[1]"},
		{"symmetric alg", func(c *authn.Config) { c.Algorithms = []string{"HS256"} }, "authn.algorithms[0]"},
		{"unknown alg", func(c *authn.Config) { c.Algorithms = []string{"RS999"} }, "authn.algorithms[0]"},
		{"scope with a space", func(c *authn.Config) { c.Scopes = []string{"a b"} }, "authn.scopes[0]"},
		{"empty claim", func(c *authn.Config) { c.Claims = []string{""} }, "authn.claims[0]"},
		{"introspection without client", func(c *authn.Config) {
			c.Introspection = &authn.Introspection{ClientSecret: "s"}
		}, "authn.introspection.client_id"},
		{"introspection without secret", func(c *authn.Config) {
			c.Introspection = &authn.Introspection{ClientID: "gw"}
		}, "authn.introspection.client_secret"},
		{"negative leeway", func(c *authn.Config) { c.Leeway = -time.Second }, "authn.leeway"},
		{"huge leeway", func(c *authn.Config) { c.Leeway = time.Hour }, "authn.leeway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.path == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe *authn.FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("Validate = %v, want a FieldError at %s", err, tc.path)
			}
		})
	}
}

func TestConfigYAML(t *testing.T) {
	const doc = `
issuer: https://login.example.com/realms/eng
resource: https://gw.example.com/mcp
audience: [api://gw]
algorithms: [RS256]
scopes: [mcp:tools]
claims: [groups]
introspection: {client_id: gw, client_secret: s}
leeway: 30s
`
	var c authn.Config
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Leeway != 30*time.Second || c.Introspection.ClientSecret != "s" || c.Audience[0] != "api://gw" {
		t.Errorf("decoded %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	dec = yaml.NewDecoder(strings.NewReader(doc + "scope: [x]\n"))
	dec.KnownFields(true)
	if err := dec.Decode(&authn.Config{}); err == nil || !strings.Contains(err.Error(), "scope") {
		t.Errorf("a misspelt key decoded: %v", err)
	}
}

func TestStripToken(t *testing.T) {
	out, _ := http.NewRequest(http.MethodPost, "http://upstream.test/mcp", nil)
	out.Header.Set("Authorization", "Bearer client-token")
	out.Header.Set("Proxy-Authorization", "Basic x")
	out.Header.Set("Mcp-Session-Id", "s1")
	authn.StripToken(out)
	if out.Header.Get("Authorization") != "" || out.Header.Get("Proxy-Authorization") != "" || out.Header.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("headers after StripToken: %v", out.Header)
	}
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"Bearer abc", "abc"}, {"bearer abc", "abc"}, {"BEARER  abc ", "abc"},
		{"Basic abc", ""}, {"Bearer", ""}, {"", ""},
	} {
		t.Run(tc.header, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "http://gw.test/mcp", nil)
			r.Header.Set("Authorization", tc.header)
			if got := authn.BearerToken(r); got != tc.want {
				t.Errorf("BearerToken(%q) = %q, want %q", tc.header, got, tc.want)
			}
		})
	}
}

func TestLocalPrincipal(t *testing.T) {
	p := authn.LocalPrincipal()
	if p.Issuer != authn.LocalIssuer || p.Subject == "" {
		t.Fatalf("LocalPrincipal = %+v", p)
	}
	if u, err := user.Current(); err == nil && u.Username != "" && p.Subject != u.Username {
		t.Errorf("subject = %q, want the OS user %q", p.Subject, u.Username)
	}
}
