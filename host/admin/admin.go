package admin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/sdk/go/abi"
)

// DefaultPrefix is where the admin API is mounted when Options.Prefix is "".
const DefaultPrefix = "/admin/api"

// TokenFile is the name of the generated token's file inside Options.DataDir.
const TokenFile = "admin.token"

// ErrNoToken is returned by New when no token is configured and there is no data directory to
// keep a generated one in.
var ErrNoToken = errors.New("admin: no token and no data directory")

// Options configure a Server.
type Options struct {
	// Echo is the HTTP server the admin routes are added to; required.
	Echo *echo.Echo
	// Prefix is the path every admin route lives under; "" = /admin/api.
	Prefix string
	// Token is the bearer token; "" = read DataDir/admin.token, generating it on first start.
	Token string
	// DataDir keeps the generated token (mode 0600); used only when Token is "".
	DataDir string
	// Logger; nil = discard.
	Logger *slog.Logger
	// OIDC lets people sign in to the dashboard with the identity provider (oidc.go); nil =
	// only the break-glass token. Its issuer must be set.
	OIDC *config.AdminOIDC
	// Tokens verifies a bearer access token from the identity provider (host/authn's
	// Verifier); nil = no access tokens. Roles come from its claims through OIDC's role
	// mapping, so the claim must be among authn.claims.
	Tokens TokenVerifier
	// Roles maps an access token's claims to a role when OIDC is nil.
	Roles config.RoleClaim
	// Passkeys lets people sign in to the dashboard with a passkey (WebAuthn, passkeys.go),
	// registered by themselves once signed in, or for them by an admin; kept in
	// DataDir/passkeys.json. nil = no passkeys.
	Passkeys *config.AdminPasskeys
}

// TokenVerifier verifies an access token (host/authn.Verifier).
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (*abi.Principal, error)
}

// Server is the admin API: one check of who calls and with which role (auth) in front of route
// sets that features add (bundles here, approvals and events elsewhere) through Group.
type Server struct {
	o     Options
	token []byte
	group *echo.Group
	login loginCodes
	oidc  *oidcLogin    // nil = no sign-in with the identity provider
	pk    *passkeys     // nil = no sign-in with a passkey
	sess  *sessionStore // the signed-in people; nil = neither sign-in is configured
	roles roleMapper
	// breakGlass logs a use of the shared admin token at most once a minute.
	breakGlass rate.Sometimes
}

// New loads or generates the token and mounts the authenticated group on o.Echo. With
// o.OIDC it discovers the identity provider first (a wrong issuer fails start).
func New(o Options) (*Server, error) {
	return NewContext(context.Background(), o)
}

// NewContext is New with a context for the identity provider's discovery.
func NewContext(ctx context.Context, o Options) (*Server, error) {
	if o.Echo == nil {
		return nil, errors.New("admin: Options.Echo is required")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	tok := o.Token
	if tok == "" {
		var err error
		if tok, err = LoadOrCreateToken(o.DataDir); err != nil {
			return nil, err
		}
	}
	s := &Server{o: o, token: []byte(tok), login: loginCodes{codes: map[[32]byte]time.Time{}, now: time.Now},
		roles: roleMapper{o.Roles}, breakGlass: rate.Sometimes{Interval: time.Minute}}
	// Routes outside the check: a one-time code for the token (login.go) and the sign-in.
	o.Echo.POST(o.Prefix+"/login", s.loginRoute)
	o.Echo.GET(o.Prefix+"/oidc", s.oidcInfo)
	if o.OIDC != nil {
		l, err := newOIDCLogin(ctx, *o.OIDC)
		if err != nil {
			return nil, err
		}
		s.oidc, s.roles = l, l.roles
		s.sess = newSessionStore(o.Prefix, l.secure, l.ttl)
		o.Echo.GET(o.Prefix+"/oidc/login", l.start(o.Prefix))
		o.Echo.GET(o.Prefix+"/oidc/callback", l.callback(s))
	}
	o.Echo.GET(o.Prefix+"/passkeys", s.passkeyInfo)
	if o.Passkeys != nil {
		pk, err := newPasskeys(*o.Passkeys, o.DataDir, o.Logger)
		if err != nil {
			return nil, err
		}
		s.pk = pk
		if s.sess == nil {
			s.sess = newSessionStore(o.Prefix, pk.secure, pk.ttl)
		} else {
			s.sess.secure = s.sess.secure || pk.secure
		}
		o.Echo.POST(o.Prefix+"/passkeys/login/begin", s.passkeyLoginBegin)
		o.Echo.POST(o.Prefix+"/passkeys/login/finish", s.passkeyLoginFinish)
	}
	if s.sess != nil {
		o.Echo.POST(o.Prefix+"/logout", s.sess.logout)
	}
	s.group = o.Echo.Group(o.Prefix, s.auth)
	s.group.GET("/whoami", whoami)
	if s.pk != nil {
		s.group.POST("/passkeys/register/begin", s.passkeyRegisterBegin)
		s.group.POST("/passkeys/register/finish", s.passkeyRegisterFinish)
		s.group.GET("/passkeys/list", s.passkeyList)
		s.group.DELETE("/passkeys/:id", s.passkeyDelete)
	}
	return s, nil
}

// Group is the authenticated route group: every route added to it requires a credential and
// the role the route needs (needs: viewer for reads, approver to decide, admin for the rest).
// Paths are relative to the prefix (g.GET("/bundles", h) serves /admin/api/bundles).
func (s *Server) Group() *echo.Group { return s.group }

// Prefix is the path the admin API is mounted under.
func (s *Server) Prefix() string { return s.o.Prefix }

// Token returns the bearer token (to print it for the operator on first start).
func (s *Server) Token() string { return string(s.token) }

// Logger is the server's logger, for route sets.
func (s *Server) Logger() *slog.Logger { return s.o.Logger }

// auth names the caller and enforces the route's role (needs): a bearer token that is the
// shared admin token (break-glass: role admin, logged), else an access token from the identity
// provider (Options.Tokens, role from its claims); without a bearer token, the dashboard
// session's cookie. The identity is in the echo context (IdentityFrom) and the request's.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		var (
			id Identity
			ok bool
		)
		scheme, tok, hasBearer := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
		tok = strings.TrimSpace(tok)
		switch {
		case hasBearer && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(tok), s.token) == 1:
			id, ok = Identity{Name: BreakGlassName, Role: RoleAdmin, BreakGlass: true, Via: "admin-token"}, true
			s.breakGlass.Do(func() {
				s.o.Logger.Warn("admin API used with the shared admin token (break-glass; held by the engine's user)",
					"method", r.Method, "path", r.URL.Path, "remote", c.RealIP())
			})
		case hasBearer && strings.EqualFold(scheme, "Bearer") && s.o.Tokens != nil && tok != "":
			p, err := s.o.Tokens.Verify(r.Context(), tok)
			if err != nil {
				s.o.Logger.Debug("admin API: access token refused", "err", err)
				break
			}
			id, ok = s.roles.fromPrincipal(p), true
		case !hasBearer && s.sess != nil:
			id, ok = s.sess.lookup(r)
		}
		if !ok {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="palisade-admin"`)
			return Error(c, http.StatusUnauthorized, "sign in, or send a bearer access token (or the admin token)")
		}
		if want := needs(r.Method, r.URL.Path, s.o.Prefix); id.Role < want {
			return forbidden(c, id, want)
		}
		c.Set("palisade.identity", id)
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
		return next(c)
	}
}

// oidcInfo is GET {prefix}/oidc, without authentication: whether the dashboard offers a
// sign-in with the identity provider, its name and where it starts.
func (s *Server) oidcInfo(c echo.Context) error {
	if s.oidc == nil {
		return c.JSON(http.StatusOK, map[string]any{"enabled": false})
	}
	return c.JSON(http.StatusOK, map[string]any{"enabled": true, "name": s.oidc.name, "login": s.o.Prefix + "/oidc/login"})
}

// Error writes the admin API's error shape: {"error": "..."}.
func Error(c echo.Context, status int, msg string) error {
	return c.JSON(status, map[string]string{"error": msg})
}

// LoadOrCreateToken reads dir/admin.token, or writes a new random 32-byte hex token there (mode
// 0600) when it does not exist.
func LoadOrCreateToken(dir string) (string, error) {
	if dir == "" {
		return "", ErrNoToken
	}
	p := filepath.Join(dir, TokenFile)
	if b, err := os.ReadFile(p); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("admin: read token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("admin: generate token: %w", err)
	}
	t := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("admin: token dir: %w", err)
	}
	if err := os.WriteFile(p, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("admin: write token: %w", err)
	}
	return t, nil
}

// whoami is GET {prefix}/whoami: the caller's identity and role, for the dashboard.
func whoami(c echo.Context) error {
	id, _ := IdentityFrom(c)
	return c.JSON(http.StatusOK, id)
}
