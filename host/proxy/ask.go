package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// askIDPrefix marks the ids of the elicitation requests the gateway sends to ask the person
// at the client about a held call (approvals.ask_client).
const askIDPrefix = "palisade-ask-"

// Values of the approval form's decision field.
const (
	askApprove = "approve"
	askDeny    = "deny"
)

// ErrOnlyOpened is Held.Ask's error when the client accepted a URL-mode elicitation: that only
// says the person opened the approval page; the decision comes through the queue.
var ErrOnlyOpened = errors.New("proxy: the client opened the approval page; the queue decides")

// askable reports whether a held call of this request may be put to the person at its client:
// approvals.ask_client is on, the session declared elicitation, and the protocol lets the
// gateway send a request on the call's own SSE answer (before 2026-07-28, which has none).
func (h *HTTP) askable(rw *responder, hdr http.Header, env *abi.Envelope) (session, bool) {
	if !h.o.AskClient || rw.sink != nil || env.ProtocolVersion >= mcp.Stateless || !acceptsSSE(hdr) {
		return session{}, false
	}
	s, ok := h.sessions.get(env.Session)
	return s, ok && s.caps[mcp.CapabilityElicitation]
}

// ask puts the held call to the person at the client with elicitation/create on the call's
// SSE answer, and reads their answer: in form mode, approve or deny with an optional reason;
// in URL mode (HTTPOptions.AskURL set and the client declared it), a link to the approval
// page, whose accept only opens it (ErrOnlyOpened). Decline or cancel is a deny in both.
func (h *HTTP) ask(ctx context.Context, rw *responder, s session, held engine.Held) (engine.Answer, error) {
	env := held.Envelope
	who := askWho(env)
	params := askForm(held)
	url := s.elicitURL && h.o.AskURL != ""
	if url {
		params = map[string]any{"mode": "url", "message": askMessage(held), "elicitationId": held.AuditID,
			"url": strings.ReplaceAll(h.o.AskURL, "{id}", held.AuditID)}
	}
	b, _ := json.Marshal(params)
	res, err := h.clientRequest(ctx, rw, askIDPrefix, env.Session, mcp.MethodElicitation, b)
	if err != nil {
		return engine.Answer{}, err
	}
	if url {
		var r struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(res, &r) == nil && r.Action == "accept" {
			return engine.Answer{}, ErrOnlyOpened
		}
	}
	return formAnswer(res, who, "elicitation")
}

// formAnswer reads the person's answer to the approval form (an elicitation result): approve
// or deny with an optional reason; decline and cancel deny. via says how it came.
func formAnswer(raw json.RawMessage, who, via string) (engine.Answer, error) {
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return engine.Answer{}, fmt.Errorf("elicitation: unreadable answer: %w", err)
	}
	a := engine.Answer{Action: abi.ActionDeny, By: who, Via: via, Reason: r.Content.Reason}
	switch {
	case r.Action == "accept" && r.Content.Decision == askApprove:
		a.Action = abi.ActionAllow
	case r.Action == "accept" && r.Content.Decision == askDeny:
	case r.Action == "decline":
		a.Reason = "the person at the client declined"
	case r.Action == "cancel":
		a.Reason = "the person at the client cancelled"
	default:
		return engine.Answer{}, fmt.Errorf("elicitation: answer %q with decision %q is neither approve nor deny", r.Action, r.Content.Decision)
	}
	if a.Action == abi.ActionDeny && a.Reason == "" {
		a.Reason = "denied by the person at the client"
	}
	return a, nil
}

// askWho names who answers in the client: the session's verified principal, else the client
// as it named itself in initialize.
func askWho(env *abi.Envelope) string {
	switch {
	case env.Principal != nil:
		return env.Principal.Subject
	case env.Client != nil && env.Client.Name != "":
		return env.Client.Name
	}
	return "client"
}

// askMessage says what the held call is: tool, server, an arguments summary, rule and reason.
func askMessage(held engine.Held) string {
	env := held.Envelope
	what := env.Tool
	if what == "" {
		what = env.Prompt + env.URI
	}
	args := string(env.Arguments)
	if len(args) > 200 {
		args = args[:200] + "… (sha256 " + audit.ArgumentsHash(env.Arguments)[:12] + ")"
	}
	msg := fmt.Sprintf("Palisade holds %s %q on server %q for approval.", env.Method, what, env.Server)
	if args != "" {
		msg += "\nArguments: " + args
	}
	if d := held.Decision; d != nil {
		msg += fmt.Sprintf("\nRule %q: %s", d.Rule, d.Reason)
	}
	return msg + "\nApprove or deny it (id " + held.AuditID + ")."
}

// askForm is the form-mode elicitation: the message and a flat schema (decision, reason), as
// the spec allows only primitive top-level properties.
func askForm(held engine.Held) map[string]any {
	return map[string]any{
		"mode":    "form",
		"message": askMessage(held),
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{"type": "string", "title": "Decision", "enum": []string{askApprove, askDeny}},
				"reason":   map[string]any{"type": "string", "title": "Reason (optional)"},
			},
			"required": []string{"decision"},
		},
	}
}

// elicitURLMode reports whether an initialize request's params declare the elicitation url mode
// (2025-11-25: capabilities.elicitation.url).
func elicitURLMode(params json.RawMessage) bool {
	var p struct {
		Capabilities struct {
			Elicitation struct {
				URL json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	return len(p.Capabilities.Elicitation.URL) > 0 && string(p.Capabilities.Elicitation.URL) != "null"
}

// clientPending is a request the gateway sent a client, waiting for its answer.
type clientPending struct {
	ch      chan *mcp.Message
	session string // the session it was sent in; "" = not checked (sampling)
}

// clientRequest sends method to the client on the request's SSE answer, with an id starting
// with prefix, and waits for the client to POST its answer in session.
func (h *HTTP) clientRequest(ctx context.Context, rw *responder, prefix, session, method string, params json.RawMessage) (json.RawMessage, error) {
	id := prefix + audit.NewID()
	ch := make(chan *mcp.Message, 1)
	h.pending.Store(id, clientPending{ch: ch, session: session})
	defer h.pending.Delete(id)
	rawID, _ := json.Marshal(id)
	b, _ := json.Marshal(mcp.Message{JSONRPC: "2.0", ID: rawID, Method: method, Params: params})
	if err := rw.event(&sse.Event{Name: "message", Data: b}); err != nil {
		return nil, fmt.Errorf("%s: write to client: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: client answered %w", method, m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		// Decided elsewhere, timed out, or the client left: the client may stop asking (a write
		// to a client that left fails, which changes nothing).
		p, _ := json.Marshal(map[string]any{"requestId": id, "reason": "palisade: no longer needed"})
		n, _ := json.Marshal(mcp.Message{JSONRPC: "2.0", Method: "notifications/cancelled", Params: p})
		_ = rw.event(&sse.Event{Name: "message", Data: n})
		return nil, fmt.Errorf("%s: no answer from the client: %w", method, ctx.Err())
	}
}
