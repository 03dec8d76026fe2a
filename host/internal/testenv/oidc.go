package testenv

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// OPClient is an OAuth client of the test OpenID provider (host/internal/testop). With a
// Secret it is confidential (client_credentials, the client is the token's subject); without,
// it is public (authorization code with PKCE, for RedirectURIs).
type OPClient struct {
	ID           string         `json:"id"`
	Secret       string         `json:"secret,omitempty"`
	RedirectURIs []string       `json:"redirect_uris,omitempty"`
	Claims       map[string]any `json:"claims,omitempty"`   // copied into its client_credentials tokens
	Lifetime     string         `json:"lifetime,omitempty"` // of its access tokens, "5m"; negative = born expired
	Opaque       bool           `json:"opaque,omitempty"`   // opaque tokens, checked by introspection
}

// OPUser is a user the provider's login page approves at once (by login_hint, else the first).
type OPUser struct {
	ID     string         `json:"id"`
	Claims map[string]any `json:"claims,omitempty"`
}

// OPConfig configures StartOP; the zero value is DefaultOPConfig.
type OPConfig struct {
	Clients []OPClient `json:"clients"`
	Users   []OPUser   `json:"users"`
}

// Default clients of DefaultOPConfig.
const (
	OPService        = "svc" // confidential, groups [sre]
	OPServiceSecret  = "svc-secret"
	OPExpired        = "svc-expired" // confidential, its tokens are born expired
	OPExpiredSecret  = "svc-expired-secret"
	OPOpaque         = "svc-opaque" // confidential, opaque tokens; also the introspecting client
	OPOpaqueSecret   = "svc-opaque-secret"
	OPPublic         = "cli" // public, authorization code + PKCE
	OPPublicRedirect = "http://127.0.0.1/callback"
	OPUserSRE        = "alice" // groups [sre, dev]
	OPUserDeveloper  = "bob"   // groups [dev]
)

// DefaultOPConfig has the clients and users named by the OP* constants.
func DefaultOPConfig() OPConfig {
	return OPConfig{
		Clients: []OPClient{
			{ID: OPService, Secret: OPServiceSecret, Claims: map[string]any{"groups": []string{"sre"}}},
			{ID: OPExpired, Secret: OPExpiredSecret, Lifetime: "-10m"},
			{ID: OPOpaque, Secret: OPOpaqueSecret, Opaque: true, Claims: map[string]any{"groups": []string{"ops"}}},
			{ID: OPPublic, RedirectURIs: []string{OPPublicRedirect}},
		},
		Users: []OPUser{
			{ID: OPUserSRE, Claims: map[string]any{"groups": []string{"sre", "dev"}, "email": "alice@example.com"}},
			{ID: OPUserDeveloper, Claims: map[string]any{"groups": []string{"dev"}}},
		},
	}
}

// OP is a running test OpenID provider.
type OP struct {
	// Issuer is its issuer URL, http://127.0.0.1:PORT.
	Issuer string
	// Discovery is its OpenID configuration.
	Discovery struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		IntrospectionEndpoint string `json:"introspection_endpoint"`
		JWKSURI               string `json:"jwks_uri"`
	}
}

// StartOP builds host/internal/testop into t.TempDir(), runs it as a separate process on a
// random loopback port with cfg (zero = DefaultOPConfig), and waits for its discovery
// document. The process is killed on cleanup.
func StartOP(t testing.TB, cfg OPConfig) *OP {
	t.Helper()
	if cfg.Clients == nil && cfg.Users == nil {
		cfg = DefaultOPConfig()
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "testop")
	build := exec.Command("go", "build", "-o", bin, "./host/internal/testop")
	build.Dir = RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("testenv: build testop: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(dir, "op.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", cfgPath)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start testop: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		for s.Scan() { // keep the pipe drained
		}
	}()
	op := &OP{}
	select {
	case l, ok := <-line:
		if !ok || !strings.HasPrefix(l, "issuer ") {
			t.Fatalf("testenv: testop did not start: %q\n%s", l, stderr.String())
		}
		op.Issuer = strings.TrimPrefix(l, "issuer ")
	case <-time.After(30 * time.Second):
		t.Fatalf("testenv: testop printed no issuer within 30s\n%s", stderr.String())
	}
	Eventually(t, 30*time.Second, "the test OP's discovery document", func() bool {
		resp, err := http.Get(op.Issuer + "/.well-known/openid-configuration")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&op.Discovery) == nil
	})
	return op
}

// ClientCredentials gets an access token for a confidential client with the
// client_credentials grant (golang.org/x/oauth2/clientcredentials), asking for resource (RFC
// 8707; "" = none) and scopes.
func (o *OP) ClientCredentials(t testing.TB, clientID, secret, resource string, scopes ...string) string {
	t.Helper()
	c := clientcredentials.Config{ClientID: clientID, ClientSecret: secret, TokenURL: o.Discovery.TokenEndpoint, Scopes: scopes}
	if resource != "" {
		c.EndpointParams = url.Values{"resource": {resource}}
	}
	tok, err := c.Token(context.Background())
	if err != nil {
		t.Fatalf("testenv: client_credentials for %s: %v", clientID, err)
	}
	return tok.AccessToken
}

// AuthCode gets an access token for user through the public client clientID with the
// authorization code grant and PKCE (S256), as a native MCP client does: it follows the
// authorization endpoint's redirects (the login page approves user at once) up to the
// redirect URI, checks the state, and exchanges the code, asking for resource and scopes.
func (o *OP) AuthCode(t testing.TB, clientID, redirectURI, user, resource string, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	cfg := oauth2.Config{
		ClientID:    clientID,
		RedirectURL: redirectURI,
		Scopes:      scopes,
		Endpoint:    oauth2.Endpoint{AuthURL: o.Discovery.AuthorizationEndpoint, TokenURL: o.Discovery.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams},
	}
	verifier := oauth2.GenerateVerifier()
	sb := make([]byte, 8)
	rand.Read(sb)
	state := hex.EncodeToString(sb)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", user)}
	if resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", resource))
	}
	hc := &http.Client{
		Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), redirectURI) {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := hc.Get(cfg.AuthCodeURL(state, opts...))
	if err != nil {
		t.Fatalf("testenv: authorize: %v", err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil || !strings.HasPrefix(loc.String(), redirectURI) {
		t.Fatalf("testenv: authorize ended at %s (%v), not at %s", resp.Status, loc, redirectURI)
	}
	q := loc.Query()
	if q.Get("state") != state || q.Get("code") == "" {
		t.Fatalf("testenv: authorize redirected to %s: want code and state %s", loc, state)
	}
	xopts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}
	if resource != "" {
		xopts = append(xopts, oauth2.SetAuthURLParam("resource", resource))
	}
	tok, err := cfg.Exchange(ctx, q.Get("code"), xopts...)
	if err != nil {
		t.Fatalf("testenv: exchange code: %v", err)
	}
	return tok.AccessToken
}

// Rotate makes the provider sign with a new key from now on; its JWKS keeps the old ones.
func (o *OP) Rotate(t testing.TB) {
	t.Helper()
	resp, err := http.Post(o.Issuer+"/rotate", "", nil)
	if err != nil {
		t.Fatalf("testenv: rotate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("testenv: rotate: %s", resp.Status)
	}
}

// String names the provider in failure messages.
func (o *OP) String() string { return fmt.Sprintf("test OP at %s", o.Issuer) }
