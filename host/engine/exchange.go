package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Exchange is one call's lifecycle, owned in one place so every transport judges alike. In
// order:
//
//  1. judge the request (Engine.Request: the request phase, then the Check hooks such as tool
//     pinning, before any person is asked), hold an ask for approval, run the decision hooks
//     (execution tokens);
//  2. say what goes upstream (Forward): the params with rewritten arguments and _meta, the
//     fallback tool's call instead of a denied one, or the deny to answer;
//  3. judge what the upstream answered (Answer, Unjudgeable, NoAnswer): tool pinning on
//     tools/list, the response phase, redaction, the fallback mark, and the failure mode of the
//     response stages for an answer that cannot be judged;
//  4. record the audit event (Finish).
//
// A transport only moves bytes: it parses the client's message (mcp.Parse), calls
// Engine.Begin, sends what Forward says, hands the upstream's answer to the exchange and writes
// what it returns. What only a transport knows (upstream status and latency, sessions) it sets
// on Outcome.
//
// # Notes
//
// Finish must be called exactly once a call is done (it is safe to call more than once). An
// Exchange is used by one goroutine at a time.
type Exchange struct {
	// Outcome is the call's decision, carried to the audit event.
	Outcome *Outcome

	e        *Engine
	tools    ToolsObserver
	id       json.RawMessage // the request id as the client wrote it
	fallback bool            // the fallback tool's call went instead of the denied one
}

// Step is what Exchange.Forward says to do with the client's request.
type Step int

// Steps of Exchange.Forward.
const (
	// StepDeny: answer the client with Exchange.Deny; nothing goes upstream.
	StepDeny Step = iota
	// StepForward: send the request upstream, with the returned params when changed.
	StepForward
	// StepFallback: send the returned params (the fallback tool's call) upstream instead, under
	// the same id; its answer goes through Exchange.Answer, which marks it.
	StepFallback
)

// Begin judges the request p (the result of mcp.Parse, its envelope's Server and ID filled by
// the transport as it wants them) and returns its exchange. tools, when set, sees the answer to
// a tools/list before the client (tool pinning). An error means no decision could be made
// (no active bundle, a stage error): nothing is forwarded and there is nothing to finish.
func (e *Engine) Begin(ctx context.Context, p *mcp.Parsed, tools ToolsObserver) (*Exchange, error) {
	return e.begin(ctx, p.Envelope, p.Message.ID, tools, true)
}

// begin judges env, the request with JSON-RPC id (nil where there is none: a hook call); hold
// false never holds an ask for a person (the hook: Claude Code asks).
func (e *Engine) begin(ctx context.Context, env *abi.Envelope, id json.RawMessage, tools ToolsObserver, hold bool) (*Exchange, error) {
	// The exchange and its outcome live exactly as long as one another: one allocation.
	xo := new(struct {
		x Exchange
		o Outcome
	})
	o, err := e.requestInto(ctx, &xo.o, env, hold)
	if err != nil {
		return nil, err
	}
	xo.x = Exchange{Outcome: o, e: e, tools: tools, id: id}
	return &xo.x, nil
}

// Forward says what goes upstream: StepForward with the params to send (changed reports
// whether they differ from the client's: rewritten arguments, _meta entries hooks added),
// StepFallback with the fallback tool's params, or StepDeny.
func (x *Exchange) Forward() (step Step, params json.RawMessage, changed bool) {
	o := x.Outcome
	if !o.Allowed() {
		if params, _, ok := o.Fallback(); ok {
			x.fallback = true
			return StepFallback, params, true
		}
		return StepDeny, nil, false
	}
	params, changed = o.ForwardParams()
	return StepForward, params, changed
}

// Deny returns the JSON-RPC deny answer to the client's request.
func (x *Exchange) Deny() []byte { return mcp.ErrorResponse(x.id, x.Outcome.Deny()) }

// FallbackFailed turns a fallback that could not be sent into the deny it replaced.
func (x *Exchange) FallbackFailed() { x.fallback = false }

// Answer judges the upstream's answer msg to the request (nil when the fallback tool's answer
// could not be found) and returns the message to send the client, with the id the client wrote:
// the answer (its result redacted or marked as a fallback's) or the deny.
func (x *Exchange) Answer(ctx context.Context, msg *mcp.Message) []byte {
	o := x.Outcome
	if x.fallback {
		if msg == nil || msg.Error != nil {
			return x.Deny()
		}
		msg.ID = x.id
		msg.Result = o.MarkFallback(msg.Result)
		b, _ := json.Marshal(msg)
		return b
	}
	return judgeAnswer(ctx, x.e, x.tools, x.e.o.Logger, o, x.id, msg)
}

// Unjudgeable handles upstream bytes meant as the answer that the gateway could not read as a
// JSON-RPC message: ambiguous keys are refused, anything else goes by the failure mode of the
// response stages matching the call. It returns what to send the client: the deny, or raw when
// the stages fail open.
func (x *Exchange) Unjudgeable(raw []byte, err error) []byte {
	if errors.Is(err, mcp.ErrAmbiguousKeys) {
		x.e.RefuseResponse(x.Outcome, err.Error())
	} else if !x.e.UnjudgeableResponse(x.Outcome, err.Error()) {
		return raw
	}
	return x.Deny()
}

// NoAnswer handles an upstream that ended without answering: the deny when a matching response
// stage fails closed, otherwise an upstream error naming server.
func (x *Exchange) NoAnswer(server string) []byte {
	if x.e.UnjudgeableResponse(x.Outcome, "the upstream sent no answer to this request") {
		return x.Deny()
	}
	return mcp.ErrorResponse(x.id, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s sent no answer", server), nil))
}

// Finish records the audit event and releases the chain (Outcome.Finish).
func (x *Exchange) Finish(ctx context.Context) { x.Outcome.Finish(ctx) }

// JudgeServerRequest judges a request an upstream sends the client (sampling/createMessage,
// elicitation/create) and finishes its audit event. It returns nil when the request may reach
// the client, or the answer to send the upstream instead (the deny, or the refusal when it could
// not be judged).
func (e *Engine) JudgeServerRequest(ctx context.Context, p *mcp.Parsed) []byte {
	m := p.Message
	x, err := e.Begin(ctx, p, nil)
	if err != nil {
		e.o.Logger.Warn("judge failed; denied", "method", m.Method, "upstream", p.Envelope.Server, "err", err)
		return mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeDenied, "denied: the gateway could not judge this request: "+err.Error(), nil))
	}
	defer x.Finish(ctx)
	if !x.Outcome.Allowed() {
		return x.Deny()
	}
	return nil
}

// JudgeMessage judges a message that answers nothing the gateway waits for and waits for no
// answer itself: a notification from either side (its request-phase envelope) or a client's
// answer to a server→client request (mcp.AnswerEnvelope). Like every message it passes the
// chain (the bundle's coverage decides what judges it) and a denial is recorded. It reports
// whether the message may go on; one the engine cannot judge does not.
func (e *Engine) JudgeMessage(ctx context.Context, env *abi.Envelope) bool {
	o, err := e.request(ctx, env, false)
	if err != nil {
		e.o.Logger.Warn("judge failed; message dropped", "method", env.Method, "upstream", env.Server, "err", err)
		return false
	}
	defer o.Finish(ctx)
	return o.Allowed()
}

// RefuseServerRequest answers a server→client request the client never declared the capability
// for (sampling, elicitation, roots): it is never shown to the client, and the refusal is
// recorded. It returns the error to answer the upstream with.
func (e *Engine) RefuseServerRequest(ctx context.Context, env *abi.Envelope, capability string) []byte {
	reason := fmt.Sprintf("the client did not declare the %s capability", capability)
	ev := audit.Event{Kind: audit.KindDecision, Transport: env.Transport, Method: env.Method, Server: env.Server,
		Session: env.Session, Agent: env.Agent, RequestID: env.RequestID, Action: abi.ActionDeny,
		RequestedAction: abi.ActionDeny, Reason: reason, Rule: RuleCapability, Stage: StageGateway, Gateway: e.o.Gateway,
		Principal: env.Principal}
	if e.o.Recorder != nil {
		e.o.Recorder.Record(context.WithoutCancel(ctx), ev)
	}
	if e.o.Metrics != nil {
		e.o.Metrics.Decision(abi.ActionDeny, env.Server)
	}
	e.o.Logger.Warn("server request refused", "method", env.Method, "upstream", env.Server, "capability", capability)
	return mcp.ErrorResponse(env.RequestID, mcp.NewError(mcp.CodeMethodNotFound, "palisade: "+reason+"; "+env.Method+" is not delivered", nil))
}

// Judge decides env as a call through the gateway would be decided, with no person and no
// upstream (palisade policy test): a request-phase envelope goes through Begin (ask and sample
// resolve by the bundle's fallback unless the engine has an Approver); a response-phase one
// (env.Result or env.Error set) is first judged as its request and, if that allows it, its
// result is handed to Answer as the upstream's answer. The returned Outcome is finished: its
// Action is what serve would do (allow or deny), its Decision why.
func (e *Engine) Judge(ctx context.Context, env *abi.Envelope) (*Outcome, error) {
	req := *env
	response := env.Phase == abi.PhaseResponse
	if response {
		req.Phase, req.Result, req.Error = abi.PhaseRequest, nil, nil
	}
	x, err := e.begin(ctx, &req, json.RawMessage(`1`), nil, true)
	if err != nil {
		return nil, err
	}
	defer x.Finish(ctx)
	if !response {
		return x.Outcome, nil
	}
	if step, _, _ := x.Forward(); step != StepForward {
		return x.Outcome, nil // a denied request never gets an answer to judge
	}
	msg := &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: env.Result}
	if len(env.Error) > 0 {
		msg.Error = &mcp.Error{}
		if err := json.Unmarshal(env.Error, msg.Error); err != nil {
			return nil, fmt.Errorf("judge: response error: %w", err)
		}
	}
	x.Answer(ctx, msg)
	return x.Outcome, nil
}

// ToolsObserver sees every tools/list result before the client does (host/pin implements it:
// it pins tool definitions and strips ANSI escapes and invisible characters from descriptions).
// It returns the result to pass on (the same bytes when nothing changed).
type ToolsObserver interface {
	ObserveTools(ctx context.Context, server string, result json.RawMessage) (json.RawMessage, error)
}
