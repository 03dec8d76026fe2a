package gateway

import (
	"context"
	"fmt"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
)

// startAuthn builds the resource server of the authn: section (host/authn): the issuer's
// metadata and key set are fetched now, so a wrong issuer fails start, not the first call.
// Off loopback with only http.client_token, it says that the shared secret is the opt-out.
func (g *Gateway) startAuthn(ctx context.Context) error {
	a := g.sections.Authn
	if a == nil {
		if !config.LoopbackHost(g.cfg.Listen) && g.cfg.HTTP.ClientToken != "" {
			g.log.Warn("listening beyond loopback with http.client_token only: one shared secret, no identity "+
				"(principal) for rules or the audit; add an authn: section to verify access tokens from your identity provider",
				"listen", g.cfg.Listen)
		}
		return nil
	}
	v, err := authn.New(ctx, authn.Options{Config: *a, Logger: g.log.With("component", "authn")})
	if err != nil {
		return fmt.Errorf("authn: %w", err)
	}
	g.authn = v
	if g.cfg.HTTP.ClientToken != "" {
		g.log.Warn("authn: is set: http.client_token is not used on /mcp or /v1/hook (access tokens are)")
	}
	g.log.Info("authn: verifying access tokens", "issuer", a.Issuer, "resource", a.Resource, "metadata", v.MetadataURL())
	return nil
}

// registerAuthn serves the RFC 9728 protected resource metadata, without a token, at
// /.well-known/oauth-protected-resource and below it (the resource's path, e.g. .../mcp).
func (g *Gateway) registerAuthn() {
	if g.authn == nil {
		return
	}
	h := echo.WrapHandler(g.authn.MetadataHandler())
	for _, m := range []string{"GET", "HEAD"} {
		g.echo.Add(m, authn.WellKnownPath, h)
		g.echo.Add(m, authn.WellKnownPath+"/*", h)
	}
}

// Authn returns the gateway's resource server (the authn: section), nil without one.
func (g *Gateway) Authn() *authn.Verifier { return g.authn }

// adminOptions are the admin API's options: the break-glass token, the dashboard's sign-in
// (admin.oidc, its issuer defaulting to authn.issuer; admin.passkeys) and, with authn:, access
// tokens from the identity provider, their roles mapped by admin.oidc.roles.
func (g *Gateway) adminOptions() admin.Options {
	o := admin.Options{Echo: g.echo, Token: g.cfg.Admin.Token, DataDir: g.cfg.DataDir, Logger: g.log.With("component", "admin")}
	if oc := g.cfg.Admin.OIDC; oc != nil {
		c := *oc
		if c.Issuer == "" && g.sections.Authn != nil {
			c.Issuer = g.sections.Authn.Issuer
		}
		o.OIDC, o.Roles = &c, c.Roles
	}
	if g.authn != nil {
		o.Tokens = tokenVerifier{g.authn}
	}
	o.Passkeys = g.cfg.Admin.Passkeys
	return o
}

// tokenVerifier adapts *authn.Verifier to admin.TokenVerifier.
type tokenVerifier struct{ v *authn.Verifier }

func (t tokenVerifier) Verify(ctx context.Context, tok string) (*abi.Principal, error) {
	return t.v.Verify(ctx, tok)
}
