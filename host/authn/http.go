package authn

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// WellKnownPath is where RFC 9728 protected resource metadata lives.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// HeaderWWWAuthenticate is the challenge header of a 401 or 403.
const HeaderWWWAuthenticate = "WWW-Authenticate"

// ResourceMetadata is the RFC 9728 protected resource metadata the gateway serves.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata returns the protected resource metadata: the resource, its issuer as the one
// authorization server, the required scopes, and bearer tokens in the header only.
func (v *Verifier) Metadata() ResourceMetadata {
	return ResourceMetadata{
		Resource:               v.c.Resource,
		AuthorizationServers:   []string{v.c.Issuer},
		ScopesSupported:        v.c.Scopes,
		BearerMethodsSupported: []string{"header"},
	}
}

// MetadataPath is the path the metadata is served at for this resource (RFC 9728 section 3.1:
// the well-known prefix, then the resource's path): /.well-known/oauth-protected-resource/mcp
// for https://gw.example.com/mcp.
func (v *Verifier) MetadataPath() string {
	u, _ := url.Parse(v.c.Resource) // Validate parsed it
	return WellKnownPath + strings.TrimSuffix(u.EscapedPath(), "/")
}

// MetadataURL is the absolute URL of the metadata, as the challenge's resource_metadata
// gives it.
func (v *Verifier) MetadataURL() string {
	u, _ := url.Parse(v.c.Resource)
	return u.Scheme + "://" + u.Host + v.MetadataPath()
}

// MetadataHandler serves the metadata (GET, HEAD) at WellKnownPath and at MetadataPath; any
// other path below WellKnownPath is 404. Mount it at WellKnownPath and below, outside the
// authenticated routes: clients read it before they have a token.
func (v *Verifier) MetadataHandler() http.Handler {
	body, _ := json.Marshal(v.Metadata())
	own := v.MetadataPath()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimSuffix(r.URL.EscapedPath(), "/")
		if p != WellKnownPath && p != own {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("Access-Control-Allow-Origin", "*") // browser-based MCP clients read it
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(body)
		}
	})
}

// BearerToken returns the token of an `Authorization: Bearer` header, "" when there is none.
// Tokens in the query string or the body are not read (the MCP specification forbids them).
func BearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Authenticate verifies the request's bearer token: ErrNoToken without one, else as Verify.
func (v *Verifier) Authenticate(r *http.Request) (*Principal, error) {
	tok := BearerToken(r)
	if tok == "" {
		return nil, ErrNoToken
	}
	return v.Verify(r.Context(), tok)
}

// Challenge answers a request Authenticate refused: 401 with `WWW-Authenticate: Bearer
// resource_metadata="..."` for ErrNoToken, 401 error="invalid_token" for an invalid token,
// 403 error="insufficient_scope" with the required scopes for a *ScopeError. Any other error
// (the introspection endpoint or the key set unreachable) is 503 with no challenge: the token
// may be good. The body is a small OAuth error JSON; the cause is logged at Debug, never sent.
func (v *Verifier) Challenge(w http.ResponseWriter, r *http.Request, err error) {
	var (
		status = http.StatusUnauthorized
		code   string
		desc   string
		params []string
	)
	switch {
	case errors.Is(err, ErrNoToken):
		params = v.scopeParam()
	case errors.Is(err, ErrInsufficientScope):
		status, code, desc = http.StatusForbidden, "insufficient_scope", "the access token lacks a required scope"
		params = v.scopeParam()
	case errors.Is(err, ErrInvalidToken):
		code, desc = "invalid_token", "the access token is invalid, expired or not for this resource"
	default:
		v.log.Warn("authn: cannot verify token", "err", err)
		http.Error(w, "token verification unavailable", http.StatusServiceUnavailable)
		return
	}
	v.log.Debug("authn: refused", "path", r.URL.Path, "status", status, "err", err)
	c := "Bearer "
	if code != "" {
		c += `error="` + code + `", error_description="` + desc + `", `
	}
	for _, p := range params {
		c += p + ", "
	}
	c += `resource_metadata="` + v.MetadataURL() + `"`
	w.Header().Set(HeaderWWWAuthenticate, c)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if code != "" {
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
}

func (v *Verifier) scopeParam() []string {
	if len(v.c.Scopes) == 0 {
		return nil
	}
	return []string{`scope="` + strings.Join(v.c.Scopes, " ") + `"`}
}

// Wrap is net/http middleware: it verifies the bearer token, answers a refusal with
// Challenge, and otherwise calls next with the principal in the request context
// (FromContext). It does not strip the Authorization header: the transport calls StripToken
// on what it sends upstream.
func (v *Verifier) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := v.Authenticate(r)
		if err != nil {
			v.Challenge(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithToken(WithPrincipal(r.Context(), p), BearerToken(r))))
	})
}

// Echo is Wrap as echo middleware: on success c.Request().Context() carries the principal.
func (v *Verifier) Echo() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			p, err := v.Authenticate(r)
			if err != nil {
				v.Challenge(c.Response(), r, err)
				return nil
			}
			c.SetRequest(r.WithContext(WithToken(WithPrincipal(r.Context(), p), BearerToken(r))))
			return next(c)
		}
	}
}

// StripToken removes the client's credentials from a request the gateway sends upstream:
// the Authorization header (and any Proxy-Authorization). A token the client got for the
// gateway must never reach an MCP server (MCP authorization, "Token Passthrough").
//
// # Notes
//
// The transport must call it on every forwarded request, on the outgoing *http.Request, after
// copying the client's headers and before adding the upstream's own credentials.
func StripToken(out *http.Request) {
	out.Header.Del("Authorization")
	out.Header.Del("Proxy-Authorization")
}
