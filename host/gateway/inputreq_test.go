package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessAskGateway is askGateway in front of a stateless (2026-07-28) Go SDK server, so its
// clients speak the sessionless protocol.
func statelessAskGateway(t *testing.T) *gateway.Gateway {
	t.Helper()
	ns := testenv.StartNATS(t)
	return approvalsGateway(t, "gw-mrtr", ns.ClientURL(), approvalsBundle(t), testenv.StartGoServer(t, true), "  ask_client: true\n")
}

// TestAskInClientInputRequired: a 2026-07-28 client has no stream for a mid-call request, so a
// held call is answered with an input_required result carrying the approval form; the Go SDK
// client's multi round-trip fills it through its elicitation handler and retries, and the
// answer decides the call through the approval path (audited as answered in the client, via
// input_required): an approval gets the upstream's result in the same CallTool, a deny is
// -32001. The first round is recorded as asked (action ask, via input_required).
func TestAskInClientInputRequired(t *testing.T) {
	g := statelessAskGateway(t)
	for _, tc := range []struct {
		name, msg string
		answer    *mcp.ElicitResult
		action    string
	}{
		{"approve", "hold approve stateless", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, "allow"},
		{"deny", "hold deny stateless", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "reason": "not today"}}, "deny"},
		{"decline", "hold decline stateless", &mcp.ElicitResult{Action: "decline"}, "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Pointer[mcp.ElicitParams]
			cs := mcpSession(t, g, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Store(r.Params)
				return tc.answer, nil
			}})
			if v := cs.InitializeResult().ProtocolVersion; v < pmcp.Stateless {
				t.Fatalf("negotiated %s, want the stateless protocol", v)
			}
			r := wait(t, callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": tc.msg}}))
			p := asked.Load()
			if p == nil || !strings.Contains(p.Message, tc.msg) || !strings.Contains(p.Message, "hold-echo") {
				t.Fatalf("the client was not asked about the call: %+v", p)
			}
			first := waitEvent(t, g, "the asked round", func(ev audit.Event) bool {
				return ev.Kind == audit.KindDecision && ev.Action == "ask" && via(ev) == "input_required" && ev.Tool == "echo" &&
					ev.ArgumentsSHA256 == audit.ArgumentsHash(mustArgs(t, tc.msg))
			})
			if first.RequestedAction != "ask" || first.Approval != nil {
				t.Errorf("the asked round: %+v", first)
			}
			var id string
			if tc.action == "allow" {
				if r.err != nil || text(r.res) != "Echo: "+tc.msg {
					t.Fatalf("approved in the client: %v %v", r.res, r.err)
				}
				id = waitEvent(t, g, "the decision", func(ev audit.Event) bool {
					return ev.Kind == audit.KindDecision && ev.Action == "allow" && ev.ArgumentsSHA256 == first.ArgumentsSHA256
				}).ID
			} else {
				d := denied(t, r.err)
				id = d.AuditID
				if tc.name == "deny" && !strings.Contains(d.Reason, "not today") {
					t.Errorf("deny reason %q does not carry the person's reason", d.Reason)
				}
			}
			askEvents(t, g, id, "elicitation:approvals-test-client", "input_required", tc.action)
		})
	}
}

func mustArgs(t *testing.T, msg string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"message": msg})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInputRequiredStateBindsTheCall: the requestState binds what was shown: a retry with other
// arguments, or one that reuses an answered state, is asked again (a new input_required), a
// forged state too; none reaches the upstream.
func TestInputRequiredStateBindsTheCall(t *testing.T) {
	g := statelessAskGateway(t)
	url := "http://" + g.Addr() + "/mcp/up"
	const caps = `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`
	call := func(params string) map[string]json.RawMessage {
		t.Helper()
		resp := rawStateless(t, url, params)
		var m struct {
			Result map[string]json.RawMessage `json:"result"`
			Error  *pmcp.Error                `json:"error"`
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(b), "\n") { // an SSE answer: its data line
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				b = []byte(strings.TrimSpace(d))
			}
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		if m.Error != nil {
			return map[string]json.RawMessage{"error": json.RawMessage(`"` + m.Error.Message + `"`)}
		}
		return m.Result
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` + caps + `}`
	approve := `"inputResponses":{"palisade-approval":{"action":"accept","content":{"decision":"approve"}}}`
	first := call(`{"name":"echo","arguments":{"message":"hold raw"},` + meta + `}`)
	var state string
	if string(first["resultType"]) != `"input_required"` || json.Unmarshal(first["requestState"], &state) != nil || !strings.Contains(string(first["inputRequests"]), "palisade-approval") {
		t.Fatalf("first round: %s", first)
	}
	st, _ := json.Marshal(state)
	// Other arguments under the state: asked again.
	if r := call(`{"name":"echo","arguments":{"message":"hold other"},` + meta + `,` + approve + `,"requestState":` + string(st) + `}`); string(r["resultType"]) != `"input_required"` {
		t.Fatalf("changed arguments: %s", r)
	}
	// A forged state: asked again.
	forged, _ := json.Marshal(state[:len(state)-4] + "AAAA")
	if r := call(`{"name":"echo","arguments":{"message":"hold raw"},` + meta + `,` + approve + `,"requestState":` + string(forged) + `}`); string(r["resultType"]) != `"input_required"` {
		t.Fatalf("forged state: %s", r)
	}
	// The right call with the state: approved, the upstream answers.
	if r := call(`{"name":"echo","arguments":{"message":"hold raw"},` + meta + `,` + approve + `,"requestState":` + string(st) + `}`); !strings.Contains(string(r["content"]), "Echo: hold raw") {
		t.Fatalf("approved retry: %s", r)
	}
	// The same state again: used, so asked again.
	if r := call(`{"name":"echo","arguments":{"message":"hold raw"},` + meta + `,` + approve + `,"requestState":` + string(st) + `}`); string(r["resultType"]) != `"input_required"` {
		t.Fatalf("reused state: %s", r)
	}
}

// rawStateless posts one stateless tools/call of echo with params.
func rawStateless(t *testing.T, url, params string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(pmcp.HeaderProtocolVersion, pmcp.Stateless)
	req.Header.Set(pmcp.HeaderMethod, "tools/call")
	req.Header.Set(pmcp.HeaderName, "echo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
