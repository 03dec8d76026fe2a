package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream with `oauth:` gets the gateway's own access token (client credentials from the
// real OP, for the upstream's resource), never the client's: the client signs in to the
// gateway with one token, the upstream sees another, issued to the gateway's client id and
// verifiable against the OP for the upstream's audience.
func TestUpstreamClientCredentials(t *testing.T) {
	op := testenv.StartOP(t, testenv.OPConfig{Clients: []testenv.OPClient{
		{ID: authnSRE, Secret: authnSecret, Claims: map[string]any{"groups": []string{"sre"}}},
		{ID: "gateway-upstream", Secret: "gw-secret"},
	}})
	ns := testenv.StartNATS(t)
	seen := &authSeen{}
	upURL := authnUpstream(t, seen)
	dseen := &authSeen{}
	dgURL := authnUpstream(t, dseen)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("gw-secret\n"), 0o600)
	port := testenv.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg := config.Config{
		Listen: fmt.Sprintf("127.0.0.1:%d", port), DataDir: t.TempDir(),
		Bundle: testenv.AgentsBundle(t, []byte(authnEchoRules)),
		Upstreams: []config.Upstream{{Name: "go", URL: upURL, OAuth: &config.UpstreamOAuth{
			TokenURL: op.Discovery.TokenEndpoint, ClientID: "gateway-upstream", ClientSecretFile: secret, Resource: upURL}},
			{Name: "dg", URL: dgURL, OAuth: &config.UpstreamOAuth{
				TokenURL: op.Discovery.TokenEndpoint, ClientID: "gateway-upstream", ClientSecretFile: secret, Resource: dgURL, TokenExchange: true}}},
		NATS:    config.NATS{URL: ns.ClientURL()},
		Limits:  config.Limits{BodyBytes: 64 << 10, UpstreamTimeout: config.Duration(10 * time.Second)},
		Plugins: config.Plugins{CacheDir: testenv.CacheDir()},
	}
	f, err := gateway.ParseFile(fmt.Appendf(nil, "authn: {issuer: %q, resource: %q, claims: [groups], leeway: 0s}\n", op.Issuer, base+"/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: f.Sections})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })

	clientTok := op.ClientCredentials(t, authnSRE, authnSecret, base+"/mcp")
	cs := connectAs(t, base+"/mcp/go", clientTok)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || text(r) != "Echo: hi" {
		t.Fatalf("echo through the gateway: %v %v", err, r)
	}
	toks := seen.sawToken()
	if len(toks) == 0 {
		t.Fatal("the upstream saw no token")
	}
	v, err := authn.New(context.Background(), authn.Options{Config: authn.Config{Issuer: op.Issuer, Resource: upURL}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, a := range toks {
		tok := strings.TrimPrefix(a, "Bearer ")
		if strings.Contains(a, clientTok) {
			t.Fatal("the client's token reached the upstream")
		}
		p, err := v.Verify(context.Background(), tok)
		if err != nil || p.ClientID != "gateway-upstream" && p.Subject != "gateway-upstream" {
			t.Fatalf("the upstream's token is not the gateway's for its resource: %v %+v", err, p)
		}
	}

	// Token exchange: the upstream sees the caller (subject) with the gateway as the actor.
	ds := connectAs(t, base+"/mcp/dg", clientTok)
	if r, err := ds.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "on behalf"}}); err != nil || text(r) != "Echo: on behalf" {
		t.Fatalf("echo through the delegated upstream: %v %v", err, r)
	}
	dv, err := authn.New(context.Background(), authn.Options{Config: authn.Config{Issuer: op.Issuer, Resource: dgURL, Claims: []string{"act", "groups"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer dv.Close()
	dtoks := dseen.sawToken()
	if len(dtoks) == 0 {
		t.Fatal("the delegated upstream saw no token")
	}
	for _, a := range dtoks {
		if strings.Contains(a, clientTok) {
			t.Fatal("the client's token reached the delegated upstream")
		}
		p, err := dv.Verify(context.Background(), strings.TrimPrefix(a, "Bearer "))
		if err != nil {
			t.Fatalf("the delegated upstream's token: %v", err)
		}
		act, _ := p.Claims["act"].(map[string]any)
		if p.Subject != authnSRE || act["sub"] != "gateway-upstream" {
			t.Fatalf("delegated token: subject %q act %v; want the caller %q with the gateway as actor", p.Subject, p.Claims["act"], authnSRE)
		}
	}
	// Without the authn: section there is no caller token to exchange: refused at start.
	if _, err := gateway.New(context.Background(), gateway.Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "upstreams[1].oauth.token_exchange") {
		t.Fatalf("token exchange without authn: %v", err)
	}

	// A secret file that is missing refuses the gateway at start, naming the upstream.
	cfg.Upstreams[0].OAuth.ClientSecretFile = filepath.Join(t.TempDir(), "missing")
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
	if _, err := gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: f.Sections}); err == nil || !strings.Contains(err.Error(), "upstream go: oauth: client_secret_file") {
		t.Fatalf("missing secret file: %v", err)
	}
}

// With authn:, Palisade's own MCP server on the gateway (/palisade/mcp) sits behind the same
// resource server as /mcp: no token is 401, and a caller's reportAction is recorded under the
// token's principal (the principal a requestPermission grant binds to).
func TestSelfMCPBehindAuthn(t *testing.T) {
	e := startAuthn(t)
	resp, body := rawPost(t, e.base+gateway.SelfMCPPath, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata") {
		t.Fatalf("no token: %s %s", resp.Status, body)
	}
	cs := connectAs(t, e.base+gateway.SelfMCPPath, e.token(t, authnSRE))
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "reportAction", Arguments: map[string]any{"tool": "deploy", "outcome": "success", "details": "self behind authn"}})
	if err != nil || r.IsError {
		t.Fatalf("reportAction: %v %v", err, r)
	}
	ev := decisionFor(t, e.g, "deploy", func(ev audit.Event) bool { return ev.Method == "palisade/reportAction" })
	if ev.Principal == nil || ev.Principal.Subject != authnSRE {
		t.Fatalf("reportAction's event principal = %+v, want %s", ev.Principal, authnSRE)
	}
}
