package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/internal/testbuild"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
)

const approvalsToken = "approvals-test-token"

// approvalsGateway runs a gateway serving tests/ui/bundle in front of the Go SDK test server,
// with approvals shared over the NATS server at natsURL.
func approvalsGateway(t *testing.T, name, natsURL, bundleDir, upstream, extra string) *gateway.Gateway {
	t.Helper()
	y := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
bundle: %s
upstreams: [{name: up, url: %q}]
nats: {url: %q, approver_creds: %q}
admin: {token: %s}
approvals:
  timeout: 1m
%s`, t.TempDir(), bundleDir, upstream, natsURL, approverSeed(t, natsURL), approvalsToken, extra)
	cfg, err := gateway.ParseFile([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins.CacheDir = testenv.CacheDir()
	g, err := gateway.New(t.Context(), gateway.Options{Config: cfg.Config, Sections: cfg.Sections, Instance: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

var (
	approverSeedsMu sync.Mutex
	approverSeeds   = map[string]string{}
)

// approverSeed is the approver key the gateways on one NATS server share (nats.approver_creds
// takes a creds file or a bare nkey seed file), so that a decision made on one gateway's admin
// API is accepted by the gateway holding the call.
//
// The key lives in the test's temporary folder and is forgotten when that test ends: a later
// test's server may get the same URL (a port used again), and must not be handed a path that
// is gone (CI: TestAskInClientFirstDecisionWins failed with "no nats identity" in the folder of
// the test before it).
func approverSeed(t *testing.T, natsURL string) string {
	approverSeedsMu.Lock()
	defer approverSeedsMu.Unlock()
	if p, ok := approverSeeds[natsURL]; ok {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	dir := t.TempDir()
	if _, err := bus.EnsureKeys(dir); err != nil {
		t.Fatal(err)
	}
	p := bus.KeyPath(dir, bus.RoleApprover)
	approverSeeds[natsURL] = p
	t.Cleanup(func() {
		approverSeedsMu.Lock()
		defer approverSeedsMu.Unlock()
		if approverSeeds[natsURL] == p {
			delete(approverSeeds, natsURL)
		}
	})
	return p
}

func approvalsBundle(t *testing.T) string {
	return testenv.StageBundle(t, "tests/ui/bundle", map[string]string{"plugins/rules.wasm": "./plugins/rules"})
}

// adminCall calls the admin API of g and decodes the JSON answer into out (when not nil).
func adminCall(t *testing.T, g *gateway.Gateway, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+g.Addr()+"/admin/api"+path, rd)
	req.Header.Set("Authorization", "Bearer "+approvalsToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

type queue struct {
	Approvals []approval.Pending `json:"approvals"`
	Count     int                `json:"count"`
}

// waitHeld polls g's queue until a call whose arguments contain text shows, and returns it.
func waitHeld(t *testing.T, g *gateway.Gateway, text string) approval.Pending {
	t.Helper()
	var held approval.Pending
	testenv.Eventually(t, 20*time.Second, fmt.Sprintf("a held call with %q on %s", text, g.Instance()), func() bool {
		var q queue
		adminCall(t, g, "GET", "/approvals", nil, &q)
		for _, p := range q.Approvals {
			if strings.Contains(string(p.Arguments), text) {
				held = p
				return true
			}
		}
		return false
	})
	return held
}

// waitEvent polls g's recent events until one satisfies ok.
func waitEvent(t *testing.T, g *gateway.Gateway, what string, ok func(audit.Event) bool) audit.Event {
	t.Helper()
	var found audit.Event
	testenv.Eventually(t, 20*time.Second, fmt.Sprintf("a %s event on %s", what, g.Instance()), func() bool {
		var r struct {
			Events []audit.Event `json:"events"`
		}
		adminCall(t, g, "GET", "/decisions?limit=0", nil, &r)
		for _, ev := range r.Events {
			if ok(ev) {
				found = ev
				return true
			}
		}
		return false
	})
	return found
}

func mcpSession(t *testing.T, g *gateway.Gateway, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "approvals-test-client", Version: "1.0.0"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://" + g.Addr() + "/mcp/up"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

func callAsync(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		r, err := cs.CallTool(ctx, p)
		ch <- callResult{r, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("held call never returned")
	}
	return callResult{}
}

// TestApprovalsAcrossTwoGateways holds calls on gateway A and resolves them from gateway B's
// admin API and from an operator on the shared NATS server, with a real MCP client waiting.
func TestApprovalsAcrossTwoGateways(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	dir := approvalsBundle(t)
	a := approvalsGateway(t, "gw-a", ns.ClientURL(), dir, up, "  progress_every: 20ms\n")
	b := approvalsGateway(t, "gw-b", ns.ClientURL(), dir, up, "")

	var progress atomic.Int64
	cs := mcpSession(t, a, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progress.Add(1)
	}})

	// Approved on B: A's client gets the upstream's answer, and saw progress while waiting.
	p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold the door"}}
	p.SetProgressToken("tok-1")
	ch := callAsync(t.Context(), cs, p)
	held := waitHeld(t, b, "hold the door")
	if held.Gateway != "gw-a" || held.Rule != "hold-echo" {
		t.Errorf("held on b = %+v", held)
	}
	deadline := time.Now().Add(20 * time.Second)
	for progress.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if progress.Load() < 2 {
		t.Errorf("client saw %d progress notifications while held, want >= 2", progress.Load())
	}
	if code := adminCall(t, b, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"by": "erin"}, nil); code != http.StatusOK {
		t.Fatalf("approve on b: %d", code)
	}
	r := wait(t, ch)
	if r.err != nil || text(r.res) != "Echo: hold the door" {
		t.Fatalf("approved call = %v %v", r.res, r.err)
	}
	ev := waitEvent(t, a, "approval", func(ev audit.Event) bool {
		return ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.ID == held.ID
	})
	if ev.Approval.DecidedBy != "admin-token" || ev.Approval.Decision != audit.ApprovalApproved {
		t.Errorf("approval event = %+v", ev.Approval)
	}
	dec := waitEvent(t, a, "decision", func(ev audit.Event) bool { return ev.Kind == audit.KindDecision && ev.ID == held.ID })
	if dec.Action != "allow" || dec.RequestedAction != "ask" || dec.Approval == nil || dec.Approval.DecidedBy != "admin-token" {
		t.Errorf("decision event = %+v", dec)
	}
	// Gone (404), or already decided (409) while b's view of the bucket catches up.
	if code := adminCall(t, b, "POST", "/approvals/"+held.ID+"/deny", nil, nil); code != http.StatusNotFound && code != http.StatusConflict {
		t.Errorf("deciding a released call: %d, want 404 or 409", code)
	}

	// Denied over NATS by an operator with no gateway: -32001 with the reason.
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	opKey, err := bus.LoadIdentity("", bus.RoleApprover, approverSeed(t, ns.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	op, err := approval.New(t.Context(), approval.Options{Conn: nc, Signer: opKey})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	ch = callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold again"}})
	held = waitHeld(t, a, "hold again")
	// The holding gateway lists a call before its write to the bucket is stored, so the
	// operator may not find it for a moment (CI, under load: "no such held call").
	testenv.Eventually(t, 20*time.Second, "the operator finds the held call", func() bool {
		err := op.Decide(t.Context(), held.ID, approval.Decision{Action: "deny", By: "nats-operator", Reason: "not now"})
		if errors.Is(err, approval.ErrNotFound) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		return true
	})
	r = wait(t, ch)
	d := denied(t, r.err)
	if d.AuditID != held.ID || !strings.Contains(d.Reason, "not now") {
		t.Errorf("deny data = %+v", d)
	}
}

// TestHeldCallClientGoesAway checks a held call whose client disconnects is released, audited
// and gone from every queue.
func TestHeldCallClientGoesAway(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up, "")
	cs := mcpSession(t, g, nil)
	ctx, cancel := context.WithCancel(t.Context())
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold forever"}})
	held := waitHeld(t, g, "hold forever")
	cancel()
	wait(t, ch)
	ev := waitEvent(t, g, "approval", func(ev audit.Event) bool {
		return ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.ID == held.ID
	})
	if ev.Approval.DecidedBy != approval.ByDisconnect || ev.Action != "deny" {
		t.Errorf("approval event = %+v", ev.Approval)
	}
	dec := waitEvent(t, g, "decision", func(ev audit.Event) bool { return ev.Kind == audit.KindDecision && ev.ID == held.ID })
	if dec.Action != "deny" || dec.Approval == nil || dec.Approval.DecidedBy != approval.ByDisconnect {
		t.Errorf("decision event = %+v", dec)
	}
	testenv.Eventually(t, 20*time.Second, "the held call to leave the queue", func() bool {
		var q queue
		adminCall(t, g, "GET", "/approvals", nil, &q)
		return q.Count == 0
	})
}

// TestRuleTimeoutAllows checks a rule's on_timeout: allow releases the call to the upstream.
func TestRuleTimeoutAllows(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up, "")
	cs := mcpSession(t, g, nil)
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "brief wait"}})
	if err != nil || text(r) != "Echo: brief wait" {
		t.Fatalf("call = %v %v", r, err)
	}
	waitEvent(t, g, "timeout approval", func(ev audit.Event) bool {
		return ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.Decision == audit.ApprovalTimeout && ev.Action == "allow"
	})
}

// TestPlaygroundAndChain checks the playground judges without forwarding and the chain view
// counts stage calls.
func TestPlaygroundAndChain(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up, "")
	for _, tc := range []struct {
		name    string
		body    map[string]any
		action  string
		outcome string
		rule    string
	}{
		{"path traversal", map[string]any{"tool": "read_file", "arguments": map[string]any{"path": "../../etc/passwd"}}, "deny", "deny", "deny-path-traversal"},
		{"held echo", map[string]any{"tool": "echo", "arguments": map[string]any{"message": "hold it"}}, "ask", "held", "hold-echo"},
		{"pasted message", map[string]any{"message": map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}}}, "allow", "allow", "allow-echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res struct {
				Action, Outcome, Rule string
				Stages                []struct{ Stage, Action string }
			}
			if code := adminCall(t, g, "POST", "/playground", tc.body, &res); code != http.StatusOK {
				t.Fatalf("playground: %d", code)
			}
			if res.Action != tc.action || res.Outcome != tc.outcome || res.Rule != tc.rule || len(res.Stages) != 1 || res.Stages[0].Stage != "rules" {
				t.Errorf("playground = %+v", res)
			}
		})
	}
	var q queue
	adminCall(t, g, "GET", "/approvals", nil, &q)
	if q.Count != 0 {
		t.Errorf("the playground held a call: %+v", q)
	}
	cs := mcpSession(t, g, nil)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"name": "HOME"}}); err == nil {
		t.Fatal("get-env was not denied")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var v struct {
			Bundle struct{ Name, Digest string }
			Stages []struct {
				Name     string
				Calls    int64
				DenyRate float64 `json:"deny_rate"`
			}
		}
		adminCall(t, g, "GET", "/chain", nil, &v)
		if v.Bundle.Name != "approvals-demo" || len(v.Stages) != 1 {
			t.Fatalf("chain = %+v", v)
		}
		if v.Stages[0].Calls >= 1 {
			if v.Stages[0].DenyRate <= 0 {
				t.Errorf("deny rate = %v after a deny", v.Stages[0].DenyRate)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chain never counted the call: %+v", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The dashboard is served without a token; the API is not.
	resp, err := http.Get("http://" + g.Addr() + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Palisade") {
		t.Errorf("/ui/: %d %.80s", resp.StatusCode, body)
	}
	resp, err = http.Get("http://" + g.Addr() + "/admin/api/approvals")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("approvals without a token: %d", resp.StatusCode)
	}
}

// palisadeBinary builds cmd/palisade once per test binary, linked with the first-party module's
// digest this test binary was (make test links it: the CLI runs those stages natively too).
var palisadeBinary = sync.OnceValues(func() (string, error) {
	dir, err := testbuild.TempDir("palisade-cli-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "palisade")
	cmd := exec.Command("go", "build", "-ldflags", "-X github.com/added060/palisade/host/firstparty.Digest="+firstparty.Digest, "-o", out, "./cmd/palisade")
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/palisade: %v\n%s", err, b)
	}
	return out, nil
})

// approvalsCLI runs the real `palisade approvals args...` and returns its exit code and output.
func approvalsCLI(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	bin, err := palisadeBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"approvals"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestApprovalsCLI holds a call on gateway A and lists, approves and denies it with the real
// CLI, through gateway B's admin API and straight over NATS.
func TestApprovalsCLI(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	dir := approvalsBundle(t)
	a := approvalsGateway(t, "gw-a", ns.ClientURL(), dir, up, "")
	b := approvalsGateway(t, "gw-b", ns.ClientURL(), dir, up, "")
	env := []string{"PALISADE_ADMIN_URL=http://" + b.Addr(), "PALISADE_ADMIN_TOKEN=" + approvalsToken, "USER=frank"}
	cs := mcpSession(t, a, nil)
	used := map[string]bool{} // b may list a released call until its view of the bucket catches up
	hold := func(msg string) (<-chan callResult, string) {
		ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, out, errs := approvalsCLI(t, env, "list")
			if code != 0 {
				t.Fatalf("list: %d %s", code, errs)
			}
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); strings.Contains(line, "hold-echo") && strings.Contains(line, "gw-a") && !used[f[0]] {
					used[f[0]] = true
					return ch, f[0]
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("held call not listed: %s", out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	ch, id := hold("hold for the cli")
	code, out, errs := approvalsCLI(t, env, "approve", id, "--scope", "once")
	if code != 0 || !strings.Contains(out, "approved "+id) || !strings.Contains(out, "frank@cli") {
		t.Fatalf("approve: %d %q %q", code, out, errs)
	}
	if r := wait(t, ch); r.err != nil || text(r.res) != "Echo: hold for the cli" {
		t.Fatalf("approved call = %v %v", r.res, r.err)
	}
	if code, _, _ := approvalsCLI(t, env, "approve", id); code != 1 {
		t.Errorf("approving a released call exited %d, want 1 (not found or already decided)", code)
	}

	ch, id = hold("hold for nats")
	code, out, errs = approvalsCLI(t, env, "deny", "--nats-url", ns.ClientURL(), "--creds", approverSeed(t, ns.ClientURL()), id, "--reason", "over nats")
	if code != 0 || !strings.Contains(out, "denied "+id) {
		t.Fatalf("deny over nats: %d %q %q", code, out, errs)
	}
	if d := denied(t, wait(t, ch).err); d.AuditID != id || !strings.Contains(d.Reason, "over nats") {
		t.Errorf("deny data = %+v", d)
	}
	ev := waitEvent(t, a, "approval", func(ev audit.Event) bool {
		return ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.ID == id
	})
	if ev.Approval.DecidedBy != "approver:frank@cli" || ev.Approval.Decision != audit.ApprovalDenied {
		t.Errorf("approval event = %+v", ev.Approval)
	}

	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no subcommand", nil, 2},
		{"unknown subcommand", []string{"frobnicate"}, 2},
		{"approve without id", []string{"approve"}, 2},
		{"bad scope", []string{"approve", "X", "--scope", "forever"}, 2},
		{"unknown id", []string{"deny", "NOPE"}, 1},
		{"wrong token", []string{"list", "--token", "nope"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, _ := approvalsCLI(t, env, tc.args...); code != tc.want {
				t.Errorf("exit %d, want %d", code, tc.want)
			}
		})
	}
}

// TestCloseEndsLiveStreams checks a connected dashboard does not hold up the gateway's
// shutdown: Close ends the event stream.
func TestCloseEndsLiveStreams(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up, "")
	req, _ := http.NewRequest("GET", "http://"+g.Addr()+"/admin/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+approvalsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	first := make([]byte, 64)
	n, _ := resp.Body.Read(first)
	if !strings.HasPrefix(string(first[:n]), "event: hello") {
		t.Fatalf("first bytes %q", first[:n])
	}
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); ended <- err }()
	closed := make(chan struct{})
	go func() { g.Close(context.Background()); close(closed) }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the event stream outlived the gateway's shutdown")
	}
	<-closed
}

// TestCloseReleasesHeldCalls checks a held call gets an answer (deny, audited) when its gateway
// shuts down, instead of keeping the shutdown waiting.
func TestCloseReleasesHeldCalls(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up, "")
	cs := mcpSession(t, g, nil)
	ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold through shutdown"}})
	held := waitHeld(t, g, "hold through shutdown")
	g.Close(context.Background())
	d := denied(t, wait(t, ch).err)
	if d.AuditID != held.ID || !strings.Contains(d.Reason, "shutting down") {
		t.Errorf("deny data = %+v", d)
	}
}

// TestHeldCallInHistory: a held call is in the stored history as held while it waits (its held
// record, published when the hold starts), and once approved its decision replaces it, with
// the held record and the approval among its related events. The held record is no decision
// for the chain statistics.
func TestHeldCallInHistory(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up, "")
	cs := mcpSession(t, g, nil)
	ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold for the history"}})
	held := waitHeld(t, g, "hold for the history")
	type page struct {
		Events []audit.HistoryEvent `json:"events"`
		Source string               `json:"source"`
	}
	var p page
	// On an external server without credentials the gateway signs nothing: its events are
	// listed with unverified=true, flagged unsigned.
	testenv.Eventually(t, 20*time.Second, "the held call in /history?action=held", func() bool {
		p = page{}
		adminCall(t, g, "GET", "/history?action=held&unverified=true", nil, &p)
		return len(p.Events) == 1 && p.Events[0].CallID() == held.ID
	})
	if e := p.Events[0]; !e.Held || e.Kind != audit.KindHeld || e.VerifyProblem != audit.ProblemUnsigned || e.Tool != "echo" || e.Rule != "hold-echo" || p.Source != "jetstream" {
		t.Fatalf("held in history: %+v (source %s)", e, p.Source)
	}
	if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"scope": "minutes", "minutes": 5}, nil); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	if r := wait(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	// The same call again: the grant lets it through without waiting, so it gets no held record.
	if r := wait(t, callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold for the history"}})); r.err != nil {
		t.Fatal(r.err)
	}
	var d audit.HistoryDetail
	testenv.Eventually(t, 20*time.Second, "the decision in /history/{id}", func() bool {
		d = audit.HistoryDetail{} // a fresh answer each time: omitted fields must not stay from the last
		adminCall(t, g, "GET", "/history/"+held.ID, nil, &d)
		return d.Event.ID == held.ID && d.Event.Kind == audit.KindDecision
	})
	kinds := map[string]int{}
	for _, r := range d.Related {
		kinds[r.Kind]++
	}
	if d.Event.Action != "allow" || d.Event.Held || kinds[audit.KindHeld] != 1 || kinds[audit.KindApproval] != 1 {
		t.Fatalf("decided: %+v related %v", d.Event, kinds)
	}
	p = page{}
	adminCall(t, g, "GET", "/history?action=held&unverified=true", nil, &p)
	if len(p.Events) != 0 {
		t.Fatalf("still held in history after the decision: %+v", p.Events)
	}
	// The chain statistics and Prometheus count decisions only: the ring holds the held record
	// too. The granted call's event is recorded as its exchange ends, so poll until all agree.
	var decisions, heldRecords, chained int
	var counted float64
	testenv.Eventually(t, 20*time.Second, "the ring, /chain and /metrics to agree on 2 decisions", func() bool {
		var recent struct {
			Events []audit.Event `json:"events"`
		}
		adminCall(t, g, "GET", "/decisions?limit=0", nil, &recent)
		decisions, heldRecords = 0, 0
		for _, e := range recent.Events {
			switch e.Kind {
			case audit.KindDecision:
				decisions++
			case audit.KindHeld:
				heldRecords++
			}
		}
		var chainStats struct {
			Decisions int `json:"decisions"`
		}
		adminCall(t, g, "GET", "/chain", nil, &chainStats)
		chained = chainStats.Decisions
		resp, err := http.Get("http://" + g.Addr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		counted = 0
		for line := range strings.SplitSeq(string(body), "\n") {
			if strings.HasPrefix(line, "palisade_decisions_total{") {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				counted += v
			}
		}
		return decisions == 2 && chained == 2 && int(counted) == 2
	})
	if heldRecords != 1 {
		t.Fatalf("ring: %d held records, want 1 (the granted call was never held)", heldRecords)
	}
}
