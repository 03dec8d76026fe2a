package admin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/added060/palisade/host/config"
)

// Cookies of the dashboard's sign-in.
const (
	// SessionCookie carries a signed-in person's session id: HttpOnly, SameSite=Strict, Secure
	// unless the redirect URL is loopback http, path = the admin API prefix.
	SessionCookie = "palisade_session"
	// flowCookie binds a sign-in in progress to the browser that started it (the state). It
	// is SameSite=Lax: the identity provider's redirect back is a cross-site navigation.
	flowCookie = "palisade_oidc"
)

// DefaultSessionTTL is how long a dashboard session lasts when admin.oidc.session is 0.
const DefaultSessionTTL = 8 * time.Hour

// flowTTL bounds a sign-in in progress.
const flowTTL = 10 * time.Minute

// oidcLogin is the dashboard's sign-in with the identity provider: authorization code with
// PKCE (S256), state and nonce checked, the ID token verified by go-oidc, roles from its
// claims (admin.oidc.roles), and a server-side session behind an HttpOnly cookie.
type oidcLogin struct {
	cfg      config.AdminOIDC
	name     string
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	roles    roleMapper
	secure   bool
	ttl      time.Duration

	mu    sync.Mutex
	flows map[string]flow // by state
	now   func() time.Time
}

type flow struct {
	nonce, verifier string
	expires         time.Time
}

// newOIDCLogin discovers the provider (a wrong issuer fails start).
func newOIDCLogin(ctx context.Context, c config.AdminOIDC) (*oidcLogin, error) {
	if c.Issuer == "" {
		return nil, errors.New("admin.oidc: issuer is required (or set authn.issuer)")
	}
	if c.ClientID == "" || c.RedirectURL == "" {
		return nil, errors.New("admin.oidc: client_id and redirect_url are required")
	}
	ru, err := url.Parse(c.RedirectURL)
	if err != nil || !ru.IsAbs() {
		return nil, fmt.Errorf("admin.oidc.redirect_url: %q is not an absolute URL", c.RedirectURL)
	}
	p, err := oidc.NewProvider(ctx, c.Issuer)
	if err != nil {
		return nil, fmt.Errorf("admin.oidc: discover %s: %w", c.Issuer, err)
	}
	secret := ""
	if c.ClientSecretFile != "" {
		b, err := os.ReadFile(c.ClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("admin.oidc.client_secret_file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	scopes := c.Scopes
	if len(scopes) == 0 {
		scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	name := c.Name
	if name == "" {
		if u, err := url.Parse(c.Issuer); err == nil {
			name = u.Host
		}
	}
	ttl := c.Session.D()
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &oidcLogin{
		cfg: c, name: name, roles: roleMapper{c.Roles}, ttl: ttl,
		oauth:    oauth2.Config{ClientID: c.ClientID, ClientSecret: secret, RedirectURL: c.RedirectURL, Endpoint: p.Endpoint(), Scopes: scopes},
		verifier: p.Verifier(&oidc.Config{ClientID: c.ClientID}),
		secure:   !(ru.Scheme == "http" && loopback(ru.Hostname())),
		flows:    map[string]flow{}, now: time.Now,
	}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// start is GET {prefix}/oidc/login: it sends the browser to the provider.
func (l *oidcLogin) start(prefix string) echo.HandlerFunc {
	return func(c echo.Context) error {
		state, nonce, verifier := randomHex(16), randomHex(16), oauth2.GenerateVerifier()
		now := l.now()
		l.mu.Lock()
		for k, f := range l.flows {
			if now.After(f.expires) {
				delete(l.flows, k)
			}
		}
		if len(l.flows) > 10_000 {
			l.mu.Unlock()
			return Error(c, http.StatusServiceUnavailable, "too many sign-ins in progress")
		}
		l.flows[state] = flow{nonce: nonce, verifier: verifier, expires: now.Add(flowTTL)}
		l.mu.Unlock()
		c.SetCookie(&http.Cookie{Name: flowCookie, Value: state, Path: prefix + "/oidc", MaxAge: int(flowTTL.Seconds()),
			HttpOnly: true, Secure: l.secure, SameSite: http.SameSiteLaxMode})
		opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)}
		if hint := c.QueryParam("login_hint"); hint != "" {
			opts = append(opts, oauth2.SetAuthURLParam("login_hint", hint))
		}
		return c.Redirect(http.StatusFound, l.oauth.AuthCodeURL(state, opts...))
	}
}

// callback is GET {prefix}/oidc/callback: state (query = this browser's cookie, known, fresh),
// the code exchanged with the PKCE verifier, the ID token verified (issuer, audience, expiry,
// signature) and its nonce checked; then a session.
func (l *oidcLogin) callback(s *Server) echo.HandlerFunc {
	return func(c echo.Context) error {
		q := c.QueryParams()
		if e := q.Get("error"); e != "" {
			return Error(c, http.StatusUnauthorized, "the identity provider refused the sign-in: "+e)
		}
		state := q.Get("state")
		ck, err := c.Cookie(flowCookie)
		if state == "" || err != nil || ck.Value != state {
			return Error(c, http.StatusBadRequest, "sign-in state does not match this browser: start again from the dashboard")
		}
		c.SetCookie(&http.Cookie{Name: flowCookie, Path: s.o.Prefix + "/oidc", MaxAge: -1, HttpOnly: true, Secure: l.secure, SameSite: http.SameSiteLaxMode})
		l.mu.Lock()
		f, ok := l.flows[state]
		delete(l.flows, state)
		l.mu.Unlock()
		if !ok || l.now().After(f.expires) {
			return Error(c, http.StatusBadRequest, "sign-in expired or already used: start again from the dashboard")
		}
		ctx := c.Request().Context()
		tok, err := l.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.verifier))
		if err != nil {
			s.o.Logger.Warn("dashboard sign-in: code exchange failed", "err", err)
			return Error(c, http.StatusUnauthorized, "the identity provider did not accept the code")
		}
		raw, _ := tok.Extra("id_token").(string)
		if raw == "" {
			return Error(c, http.StatusUnauthorized, "the identity provider sent no ID token")
		}
		idt, err := l.verifier.Verify(ctx, raw)
		if err != nil {
			s.o.Logger.Warn("dashboard sign-in: ID token refused", "err", err)
			return Error(c, http.StatusUnauthorized, "the ID token was refused")
		}
		if idt.Nonce != f.nonce {
			s.o.Logger.Warn("dashboard sign-in: nonce mismatch", "subject", idt.Subject)
			return Error(c, http.StatusUnauthorized, "the ID token's nonce does not match this sign-in")
		}
		var claims map[string]any
		if err := idt.Claims(&claims); err != nil {
			return Error(c, http.StatusUnauthorized, "unreadable ID token claims")
		}
		id := Identity{Issuer: idt.Issuer, Subject: idt.Subject, Name: nameOf(claims, idt.Subject), Role: l.roles.role(claims), Via: "session"}
		if id.Role == RoleNone {
			s.o.Logger.Warn("dashboard sign-in refused: no role", "who", id.String())
			return Error(c, http.StatusForbidden, id.String()+" has no role here (admin.oidc.roles)")
		}
		s.sess.start(c, id)
		s.o.Logger.Info("dashboard sign-in", "who", id.String(), "role", id.Role.String())
		return c.Redirect(http.StatusFound, UIPath+"/")
	}
}
