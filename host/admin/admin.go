package admin

import (
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
}

// Server is the admin API: one bearer-token check in front of route sets that features add
// (bundles here, approvals and events elsewhere) through Group.
type Server struct {
	o     Options
	token []byte
	group *echo.Group
	login loginCodes
}

// New loads or generates the token and mounts the authenticated group on o.Echo.
func New(o Options) (*Server, error) {
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
	s := &Server{o: o, token: []byte(tok), login: loginCodes{codes: map[[32]byte]time.Time{}, now: time.Now}}
	// The one route outside the bearer check: a one-time code for the token (login.go).
	o.Echo.POST(o.Prefix+"/login", s.loginRoute)
	s.group = o.Echo.Group(o.Prefix, s.auth)
	return s, nil
}

// Group is the authenticated route group: every route added to it requires the bearer token.
// Paths are relative to the prefix (g.GET("/bundles", h) serves /admin/api/bundles).
func (s *Server) Group() *echo.Group { return s.group }

// Prefix is the path the admin API is mounted under.
func (s *Server) Prefix() string { return s.o.Prefix }

// Token returns the bearer token (to print it for the operator on first start).
func (s *Server) Token() string { return string(s.token) }

// Logger is the server's logger, for route sets.
func (s *Server) Logger() *slog.Logger { return s.o.Logger }

// auth accepts "Authorization: Bearer <token>" only, compared in constant time.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), s.token) != 1 {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="palisade-admin"`)
			return Error(c, http.StatusUnauthorized, "missing or wrong bearer token")
		}
		return next(c)
	}
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
