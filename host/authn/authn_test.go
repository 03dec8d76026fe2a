package authn_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/labstack/echo/v4"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// resource is the gateway's MCP endpoint as configured; the test server's own address does not
// matter, since the resource is only compared and advertised.
const resource = "https://gw.example.test/mcp"

const metadataURL = "https://gw.example.test/.well-known/oauth-protected-resource/mcp"

// gateway starts a verifier for op and an HTTP server that guards /mcp with it (answering
// the principal as JSON) and serves the metadata.
func gateway(t *testing.T, op *testenv.OP, c authn.Config) (*authn.Verifier, *httptest.Server) {
	t.Helper()
	return gatewayWith(t, op, authn.Options{Config: c})
}

// gatewayWith is gateway with Options (Config's issuer and resource are filled in).
func gatewayWith(t *testing.T, op *testenv.OP, o authn.Options) (*authn.Verifier, *httptest.Server) {
	t.Helper()
	o.Config.Issuer, o.Config.Resource = op.Issuer, resource
	if o.Config.Claims == nil {
		o.Config.Claims = []string{"groups"}
	}
	v, err := authn.New(context.Background(), o)
	if err != nil {
		t.Fatalf("authn.New: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	mux := http.NewServeMux()
	mux.Handle("/mcp", v.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(authn.FromContext(r.Context()))
	})))
	mux.Handle(authn.WellKnownPath+"/", v.MetadataHandler())
	mux.Handle(authn.WellKnownPath, v.MetadataHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return v, srv
}

// call sends a POST to /mcp with the token ("" = none) and returns the answer.
func call(t *testing.T, srv *httptest.Server, token string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func TestNoTokenIsChallenged(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	_, srv := gateway(t, op, authn.Config{Scopes: []string{"mcp:tools"}})
	status, h, _ := call(t, srv, "")
	if status != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", status)
	}
	want := `Bearer scope="mcp:tools", resource_metadata="` + metadataURL + `"`
	if got := h.Get("WWW-Authenticate"); got != want {
		t.Errorf("WWW-Authenticate = %q, want %q", got, want)
	}
	// A token in the query string is not read (MCP authorization forbids it).
	resp, err := http.Post(srv.URL+"/mcp?access_token="+op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools"), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(resp.Header.Get("WWW-Authenticate"), "error=") {
		t.Errorf("query-string token: %s %q, want a plain 401 challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestRefusedTokens(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	v, srv := gateway(t, op, authn.Config{})
	good := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	if status, _, body := call(t, srv, good); status != http.StatusOK {
		t.Fatalf("the good token was refused: %d %s", status, body)
	}
	for _, tc := range []struct{ name, token string }{
		{"token for another resource", op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, "https://other.example.test/mcp", "mcp:tools")},
		{"token with no resource (aud is the client)", op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, "", "mcp:tools")},
		{"expired", op.ClientCredentials(t, testenv.OPExpired, testenv.OPExpiredSecret, resource, "mcp:tools")},
		{"bad signature", tamper(good)},
		{"signed by another key under the issuer's kid", resign(t, good, "RS256")},
		{"alg none", unsigned(t, good)},
		{"not a token", "not-a-token"},
		{"opaque without introspection", op.ClientCredentials(t, testenv.OPOpaque, testenv.OPOpaqueSecret, resource, "mcp:tools")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.token)
			if !errors.Is(err, authn.ErrInvalidToken) {
				t.Fatalf("Verify: %v, want ErrInvalidToken", err)
			}
			t.Log(err) // the cause, for -v
			status, h, body := call(t, srv, tc.token)
			if status != http.StatusUnauthorized {
				t.Fatalf("status = %d (%s), want 401", status, body)
			}
			c := h.Get("WWW-Authenticate")
			if !strings.HasPrefix(c, `Bearer error="invalid_token"`) || !strings.Contains(c, `resource_metadata="`+metadataURL+`"`) {
				t.Errorf("WWW-Authenticate = %q, want invalid_token with resource_metadata", c)
			}
		})
	}
}

func TestInsufficientScope(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	v, srv := gateway(t, op, authn.Config{Scopes: []string{"mcp:tools", "mcp:deploy"}})
	tok := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	status, h, _ := call(t, srv, tok)
	if status != http.StatusForbidden {
		t.Fatalf("status = %d, want 403", status)
	}
	c := h.Get("WWW-Authenticate")
	if !strings.HasPrefix(c, `Bearer error="insufficient_scope"`) || !strings.Contains(c, `scope="mcp:tools mcp:deploy"`) {
		t.Errorf("WWW-Authenticate = %q, want insufficient_scope naming the scopes", c)
	}
	_, err := v.Verify(context.Background(), tok)
	var se *authn.ScopeError
	if !errors.As(err, &se) || !slices.Equal(se.Missing, []string{"mcp:deploy"}) || se.Principal.Subject != testenv.OPService {
		t.Errorf("Verify err = %v, want a ScopeError missing mcp:deploy for %s", err, testenv.OPService)
	}
	both := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools", "mcp:deploy")
	if status, _, body := call(t, srv, both); status != http.StatusOK {
		t.Errorf("token with both scopes: %d %s", status, body)
	}
}

func TestPrincipalFromToken(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	_, srv := gateway(t, op, authn.Config{Scopes: []string{"mcp:tools"}})
	for _, tc := range []struct {
		name  string
		token string
		want  authn.Principal
	}{
		{"client credentials", op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools"),
			authn.Principal{Issuer: op.Issuer, Subject: testenv.OPService, ClientID: testenv.OPService, Scopes: []string{"mcp:tools"},
				Claims: map[string]any{"groups": []any{"sre"}}}},
		{"authorization code with PKCE", op.AuthCode(t, testenv.OPPublic, testenv.OPPublicRedirect, testenv.OPUserSRE, resource, "mcp:tools"),
			authn.Principal{Issuer: op.Issuer, Subject: testenv.OPUserSRE, ClientID: testenv.OPPublic, Scopes: []string{"mcp:tools"},
				Claims: map[string]any{"groups": []any{"sre", "dev"}}}}, // email is not a configured claim
		{"another user", op.AuthCode(t, testenv.OPPublic, testenv.OPPublicRedirect, testenv.OPUserDeveloper, resource, "mcp:tools"),
			authn.Principal{Issuer: op.Issuer, Subject: testenv.OPUserDeveloper, ClientID: testenv.OPPublic, Scopes: []string{"mcp:tools"},
				Claims: map[string]any{"groups": []any{"dev"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := call(t, srv, tc.token)
			if status != http.StatusOK {
				t.Fatalf("status = %d (%s), want 200", status, body)
			}
			var got authn.Principal
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(tc.want)
			if string(gb) != string(wb) {
				t.Errorf("principal = %s, want %s", gb, wb)
			}
		})
	}
}

func TestIntrospection(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	// The introspection URL is discovered from the issuer's metadata.
	_, srv := gateway(t, op, authn.Config{Scopes: []string{"mcp:tools"},
		Introspection: &authn.Introspection{ClientID: testenv.OPOpaque, ClientSecret: testenv.OPOpaqueSecret}})
	tok := op.ClientCredentials(t, testenv.OPOpaque, testenv.OPOpaqueSecret, resource, "mcp:tools")
	if strings.Count(tok, ".") == 2 {
		t.Fatalf("the opaque client got a JWT: %s", tok)
	}
	status, _, body := call(t, srv, tok)
	if status != http.StatusOK {
		t.Fatalf("opaque token: %d %s", status, body)
	}
	var p authn.Principal
	json.Unmarshal(body, &p)
	if p.Subject != testenv.OPOpaque || p.ClientID != testenv.OPOpaque || !slices.Equal(p.Scopes, []string{"mcp:tools"}) || p.Claims["groups"] == nil {
		t.Errorf("principal = %+v, want %s with mcp:tools and groups", p, testenv.OPOpaque)
	}
	for _, tc := range []struct{ name, token string }{
		{"opaque token for another resource", op.ClientCredentials(t, testenv.OPOpaque, testenv.OPOpaqueSecret, "https://other.example.test/mcp", "mcp:tools")},
		{"unknown opaque token", "bm90LWEtdG9rZW4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, h, body := call(t, srv, tc.token); status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
				t.Errorf("%d %q %s, want 401 invalid_token", status, h.Get("WWW-Authenticate"), body)
			}
		})
	}
	// JWTs are still verified locally beside introspection.
	jwtTok := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	if status, _, body := call(t, srv, jwtTok); status != http.StatusOK {
		t.Errorf("JWT beside introspection: %d %s", status, body)
	}
}

func TestMetadata(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	v, srv := gateway(t, op, authn.Config{Scopes: []string{"mcp:tools", "mcp:deploy"}})
	if v.MetadataURL() != metadataURL || v.MetadataPath() != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataURL = %s, MetadataPath = %s", v.MetadataURL(), v.MetadataPath())
	}
	want := `{"resource":"` + resource + `","authorization_servers":["` + op.Issuer + `"],"scopes_supported":["mcp:tools","mcp:deploy"],"bearer_methods_supported":["header"]}`
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/.well-known/oauth-protected-resource/mcp", http.StatusOK},
		{"/.well-known/oauth-protected-resource", http.StatusOK},
		{"/.well-known/oauth-protected-resource/other", http.StatusNotFound},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status == http.StatusOK && (string(b) != want || resp.Header.Get("Content-Type") != "application/json") {
				t.Errorf("body = %s (%s), want %s", b, resp.Header.Get("Content-Type"), want)
			}
		})
	}
	resp, err := http.Post(srv.URL+"/.well-known/oauth-protected-resource/mcp", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST metadata: %d, want 405", resp.StatusCode)
	}
}

func TestEchoMiddleware(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	v, err := authn.New(context.Background(), authn.Options{Config: authn.Config{Issuer: op.Issuer, Resource: resource, Scopes: []string{"mcp:tools"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	e := echo.New()
	e.POST("/mcp", func(c echo.Context) error {
		return c.String(http.StatusOK, authn.FromContext(c.Request().Context()).Subject)
	}, v.Echo())
	srv := httptest.NewServer(e)
	defer srv.Close()
	if status, h, _ := call(t, srv, ""); status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), metadataURL) {
		t.Errorf("no token: %d %q", status, h.Get("WWW-Authenticate"))
	}
	if status, _, body := call(t, srv, op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")); status != http.StatusOK || string(body) != testenv.OPService {
		t.Errorf("good token: %d %s", status, body)
	}
	if status, h, _ := call(t, srv, op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "other")); status != http.StatusForbidden || !strings.Contains(h.Get("WWW-Authenticate"), "insufficient_scope") {
		t.Errorf("missing scope: %d %q", status, h.Get("WWW-Authenticate"))
	}
}

func TestNewRefusesAWrongIssuer(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	_, err := authn.New(context.Background(), authn.Options{Config: authn.Config{Issuer: op.Issuer + "/realms/other", Resource: resource}})
	if err == nil {
		t.Fatal("New accepted an issuer with no metadata")
	}
}

// tamper changes the signature's first character.
func tamper(tok string) string {
	i := strings.LastIndexByte(tok, '.') + 1
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

// resign signs tok's claims again with a fresh key under the same kid, so the key lookup
// succeeds and only the signature is wrong.
func resign(t *testing.T, tok, alg string) string {
	t.Helper()
	msg, err := jws.ParseString(tok)
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := msg.Signatures()[0].ProtectedHeaders().KeyID()
	claims, err := jwt.ParseInsecure([]byte(tok))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := rsa.GenerateKey(rand.Reader, 2048)
	k, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	k.Set(jwk.KeyIDKey, kid)
	a, _ := jwa.LookupSignatureAlgorithm(alg)
	b, err := jwt.Sign(claims, jwt.WithKey(a, k))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unsigned re-encodes tok's claims with alg none.
func unsigned(t *testing.T, tok string) string {
	t.Helper()
	claims, err := jwt.ParseInsecure([]byte(tok))
	if err != nil {
		t.Fatal(err)
	}
	b, err := jwt.Sign(claims, jwt.WithInsecureNoSignature())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestKeyRotation(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	// An hour between refetches, so the test does not depend on how fast it runs.
	_, srv := gatewayWith(t, op, authn.Options{JWKSRefresh: time.Hour})
	before := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	if status, _, body := call(t, srv, before); status != http.StatusOK {
		t.Fatalf("before rotation: %d %s", status, body)
	}
	op.Rotate(t)
	after := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	// The new kid is not in the cached set: the verifier refetches it once.
	if status, _, body := call(t, srv, after); status != http.StatusOK {
		t.Fatalf("token signed with the new key: %d %s", status, body)
	}
	if status, _, body := call(t, srv, before); status != http.StatusOK {
		t.Errorf("token signed with the old, still published key: %d %s", status, body)
	}
	// Another unknown kid within JWKSRefresh does not refetch: refused, and the IdP is spared.
	op.Rotate(t)
	again := op.ClientCredentials(t, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	if status, _, _ := call(t, srv, again); status != http.StatusUnauthorized {
		t.Errorf("a second new kid within the refresh interval: %d, want 401 (no refetch yet)", status)
	}
}

func TestIntrospectionUnreachable(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/introspect"
	dead.Close()
	_, srv := gateway(t, op, authn.Config{Introspection: &authn.Introspection{URL: deadURL, ClientID: "gw", ClientSecret: "s"}})
	tok := op.ClientCredentials(t, testenv.OPOpaque, testenv.OPOpaqueSecret, resource, "mcp:tools")
	status, h, _ := call(t, srv, tok)
	if status != http.StatusServiceUnavailable || h.Get("WWW-Authenticate") != "" {
		t.Errorf("introspection down: %d %q, want 503 and no challenge (the token may be good)", status, h.Get("WWW-Authenticate"))
	}
}
