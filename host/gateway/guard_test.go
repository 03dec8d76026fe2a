package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Host and Origin checks (issue 11 item 4).

// seenHeaders records what an upstream received.
type seenHeaders struct {
	mu      sync.Mutex
	origins []string
	auths   []string
	hosts   []string
}

func (s *seenHeaders) last() (origin, auth, host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.origins); n > 0 {
		return s.origins[n-1], s.auths[n-1], s.hosts[n-1]
	}
	return "", "", ""
}

// recordingUpstream serves the Go SDK test server (with its own DNS rebinding protection on)
// and records the Origin, Authorization and Host of every request.
func recordingUpstream(t *testing.T) (string, *seenHeaders) {
	t.Helper()
	seen := &seenHeaders{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testenv.NewGoServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.mu.Lock()
		seen.origins = append(seen.origins, r.Header.Get("Origin"))
		seen.auths = append(seen.auths, r.Header.Get("Authorization"))
		seen.hosts = append(seen.hosts, r.Host)
		seen.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", seen
}

// guardedGateway runs an in-process gateway with the given http: section.
func guardedGateway(t *testing.T, hc config.HTTP, up string) *gateway.Gateway {
	t.Helper()
	return limitedGateway(t, hc, config.Limits{}, up)
}

// limitedGateway runs an in-process gateway with the given http: and limits: sections.
func limitedGateway(t *testing.T, hc config.HTTP, lim config.Limits, up string) *gateway.Gateway {
	t.Helper()
	ns := testenv.StartNATS(t)
	cfg := config.Config{
		Listen:    "127.0.0.1:0",
		DataDir:   t.TempDir(),
		Bundle:    misbehaveBundle(t, "allow", "open"),
		Upstreams: []config.Upstream{{Name: "go", URL: up}},
		NATS:      config.NATS{URL: ns.ClientURL()},
		Plugins:   config.Plugins{CacheDir: testenv.CacheDir()},
		Admin:     config.Admin{Token: "admin-secret"},
		HTTP:      hc,
		Limits:    lim,
	}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"conformance-dns-rebinding-test","version":"1.0.0"}}}`

// postAs sends body to u with the given Host (if not "") and extra headers; it returns the status.
func postAs(t *testing.T, u, host, body string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestDNSRebindingProtection is the MCP conformance suite's dns-rebinding-protection scenario
// (@modelcontextprotocol/conformance 0.1.16, written here in Go because that release needs
// Node 22's fs.globSync and this machine has Node 20): an initialize POST with Host and Origin
// evil.example.com must get a 4xx, one with Host and Origin localhost:<port> a 2xx. It must
// give the same result through the gateway as directly against the upstream.
func TestDNSRebindingProtection(t *testing.T) {
	up, _ := recordingUpstream(t)
	g := guardedGateway(t, config.HTTP{}, up)
	for name, endpoint := range map[string]string{"direct": up, "gateway": "http://" + g.Addr() + "/mcp"} {
		t.Run(name, func(t *testing.T) {
			u, _ := url.Parse(endpoint)
			const evil = "evil.example.com"
			if st := postAs(t, endpoint, evil, initializeBody, map[string]string{"Origin": "http://" + evil}); st < 400 || st >= 500 {
				t.Errorf("Host and Origin %s: status %d, want 4xx", evil, st)
			}
			local := "localhost:" + u.Port()
			if st := postAs(t, endpoint, local, initializeBody, map[string]string{"Origin": "http://" + local}); st < 200 || st >= 300 {
				t.Errorf("Host and Origin %s: status %d, want 2xx", local, st)
			}
		})
	}
}

func TestGuardHostOriginAndToken(t *testing.T) {
	up, seen := recordingUpstream(t)
	g := guardedGateway(t, config.HTTP{
		AllowedHosts:   []string{"palisade.test", "gw.test:8443"},
		AllowedOrigins: []string{"https://app.test"},
		ClientToken:    "client-secret",
	}, up)
	base := "http://" + g.Addr()
	tok := map[string]string{"Authorization": "Bearer client-secret"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Authorization": "Bearer client-secret"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name, path, host string
		hdr              map[string]string
		want             int
		contains         string // in the answer, when set
	}{
		{"loopback host with token", "/mcp", "", tok, 200, ""},
		{"localhost name", "/mcp", "localhost:1", tok, 200, ""},
		{"ipv6 loopback", "/mcp", "[::1]:8420", tok, 200, ""},
		{"no token", "/mcp", "", nil, 401, ""},
		{"wrong token", "/mcp/go", "", map[string]string{"Authorization": "Bearer nope"}, 401, ""},
		{"listed host any port", "/mcp", "palisade.test:9999", tok, 200, ""},
		{"listed host and port", "/mcp", "gw.test:8443", tok, 200, ""},
		{"listed host wrong port", "/mcp", "gw.test:8444", tok, 403, ""},
		{"rebinding host", "/mcp", "evil.example.com", tok, 403, ""},
		{"rebinding host, hook", "/v1/hook", "evil.example.com", tok, 403, ""},
		{"rebinding host, admin", "/admin/api/bundles", "evil.example.com", map[string]string{"Authorization": "Bearer admin-secret"}, 403, ""},
		{"rebinding host, metrics", "/metrics", "evil.example.com", nil, 403, ""},
		{"listed origin", "/mcp", "", with("Origin", "https://app.test"), 200, ""},
		{"loopback origin", "/mcp", "", with("Origin", "http://127.0.0.1:3000"), 200, ""},
		{"own origin", "/mcp", "palisade.test:9999", with("Origin", "https://palisade.test:9999"), 200, ""},
		{"foreign origin", "/mcp", "", with("Origin", "https://evil.example.com"), 403, ""},
		{"null origin", "/mcp", "", with("Origin", "null"), 403, ""},
		{"cross-site without origin", "/mcp", "", with("Sec-Fetch-Site", "cross-site"), 403, ""},
		{"same-site without origin", "/mcp", "", with("Sec-Fetch-Site", "same-origin"), 200, ""},
		{"foreign origin, hook", "/v1/hook", "", with("Origin", "https://evil.example.com"), 403, ""},
		// A hook answers 200 with a deny decision: a 401 would let Claude Code's http hook proceed.
		{"hook without token", "/v1/hook", "", nil, 200, "missing or wrong bearer token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPost
			body := initializeBody
			if tc.path == "/metrics" || strings.HasPrefix(tc.path, "/admin") {
				method, body = http.MethodGet, ""
			}
			req, _ := http.NewRequest(method, base+tc.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.contains) {
				t.Errorf("%s %s Host %q %v: status %d, want %d %q: %.200s", method, tc.path, tc.host, tc.hdr, resp.StatusCode, tc.want, tc.contains, b)
			}
		})
	}

	// The upstream sees the browser's Origin (to keep its own checks) and a Host it accepts,
	// never the gateway's client token.
	if st := postAs(t, base+"/mcp", "", initializeBody, with("Origin", "https://app.test")); st != 200 {
		t.Fatalf("initialize: %d", st)
	}
	origin, auth, host := seen.last()
	u, _ := url.Parse(up)
	if origin != "https://app.test" || auth != "" || host != u.Host {
		t.Errorf("upstream saw Origin %q, Authorization %q, Host %q; want https://app.test, none, %s", origin, auth, host, u.Host)
	}

	// /v1/hook: the client token, and JSON only.
	hook := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	for ct, refused := range map[string]bool{"text/plain": true, "application/x-www-form-urlencoded": true, "application/json": false} {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/hook", strings.NewReader(hook))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer client-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.Contains(string(b), "Content-Type must be application/json"); resp.StatusCode != 200 || got != refused {
			t.Errorf("hook as %s: status %d, refused %v, want %v: %s", ct, resp.StatusCode, got, refused, b)
		}
	}

	// /healthz answers whatever the Host: platform probes use the pod's address.
	req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
	req.Host = "10.1.2.3:8420"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz with a pod address: %d", resp.StatusCode)
	}
}

// TestLongStreamOutlivesReadTimeout: net/http lifts the read deadline once the body is read, so
// an SSE answer that lasts longer than http.read_timeout is not cut (nor may a write timeout).
func TestLongStreamOutlivesReadTimeout(t *testing.T) {
	up := testenv.StartGoServer(t, false)
	g := guardedGateway(t, config.HTTP{ReadTimeout: config.Duration(300 * time.Millisecond)}, up)
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 60}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("a 1.2 s stream behind a 300 ms read timeout: %v", err)
	}
	if got := text(res); got != "done after 60 steps" {
		t.Fatalf("result %q", got)
	}
}

// TestNonLoopbackListenNeedsClientToken: the gateway refuses to start on every interface with
// nothing to authenticate its clients (no authn: section, no http.client_token), before
// anything starts; either one lets it through validation.
func TestNonLoopbackListenNeedsClientToken(t *testing.T) {
	cfg := config.Config{Listen: "0.0.0.0:0", DataDir: t.TempDir(), Bundle: "x", Upstreams: []config.Upstream{{Name: "a", URL: "http://127.0.0.1:1/mcp"}}}
	_, err := gateway.New(context.Background(), gateway.Options{Config: cfg})
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Path != "authn" || !strings.Contains(err.Error(), "http.client_token") {
		t.Fatalf("New on 0.0.0.0 without a client token: %v, want an authn field error naming http.client_token", err)
	}
	f := gateway.File{Config: cfg}
	f.Config.HTTP.ClientToken = "t"
	if err := f.Validate(); err != nil {
		t.Errorf("with http.client_token: %v", err)
	}
	f.Config.HTTP.ClientToken = ""
	f.Authn = &authn.Config{Issuer: "https://login.example.com", Resource: "https://gw.example.com/mcp"}
	if err := f.Validate(); err != nil {
		t.Errorf("with authn: %v", err)
	}
}

// TestConnectionLimit: past http.max_connections a new connection is answered at once and
// closed, never left waiting: /mcp with 503 and Retry-After, /healthz with 200. Once a held
// connection closes, /mcp is served again.
func TestConnectionLimit(t *testing.T) {
	up := testenv.StartGoServer(t, false)
	g := guardedGateway(t, config.HTTP{MaxConnections: 4, ReadHeaderTimeout: config.Duration(2 * time.Minute)}, up)
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", g.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// The four held connections are accepted before the probes below: the gateway's answer on
	// one of them proves it (an idle connection gets none, so send a request on the last).
	fmt.Fprintf(held[3], "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(held[3])
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz on a held connection: %v %v", resp, err)
	}
	client := func() *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	}
	resp, err := client().Post("http://"+g.Addr()+"/mcp", "application/json", strings.NewReader(toolsList))
	if err != nil {
		t.Fatalf("a fifth connection: %v, want a 503", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("/mcp past the limit: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for i := range 5 {
		resp, err := client().Get("http://" + g.Addr() + "/healthz")
		if err != nil {
			t.Fatalf("/healthz %d past the limit: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz %d past the limit: %d", i, resp.StatusCode)
		}
	}
	for _, c := range held {
		c.Close()
	}
	// Slots free as the gateway sees the closes: poll until /mcp is served.
	servedAgain(t, client(), "http://"+g.Addr()+"/mcp", initializeBody)
}

// TestSilentUpstreamStreamEnds: an upstream that starts an SSE answer and then sends nothing is
// cut after limits.upstream_idle_timeout, and the client gets an answer.
func TestSilentUpstreamStreamEnds(t *testing.T) {
	released := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done(): // the gateway hung up
			close(released)
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(silent.Close)
	g := limitedGateway(t, config.HTTP{}, config.Limits{UpstreamIdleTimeout: config.Duration(500 * time.Millisecond)}, silent.URL+"/mcp")
	req, _ := http.NewRequest(http.MethodPost, "http://"+g.Addr()+"/mcp", strings.NewReader(toolsList))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("the client's stream did not end cleanly: %v", err)
	}
	resp.Body.Close()
	select {
	case <-released:
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway kept the silent upstream stream open")
	}
}

// TestStreamBudget: an upstream event that fits limits.response_bytes but not what is left of
// limits.stream_buffer_bytes ends its stream; with room in the budget the same event passes.
func TestStreamBudget(t *testing.T) {
	big := strings.Repeat("y", 2<<20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\ndata: "+big+"\n\n")
	}))
	t.Cleanup(up.Close)
	for _, tc := range []struct {
		name   string
		budget int64
		passes bool
	}{{"over budget", 1 << 20, false}, {"within budget", 8 << 20, true}} {
		t.Run(tc.name, func(t *testing.T) {
			g := limitedGateway(t, config.HTTP{}, config.Limits{ResponseBytes: 8 << 20, StreamBufferBytes: tc.budget}, up.URL+"/mcp")
			req, _ := http.NewRequest(http.MethodPost, "http://"+g.Addr()+"/mcp", strings.NewReader(toolsList))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := strings.Contains(string(b), big); got != tc.passes {
				t.Fatalf("budget %d: event relayed = %v, want %v (%d bytes)", tc.budget, got, tc.passes, len(b))
			}
		})
	}
}

// servedAgain polls until a POST of body to url is answered 200: connection slots free as the
// gateway sees held connections close.
func servedAgain(t *testing.T, c *http.Client, url, body string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "a POST served after the held connections closed", func() bool {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
