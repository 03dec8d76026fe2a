package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askGateway runs the approvals test bundle (echo "hold..." is held) in front of the Go SDK
// server, with approvals.ask_client set to ask, and more of the approvals section in extra.
func askGateway(t *testing.T, ask bool, extra ...string) *gateway.Gateway {
	t.Helper()
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	section := "  ask_client: false\n"
	if ask {
		section = "  ask_client: true\n"
	}
	return approvalsGateway(t, "gw-ask", ns.ClientURL(), approvalsBundle(t), up, section+strings.Join(extra, ""))
}

// via returns an event's detail.via.
func via(ev audit.Event) string {
	var d struct {
		Via string `json:"via"`
	}
	_ = json.Unmarshal(ev.Detail, &d)
	return d.Via
}

// askEvents waits for the approval and decision events of held call id and checks who decided,
// how (detail.via) and the outcome.
func askEvents(t *testing.T, g *gateway.Gateway, id, by, how, action string) {
	t.Helper()
	ev := waitEvent(t, g, "approval", func(ev audit.Event) bool {
		return ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.ID == id
	})
	if ev.Approval.DecidedBy != by || ev.Action != action || via(ev) != how {
		t.Errorf("approval event: decided_by %q, action %q, via %q; want %q, %q, %q", ev.Approval.DecidedBy, ev.Action, via(ev), by, action, how)
	}
	dec := waitEvent(t, g, "decision", func(ev audit.Event) bool { return ev.Kind == audit.KindDecision && ev.ID == id })
	if dec.Action != action || dec.RequestedAction != "ask" || dec.Approval == nil || dec.Approval.DecidedBy != by || via(dec) != how {
		t.Errorf("decision event = %+v (detail %s)", dec, dec.Detail)
	}
}

// TestAskInClient puts held calls to the person at a real Go SDK client through elicitation
// (approvals.ask_client: true): an approval releases the call with the upstream's result in
// the same tools/call, a decline or a deny answer is -32001, and both are audited as decided by
// the client via elicitation. The held call is in the queue meanwhile.
func TestAskInClient(t *testing.T) {
	g := askGateway(t, true)
	const who = "elicitation:approvals-test-client"
	for _, tc := range []struct {
		name, msg string
		answer    *mcp.ElicitResult
		action    string
	}{
		{"approve", "hold approve", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, "allow"},
		{"deny", "hold deny", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "reason": "not today"}}, "deny"},
		{"decline", "hold decline", &mcp.ElicitResult{Action: "decline"}, "deny"},
		{"cancel", "hold cancel", &mcp.ElicitResult{Action: "cancel"}, "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Pointer[mcp.ElicitParams]
			cs := mcpSession(t, g, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Store(r.Params)
				return tc.answer, nil
			}})
			r := wait(t, callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": tc.msg}}))
			p := asked.Load()
			if p == nil {
				t.Fatal("the client was never asked")
			}
			for _, want := range []string{"echo", `"up"`, tc.msg, "hold-echo", "a person approves"} {
				if !strings.Contains(p.Message, want) {
					t.Errorf("elicitation message %q does not say %q", p.Message, want)
				}
			}
			if p.Mode != "form" && p.Mode != "" {
				t.Errorf("mode %q, want form", p.Mode)
			}
			var id string
			if tc.action == "allow" {
				if r.err != nil || text(r.res) != "Echo: "+tc.msg {
					t.Fatalf("approved in the client: %v %v", r.res, r.err)
				}
				dec := waitEvent(t, g, "decision", func(ev audit.Event) bool {
					return ev.Kind == audit.KindDecision && ev.Tool == "echo" && strings.Contains(ev.Reason, "a person approves") && ev.Action == "allow"
				})
				id = dec.ID
			} else {
				d := denied(t, r.err)
				id = d.AuditID
				if tc.name == "deny" && !strings.Contains(d.Reason, "not today") {
					t.Errorf("deny reason %q does not carry the person's reason", d.Reason)
				}
			}
			askEvents(t, g, id, who, "elicitation", tc.action)
		})
	}
}

// TestAskInClientFirstDecisionWins holds a call whose client is asked but does not answer: a
// person in the dashboard decides first, the call is denied, and the client is told to stop
// asking (notifications/cancelled: the handler's context ends); its late approval would
// change nothing.
func TestAskInClientFirstDecisionWins(t *testing.T) {
	g := askGateway(t, true)
	release := make(chan struct{})
	var asked, cancelled atomic.Int32
	cs := mcpSession(t, g, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
			cancelled.Add(1)
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
	}})
	defer close(release)
	ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold for the dashboard"}})
	held := waitHeld(t, g, "hold for the dashboard")
	testenv.Eventually(t, 20*time.Second, "the client to be asked", func() bool { return asked.Load() == 1 })
	if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/deny", map[string]any{"by": "erin", "reason": "dashboard says no"}, nil); code != http.StatusOK {
		t.Fatalf("deny in the dashboard: %d", code)
	}
	d := denied(t, wait(t, ch).err)
	if d.AuditID != held.ID || !strings.Contains(d.Reason, "dashboard says no") {
		t.Errorf("deny = %+v", d)
	}
	askEvents(t, g, held.ID, "admin-token", "", "deny")
	testenv.Eventually(t, 20*time.Second, "the client's question to be cancelled", func() bool { return cancelled.Load() == 1 })
}

// TestAskFallsBackToQueue checks the calls that are not asked in the client wait in the queue
// and are decided there: a client without the elicitation capability, and, with
// approvals.ask_client off, a client that has it (whose handler is never called).
func TestAskFallsBackToQueue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ask     bool
		handler bool
	}{
		{"no elicitation capability", true, false},
		{"ask_client off", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := askGateway(t, tc.ask)
			var asked atomic.Int32
			var opts *mcp.ClientOptions
			if tc.handler {
				opts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
				}}
			}
			cs := mcpSession(t, g, opts)
			ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold in the queue"}})
			held := waitHeld(t, g, "hold in the queue")
			if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"by": "erin"}, nil); code != http.StatusOK {
				t.Fatalf("approve: %d", code)
			}
			r := wait(t, ch)
			if r.err != nil || text(r.res) != "Echo: hold in the queue" {
				t.Fatalf("approved in the queue: %v %v", r.res, r.err)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the client was asked %d times", n)
			}
			askEvents(t, g, held.ID, "admin-token", "", "allow")
		})
	}
}

// TestAskInClientURLMode checks a client that declared elicitation url mode, with
// approvals.ask_url set: it is sent the approval page of the held call, its accept only opens
// the page (the call waits for the decision made there), and its decline denies the call.
func TestAskInClientURLMode(t *testing.T) {
	g := askGateway(t, true, "  ask_url: https://palisade.example/ui/#/approvals/{id}\n")
	var accept atomic.Bool
	var asked atomic.Pointer[mcp.ElicitParams]
	cs := mcpSession(t, g, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Store(r.Params)
			if accept.Load() {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})

	accept.Store(true)
	ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold url"}})
	held := waitHeld(t, g, "hold url")
	testenv.Eventually(t, 20*time.Second, "the client to be sent the page", func() bool { return asked.Load() != nil })
	if p := asked.Load(); p.Mode != "url" || p.URL != "https://palisade.example/ui/#/approvals/"+held.ID {
		t.Errorf("url elicitation = mode %q url %q", p.Mode, p.URL)
	}
	// Still held after the accept: the page's approval is what releases it (a decided call
	// would answer 404 or 409 here).
	if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"by": "erin"}, nil); code != http.StatusOK {
		t.Fatalf("approve on the page: %d", code)
	}
	if r := wait(t, ch); r.err != nil || text(r.res) != "Echo: hold url" {
		t.Fatalf("approved on the page: %v %v", r.res, r.err)
	}
	askEvents(t, g, held.ID, "admin-token", "", "allow")

	accept.Store(false)
	d := denied(t, wait(t, callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold url again"}})).err)
	askEvents(t, g, d.AuditID, "elicitation:approvals-test-client", "elicitation", "deny")
}
