package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/proxy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The OP's clients for these tests: two services, one in group sre and one in group dev, and
// one whose tokens are born expired.
const (
	authnSRE       = "svc-sre"
	authnDev       = "svc-dev"
	authnExpired   = "svc-old"
	authnSecret    = "secret"
	authnEchoRules = `rules:
  - id: sre-echo
    priority: 10
    action: allow
    when: {tool: [echo], principal: {claims: {groups: sre}}}
  - id: echo-is-for-sre
    priority: 20
    action: deny
    reason: echo is for group sre
    when: {tool: [echo], principal: {issuer: ["**"]}}
  - id: the-rest
    priority: 100
    action: allow
    when: {}
`
)

// authnEnv is a gateway with an authn: section in front of two Go SDK upstreams that record the
// Authorization header of every request, and the real OP that issues its tokens.
type authnEnv struct {
	op       *testenv.OP
	g        *gateway.Gateway
	base     string // http://127.0.0.1:PORT
	resource string // base + /mcp
	auths    *authSeen
}

type authSeen struct {
	mu    sync.Mutex
	n     int
	auths []string
}

func (s *authSeen) sawToken() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, a := range s.auths {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

// authnUpstream is a stateless Go SDK test server recording each request's Authorization.
func authnUpstream(t *testing.T, seen *authSeen) string {
	t.Helper()
	s := testenv.NewGoServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.mu.Lock()
		seen.n++
		seen.auths = append(seen.auths, r.Header.Get("Authorization")+r.Header.Get("Proxy-Authorization"))
		seen.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func startAuthn(t *testing.T) *authnEnv {
	t.Helper()
	return startAuthnLimits(t, config.Limits{})
}

// startAuthnLimits is startAuthn with the rate limits of lim (limits.per_principal, tools).
func startAuthnLimits(t *testing.T, lim config.Limits) *authnEnv {
	t.Helper()
	op := testenv.StartOP(t, testenv.OPConfig{Clients: []testenv.OPClient{
		{ID: authnSRE, Secret: authnSecret, Claims: map[string]any{"groups": []string{"sre"}}},
		{ID: authnDev, Secret: authnSecret, Claims: map[string]any{"groups": []string{"dev"}}},
		{ID: authnExpired, Secret: authnSecret, Lifetime: "-10m", Claims: map[string]any{"groups": []string{"sre"}}},
	}})
	ns := testenv.StartNATS(t)
	seen := &authSeen{}
	port := testenv.FreePort(t)
	e := &authnEnv{op: op, base: fmt.Sprintf("http://127.0.0.1:%d", port), auths: seen}
	e.resource = e.base + "/mcp"
	cfg := config.Config{
		Listen:    fmt.Sprintf("127.0.0.1:%d", port),
		DataDir:   t.TempDir(),
		Bundle:    testenv.AgentsBundle(t, []byte(authnEchoRules)),
		Upstreams: []config.Upstream{{Name: "go", URL: authnUpstream(t, seen)}, {Name: "go2", URL: authnUpstream(t, seen)}},
		NATS:      config.NATS{URL: ns.ClientURL()},
		Limits:    config.Limits{BodyBytes: 64 << 10, UpstreamTimeout: config.Duration(10 * time.Second), PerPrincipal: lim.PerPrincipal, Tools: lim.Tools},
		Plugins:   config.Plugins{CacheDir: testenv.CacheDir()},
	}
	f, err := gateway.ParseFile(fmt.Appendf(nil, "authn: {issuer: %q, resource: %q, claims: [groups], leeway: 0s}\n", op.Issuer, e.resource))
	if err != nil {
		t.Fatal(err)
	}
	e.g, err = gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: f.Sections})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.g.Close(context.Background()) })
	return e
}

func (e *authnEnv) token(t *testing.T, client string) string {
	t.Helper()
	return e.op.ClientCredentials(t, client, authnSecret, e.resource)
}

// bearer adds the access token to every request of the Go SDK client.
type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAs(t *testing.T, endpoint, tok string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "palisade-authn-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func authnTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// decisionFor waits for the latest decision event of tool (on the gateway's ring).
func decisionFor(t *testing.T, g *gateway.Gateway, tool string, match func(audit.Event) bool) audit.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs := g.Recent().Recent(200)
		for i := len(evs) - 1; i >= 0; i-- {
			if ev := evs[i]; ev.Kind == audit.KindDecision && ev.Tool == tool && (match == nil || match(ev)) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no decision event for %s", tool)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func rawPost(t *testing.T, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestAuthnRefusesBadTokens: with authn:, /mcp and /mcp/<name> take no call without a valid
// access token for the gateway's resource: no token is 401 with the challenge naming the
// protected resource metadata (served without a token); a token for another resource, one for
// no resource, an expired one, one with a broken signature and one with alg none are 401
// invalid_token. Nothing reaches an upstream.
func TestAuthnRefusesBadTokens(t *testing.T) {
	e := startAuthn(t)
	meta := e.base + "/.well-known/oauth-protected-resource/mcp"
	for _, u := range []string{meta, e.base + "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Resource string   `json:"resource"`
			Servers  []string `json:"authorization_servers"`
		}
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 || m.Resource != e.resource || !slices.Equal(m.Servers, []string{e.op.Issuer}) {
			t.Fatalf("GET %s: %d %+v", u, resp.StatusCode, m)
		}
	}

	good := e.token(t, authnSRE)
	parts := strings.Split(good, ".")
	sig := []byte(parts[2])
	sig[len(sig)/2] ^= 1 // still base64url, no longer the signature
	if sig[len(sig)/2] == '-' || sig[len(sig)/2] == '_' {
		sig[len(sig)/2] = 'A'
	}
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	for _, tc := range []struct {
		name, token, want string
	}{
		{"no token", "", `Bearer resource_metadata="` + meta + `"`},
		{"another resource", e.op.ClientCredentials(t, authnSRE, authnSecret, "https://other.example.com/mcp"), "invalid_token"},
		{"no resource", e.op.ClientCredentials(t, authnSRE, authnSecret, ""), "invalid_token"},
		{"expired", e.op.ClientCredentials(t, authnExpired, authnSecret, e.resource), "invalid_token"},
		{"bad signature", parts[0] + "." + parts[1] + "." + string(sig), "invalid_token"},
		{"alg none", none, "invalid_token"},
		{"not a token", "garbage", "invalid_token"},
	} {
		for _, path := range []string{"/mcp", "/mcp/go"} {
			t.Run(tc.name+path, func(t *testing.T) {
				hdr := map[string]string{}
				if tc.token != "" {
					hdr["Authorization"] = "Bearer " + tc.token
				}
				resp, _ := rawPost(t, e.base+path, initializeBody, hdr)
				c := resp.Header.Get("WWW-Authenticate")
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(c, tc.want) || !strings.Contains(c, `resource_metadata="`+meta+`"`) {
					t.Fatalf("status %d, WWW-Authenticate %q; want 401 with %q", resp.StatusCode, c, tc.want)
				}
			})
		}
	}
	e.auths.mu.Lock()
	n := e.auths.n
	e.auths.mu.Unlock()
	if n != 0 {
		t.Fatalf("upstreams saw %d requests from refused clients", n)
	}
	// The right token is served.
	cs := connectAs(t, e.base+"/mcp/go", good)
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil || text(r) != "Echo: hi" {
		t.Fatalf("echo with a good token: %v", err)
	}
}

// TestAuthnPrincipalRules: the token's principal is in every envelope and audit event; a rule on
// principal.claims.groups lets sre call echo and denies dev, and dev's tools/list leaves echo
// out, on /mcp/<name> and on the aggregate /mcp. The upstreams never see a client's token.
func TestAuthnPrincipalRules(t *testing.T) {
	e := startAuthn(t)
	ctx := context.Background()
	sre, dev := e.token(t, authnSRE), e.token(t, authnDev)

	for _, tc := range []struct {
		path, echo string
	}{{"/mcp/go", "echo"}, {"/mcp", "go__echo"}} {
		t.Run(tc.path, func(t *testing.T) {
			a := connectAs(t, e.base+tc.path, sre)
			if names := authnTools(t, a); !slices.Contains(names, tc.echo) || !slices.Contains(names, strings.Replace(tc.echo, "echo", "get-env", 1)) {
				t.Fatalf("sre's tools/list: %v, want %s", names, tc.echo)
			}
			r, err := a.CallTool(ctx, &mcp.CallToolParams{Name: tc.echo, Arguments: map[string]any{"message": "from sre"}})
			if err != nil || text(r) != "Echo: from sre" {
				t.Fatalf("sre calls echo: %v", err)
			}
			ev := decisionFor(t, e.g, "echo", func(ev audit.Event) bool {
				return ev.Action == "allow" && ev.Principal != nil && ev.Principal.Subject == authnSRE
			})
			if p := ev.Principal; p.Issuer != e.op.Issuer || !strings.Contains(fmt.Sprint(p.Claims["groups"]), "sre") || ev.Rule != "sre-echo" {
				t.Fatalf("sre's echo event: %+v principal %+v", ev, p)
			}

			b := connectAs(t, e.base+tc.path, dev)
			names := authnTools(t, b)
			if slices.Contains(names, tc.echo) {
				t.Fatalf("dev's tools/list shows %s: %v", tc.echo, names)
			}
			if !slices.Contains(names, strings.Replace(tc.echo, "echo", "get-env", 1)) {
				t.Fatalf("dev's tools/list lost get-env: %v", names)
			}
			_, err = b.CallTool(ctx, &mcp.CallToolParams{Name: tc.echo, Arguments: map[string]any{"message": "from dev"}})
			if d := denied(t, err); d.Rule != "echo-is-for-sre" {
				t.Fatalf("dev calls echo: %+v", d)
			}
			ev = decisionFor(t, e.g, "echo", func(ev audit.Event) bool { return ev.Action == "deny" })
			if ev.Principal == nil || ev.Principal.Subject != authnDev {
				t.Fatalf("dev's echo event principal: %+v", ev.Principal)
			}
		})
	}
	if got := e.auths.sawToken(); len(got) > 0 {
		t.Fatalf("an upstream saw the client's token: %q", got)
	}
}

// TestAuthnForgedPrincipal: on a stateless (2026-07-28) request, a principal in params._meta
// and in headers is ignored: dev's call is judged as dev (denied, dev in the audit event).
func TestAuthnForgedPrincipal(t *testing.T) {
	e := startAuthn(t)
	dev := e.token(t, authnDev)
	forged := `{"issuer":"` + e.op.Issuer + `","subject":"` + authnSRE + `","claims":{"groups":["sre"]}}`
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"` + pmcp.Stateless + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"forger","version":"1"},"principal":` + forged + `,"palisade/principal":` + forged + `}}}`
	resp, b := rawPost(t, e.base+"/mcp/go", body, map[string]string{
		"Authorization":            "Bearer " + dev,
		pmcp.HeaderProtocolVersion: pmcp.Stateless,
		pmcp.HeaderMethod:          "tools/call",
		pmcp.HeaderName:            "echo",
		"X-Palisade-Principal":     forged,
		"Principal":                forged,
	})
	if resp.StatusCode != 200 || !strings.Contains(b, fmt.Sprint(pmcp.CodeDenied)) || !strings.Contains(b, "echo-is-for-sre") {
		t.Fatalf("forged principal: %d %s", resp.StatusCode, b)
	}
	ev := decisionFor(t, e.g, "echo", nil)
	if ev.Action != "deny" || ev.Principal == nil || ev.Principal.Subject != authnDev || ev.Transport != "http" {
		t.Fatalf("event: %+v principal %+v", ev, ev.Principal)
	}
	// The same stateless call with sre's token is allowed and recorded as sre.
	sre := e.token(t, authnSRE)
	resp, b = rawPost(t, e.base+"/mcp/go", strings.Replace(body, `"id":7`, `"id":8`, 1), map[string]string{
		"Authorization": "Bearer " + sre, pmcp.HeaderProtocolVersion: pmcp.Stateless, pmcp.HeaderMethod: "tools/call", pmcp.HeaderName: "echo"})
	if resp.StatusCode != 200 || !strings.Contains(b, "Echo: x") {
		t.Fatalf("sre's stateless call: %d %s", resp.StatusCode, b)
	}
	if ev := decisionFor(t, e.g, "echo", func(ev audit.Event) bool { return ev.Action == "allow" }); ev.Principal == nil || ev.Principal.Subject != authnSRE {
		t.Fatalf("sre's event principal: %+v", ev.Principal)
	}
	if got := e.auths.sawToken(); len(got) > 0 {
		t.Fatalf("an upstream saw the client's token: %q", got)
	}
}

// TestAuthnHook: with authn:, the hook endpoint over TCP takes an access token too: without one
// the answer is a deny (200, so Claude Code's http hook does not proceed), with one the call is
// judged as the token's principal.
func TestAuthnHook(t *testing.T) {
	e := startAuthn(t)
	in := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/tmp"}`
	resp, b := rawPost(t, e.base+engine.HookPath, in, nil)
	if resp.StatusCode != 200 || resp.Header.Get(proxy.HookErrorHeader) != proxy.HookErrAuth || !strings.Contains(b, `"deny"`) {
		t.Fatalf("hook without a token: %d %q %s", resp.StatusCode, resp.Header.Get(proxy.HookErrorHeader), b)
	}
	resp, b = rawPost(t, e.base+engine.HookPath, in, map[string]string{"Authorization": "Bearer " + e.token(t, authnDev)})
	if resp.StatusCode != 200 || resp.Header.Get(proxy.HookErrorHeader) != "" || !strings.Contains(b, `"allow"`) {
		t.Fatalf("hook with a token: %d %s", resp.StatusCode, b)
	}
	if ev := decisionFor(t, e.g, "Bash", nil); ev.Principal == nil || ev.Principal.Subject != authnDev || ev.Transport != engine.HookTransport {
		t.Fatalf("hook event: %+v principal %+v", ev, ev.Principal)
	}
}

// TestAuthnTypeScriptClient: the official TypeScript SDK client with a bearer token: sre lists
// and calls go__echo through the aggregate /mcp; dev does not see it and is denied; without a
// token the client cannot connect.
func TestAuthnTypeScriptClient(t *testing.T) {
	e := startAuthn(t)
	type step struct {
		tsStep
		Error string `json:"error"`
	}
	run := func(tok string) map[string]step {
		t.Helper()
		cmd := exec.Command("node", filepath.Join("testdata", "ts_authn_client.mjs"), testenv.NodeModules(t), e.resource, tok, "go__echo", `{"message":"from ts"}`)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("ts client: %v\n%s\n%s", err, out, ee.Stderr)
			}
			t.Fatalf("ts client: %v", err)
		}
		steps := map[string]step{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var st step
			if err := json.Unmarshal([]byte(line), &st); err != nil {
				t.Fatalf("ts client line %q: %v", line, err)
			}
			steps[st.Step] = st
		}
		return steps
	}
	s := run(e.token(t, authnSRE))
	if !slices.Contains(s["tools/list"].Tools, "go__echo") || s["go__echo"].Text != "Echo: from ts" {
		t.Fatalf("sre: %+v", s)
	}
	s = run(e.token(t, authnDev))
	if slices.Contains(s["tools/list"].Tools, "go__echo") || !slices.Contains(s["tools/list"].Tools, "go__get-env") || s["go__echo"].Code != pmcp.CodeDenied {
		t.Fatalf("dev: %+v", s)
	}
	if s = run(""); s["connect"].Code != http.StatusUnauthorized {
		t.Fatalf("no token: %+v", s)
	}
	if got := e.auths.sawToken(); len(got) > 0 {
		t.Fatalf("an upstream saw the client's token: %q", got)
	}
}

// TestEngineSocketCallerPrincipal: a hook call over the engine socket presents no token; its
// principal is the caller's OS user as the kernel reports it, {issuer: local, subject: user}.
func TestEngineSocketCallerPrincipal(t *testing.T) {
	dir, err := os.MkdirTemp("", "psock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "engine.sock")
	ns := testenv.StartNATS(t)
	cfg := config.Config{
		Listen:  "127.0.0.1:0",
		Socket:  sock,
		DataDir: t.TempDir(),
		Bundle:  testenv.AgentsBundle(t, []byte(authnEchoRules)),
		NATS:    config.NATS{URL: ns.ClientURL()},
		Plugins: config.Plugins{CacheDir: testenv.CacheDir()},
	}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	in := `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/tmp"}`
	resp, err := c.Post("http://engine"+engine.HookPath, "application/json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if ev := decisionFor(t, g, "Bash", nil); ev.Principal == nil || ev.Principal.Issuer != "local" || ev.Principal.Subject != me.Username {
		t.Fatalf("socket hook event principal %+v, want local %s", ev.Principal, me.Username)
	}
}
