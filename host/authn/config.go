package authn

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultAlgorithms are the signature algorithms accepted when Config.Algorithms is empty.
var DefaultAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// supportedAlgorithms are the asymmetric JWS algorithms a token may be signed with. Symmetric
// (HS*) algorithms and "none" are never accepted: a resource server holds no shared secret.
var supportedAlgorithms = []string{
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512", "EdDSA",
}

// Config is the `authn` section of the gateway config: who issues the tokens the gateway
// accepts, for which resource, and what they must grant. YAML keys are snake_case; decode it
// with KnownFields so a misspelt key is refused.
type Config struct {
	// Issuer is the authorization server's issuer identifier (the `iss` of its tokens and the
	// `issuer` of its metadata), e.g. https://login.example.com/realms/eng. Required.
	Issuer string `yaml:"issuer" json:"issuer"`
	// Resource is this MCP endpoint's canonical URI (RFC 8707 resource indicator, RFC 9728
	// `resource`), e.g. https://gateway.example.com/mcp: clients request tokens for it, and the
	// protected resource metadata is served under its path. Required.
	Resource string `yaml:"resource" json:"resource"`
	// Audience lists the `aud` values a token may carry, one of which it must; empty = [Resource].
	// Set it for an IdP that stamps its own audience (Entra's api://<app id>, an Okta custom
	// authorization server's audience).
	Audience []string `yaml:"audience" json:"audience,omitempty"`
	// JWKSURL is where the issuer's signing keys are; "" = the `jwks_uri` of the issuer's
	// OAuth (RFC 8414) or OpenID Connect discovery document.
	JWKSURL string `yaml:"jwks_url" json:"jwks_url,omitempty"`
	// Algorithms are the JWS algorithms accepted; empty = DefaultAlgorithms. Only asymmetric
	// algorithms are allowed; "none" never is.
	Algorithms []string `yaml:"algorithms" json:"algorithms,omitempty"`
	// Scopes are required: a token lacking any of them is answered 403 insufficient_scope.
	// Also advertised as scopes_supported in the metadata. Empty = none required.
	Scopes []string `yaml:"scopes" json:"scopes,omitempty"`
	// Claims names the token claims copied into Principal.Claims (e.g. groups, roles), for
	// rules and the audit. A claim the token lacks is left out.
	Claims []string `yaml:"claims" json:"claims,omitempty"`
	// Introspection, when set, verifies opaque (non-JWT) tokens by RFC 7662 introspection.
	Introspection *Introspection `yaml:"introspection" json:"introspection,omitempty"`
	// Leeway is the clock skew allowed on exp and nbf ("30s"); 0 = none.
	Leeway time.Duration `yaml:"leeway" json:"leeway,omitempty"`
}

// Introspection is how opaque tokens are checked (RFC 7662): the gateway authenticates to the
// introspection endpoint as a confidential client (HTTP Basic).
type Introspection struct {
	// URL is the introspection endpoint; "" = the issuer metadata's introspection_endpoint.
	URL          string `yaml:"url" json:"url,omitempty"`
	ClientID     string `yaml:"client_id" json:"client_id"`
	ClientSecret string `yaml:"client_secret" json:"-"`
}

// FieldError names the configuration field that is wrong, as a path below `authn`
// (`authn.issuer`, `authn.algorithms[1]`).
type FieldError struct {
	Path string
	Err  error
}

// Error names the path and the problem.
func (e *FieldError) Error() string { return fmt.Sprintf("config: %s: %v", e.Path, e.Err) }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(path, format string, a ...any) error {
	return &FieldError{Path: "authn." + path, Err: fmt.Errorf(format, a...)}
}

// Validate checks the configuration and returns every problem found, each a *FieldError
// naming its field (errors.Join).
func (c Config) Validate() error {
	var errs []error
	if err := checkURL(c.Issuer, true); err != nil {
		errs = append(errs, fieldErr("issuer", "%w", err))
	}
	if err := checkURL(c.Resource, true); err != nil {
		errs = append(errs, fieldErr("resource", "%w", err))
	} else if u, _ := url.Parse(c.Resource); u.Fragment != "" {
		errs = append(errs, fieldErr("resource", "%q must not have a fragment (RFC 8707)", c.Resource))
	}
	for i, a := range c.Audience {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fieldErr(fmt.Sprintf("audience[%d]", i), "is empty"))
		}
	}
	if c.JWKSURL != "" {
		if err := checkURL(c.JWKSURL, false); err != nil {
			errs = append(errs, fieldErr("jwks_url", "%w", err))
		}
	}
	for i, a := range c.Algorithms {
		switch {
		case strings.EqualFold(a, "none"):
			errs = append(errs, fieldErr(fmt.Sprintf("algorithms[%d]", i), `"none" is never accepted: a token must be signed`))
		case strings.HasPrefix(strings.ToUpper(a), "HS"):
			errs = append(errs, fieldErr(fmt.Sprintf("algorithms[%d]", i), "%q is symmetric: a resource server verifies with the issuer's public keys only", a))
		case !slices.Contains(supportedAlgorithms, a):
			errs = append(errs, fieldErr(fmt.Sprintf("algorithms[%d]", i), "%q is not one of %s", a, strings.Join(supportedAlgorithms, ", ")))
		}
	}
	for i, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\"\\") {
			errs = append(errs, fieldErr(fmt.Sprintf("scopes[%d]", i), "%q is not a scope token", s))
		}
	}
	for i, n := range c.Claims {
		if n == "" {
			errs = append(errs, fieldErr(fmt.Sprintf("claims[%d]", i), "is empty"))
		}
	}
	if in := c.Introspection; in != nil {
		if in.URL != "" {
			if err := checkURL(in.URL, false); err != nil {
				errs = append(errs, fieldErr("introspection.url", "%w", err))
			}
		}
		if in.ClientID == "" {
			errs = append(errs, fieldErr("introspection.client_id", "is required: the gateway authenticates to the introspection endpoint"))
		}
		if in.ClientSecret == "" {
			errs = append(errs, fieldErr("introspection.client_secret", "is required"))
		}
	}
	if c.Leeway < 0 {
		errs = append(errs, fieldErr("leeway", "%s is negative", c.Leeway))
	} else if c.Leeway > 5*time.Minute {
		errs = append(errs, fieldErr("leeway", "%s is more than 5m: fix the clocks instead", c.Leeway))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with the defaults of its zero fields applied.
func (c Config) withDefaults() Config {
	if len(c.Audience) == 0 {
		c.Audience = []string{c.Resource}
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = DefaultAlgorithms
	}
	c.Issuer = strings.TrimSpace(c.Issuer)
	return c
}

// checkURL requires an absolute http(s) URL; https unless the host is loopback, when
// httpsOnly (an issuer or a resource must be https outside tests and local setups).
func checkURL(s string, httpsOnly bool) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if httpsOnly && u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("%q must be https (http only on loopback)", s)
	}
	return nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}
