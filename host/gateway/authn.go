package gateway

import (
	"context"
	"fmt"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
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
