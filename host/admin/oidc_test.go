package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

type events struct {
	mu  sync.Mutex
	evs []audit.Event
}

func (r *events) Record(_ context.Context, ev audit.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *events) approvals() []audit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []audit.Event
	for _, ev := range r.evs {
		if ev.Approval != nil {
			out = append(out, ev)
		}
	}
	return out
}

type oidcEnv struct {
	base string
	op   *testenv.OP
	m    *approval.Manager
	rec  *events
}

// startOIDC runs the real test OpenID provider and an admin API whose dashboard signs in
// with it: alice (groups sre) is an approver, bob (groups dev) a viewer.
func startOIDC(t *testing.T) *oidcEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	redirect := base + DefaultPrefix + "/oidc/callback"
	op := testenv.StartOP(t, testenv.OPConfig{
		Clients: []testenv.OPClient{{ID: "dashboard", RedirectURIs: []string{redirect}}},
		Users: []testenv.OPUser{
			{ID: "alice", Claims: map[string]any{"groups": []string{"sre"}, "email": "alice@example.com"}},
			{ID: "bob", Claims: map[string]any{"groups": []string{"dev"}}},
		},
	})
	rec := &events{}
	m, err := approval.New(context.Background(), approval.Options{Recorder: rec, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e := echo.New()
	s, err := New(Options{Echo: e, Token: "break-glass", OIDC: &config.AdminOIDC{
		Issuer: op.Issuer, Name: "TestOP", ClientID: "dashboard", RedirectURL: redirect,
		Roles: config.RoleClaim{Claim: "groups", Viewer: []string{"dev"}, Approver: []string{"sre"}, Admin: []string{"platform"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	RegisterApprovals(s.Group(), m)
	srv := &http.Server{Handler: e}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &oidcEnv{base: base, op: op, m: m, rec: rec}
}

// signIn runs the authorization code flow with PKCE as a browser would (following redirects
// with a cookie jar) for user, and returns the browser.
func (e *oidcEnv) signIn(t *testing.T, user string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := c.Get(e.base + DefaultPrefix + "/oidc/login?login_hint=" + user)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Request.URL.Path != UIPath+"/" {
		t.Fatalf("sign-in of %s ended at %s (%d): %s", user, resp.Request.URL, resp.StatusCode, body)
	}
	u, _ := url.Parse(e.base + DefaultPrefix)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == SessionCookie {
			return c
		}
	}
	t.Fatalf("no session cookie after %s's sign-in", user)
	return nil
}

func do(t *testing.T, c *http.Client, method, url, bearer string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// hold holds a call and returns its id and the channel its resolution arrives on.
func (e *oidcEnv) hold(t *testing.T) (string, <-chan engine.Resolution) {
	t.Helper()
	id := audit.NewID()
	out := make(chan engine.Resolution, 1)
	go func() {
		env := &abi.Envelope{Method: "tools/call", Server: "fs", Tool: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)}
		res, err := e.m.Hold(context.Background(), engine.Held{AuditID: id, Envelope: env})
		if err != nil {
			t.Error(err)
		}
		out <- res
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := e.m.Get(id); ok {
			return id, out
		}
		if time.Now().After(deadline) {
			t.Fatal("call not held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDashboardOIDCApprover: alice signs in through the real OP (code + PKCE, state and nonce),
// is an approver by her groups claim, approves a held call with her session cookie, and the
// release and its audit event name her verified identity, not the `by` she typed.
func TestDashboardOIDCApprover(t *testing.T) {
	e := startOIDC(t)
	alice := e.signIn(t, "alice")
	if status, body := do(t, alice, "GET", e.base+DefaultPrefix+"/whoami", ""); status != 200 || !strings.Contains(body, `"role":"approver"`) || !strings.Contains(body, "alice@example.com") {
		t.Fatalf("whoami: %d %s", status, body)
	}
	id, res := e.hold(t)
	req, _ := http.NewRequest("POST", e.base+DefaultPrefix+"/approvals/"+id+"/approve", strings.NewReader(`{"by":"mallory"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := alice.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	r := <-res
	want := fmt.Sprintf("alice@example.com <%s#alice>", e.op.Issuer)
	if r.Action != abi.ActionAllow || r.DecidedBy != want {
		t.Fatalf("resolution %+v, want allow by %q", r, want)
	}
	evs := e.rec.approvals()
	if len(evs) != 1 || evs[0].Approval.DecidedBy != want || evs[0].Approval.ClaimedBy != "" {
		t.Fatalf("audit: %+v", evs)
	}
	// Her session cannot do an admin's work.
	if status, _ := do(t, alice, "POST", e.base+DefaultPrefix+"/bundles/rollback", ""); status != http.StatusForbidden {
		t.Fatalf("approver on an admin route: %d, want 403", status)
	}
	// Signing out ends the session.
	if status, _ := do(t, alice, "POST", e.base+DefaultPrefix+"/logout", ""); status != http.StatusNoContent {
		t.Fatalf("logout: %d", status)
	}
	if status, _ := do(t, alice, "GET", e.base+DefaultPrefix+"/approvals", ""); status != http.StatusUnauthorized {
		t.Fatalf("after logout: %d, want 401", status)
	}
}

// TestDashboardOIDCViewer: bob is a viewer: he reads the queue and may not decide (403); the
// break-glass admin token still decides, recorded as admin-token.
func TestDashboardOIDCViewer(t *testing.T) {
	e := startOIDC(t)
	bob := e.signIn(t, "bob")
	id, res := e.hold(t)
	if status, body := do(t, bob, "GET", e.base+DefaultPrefix+"/approvals", ""); status != 200 || !strings.Contains(body, id) {
		t.Fatalf("viewer reads the queue: %d %s", status, body)
	}
	if status, body := do(t, bob, "POST", e.base+DefaultPrefix+"/approvals/"+id+"/approve", ""); status != http.StatusForbidden || !strings.Contains(body, "needs approver") {
		t.Fatalf("viewer approves: %d %s, want 403", status, body)
	}
	if status, body := do(t, http.DefaultClient, "POST", e.base+DefaultPrefix+"/approvals/"+id+"/deny", "break-glass"); status != 200 {
		t.Fatalf("break-glass deny: %d %s", status, body)
	}
	if r := <-res; r.Action != abi.ActionDeny || r.DecidedBy != BreakGlassName {
		t.Fatalf("resolution %+v", r)
	}
}

// TestDashboardOIDCState: a callback whose state is not this browser's, or reused, is refused.
func TestDashboardOIDCState(t *testing.T) {
	e := startOIDC(t)
	c := &http.Client{Timeout: 5 * time.Second}
	if status, _ := do(t, c, "GET", e.base+DefaultPrefix+"/oidc/callback?state=made-up&code=x", ""); status != http.StatusBadRequest {
		t.Fatalf("made-up state: %d, want 400", status)
	}
	if status, body := do(t, c, "GET", e.base+DefaultPrefix+"/oidc", ""); status != 200 || !strings.Contains(body, `"name":"TestOP"`) {
		t.Fatalf("oidc info: %d %s", status, body)
	}
}
