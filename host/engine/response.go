package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Rules named in the decision when the gateway itself refuses an upstream answer.
const (
	// RuleUnjudgeable: the answer could not be judged and a matching response stage fails closed.
	RuleUnjudgeable = "unjudgeable-response"
	// RuleAmbiguous: the upstream message holds a key twice (or in two cases).
	RuleAmbiguous = "ambiguous-response"
	// RuleCapability: a server→client request for a capability the client did not declare.
	RuleCapability = "undeclared-capability"
	// StageGateway names the gateway itself as the deciding stage.
	StageGateway = "gateway"
)

// UnjudgeableResponse applies the response phase's failure mode to an answer the gateway could
// not judge (not a JSON-RPC message, an id that answers nothing, a response-phase error): when
// a response stage that matches the call fails closed, o becomes a deny and true is returned;
// otherwise the answer passes as no stage would have had an opinion, and o's event says why.
func (e *Engine) UnjudgeableResponse(o *Outcome, why string) bool {
	var failClosed *chain.Stage
	matched := false
	for _, s := range o.Chain.Stages() {
		if s.Response && s.Match.Matches(o.Envelope) {
			matched = true
			if s.FailClosed && failClosed == nil {
				failClosed = s
			}
		}
	}
	if !matched {
		return false // no stage would judge this answer
	}
	o.Quiet = false
	if failClosed == nil {
		e.o.Logger.Warn("upstream answer could not be judged; passed (response stages fail open)", "audit_id", o.AuditID, "upstream", o.Envelope.Server, "err", why)
		if o.Detail == nil {
			o.Detail = map[string]any{}
		}
		o.Detail["response_unjudged"] = why
		return false
	}
	e.o.Logger.Warn("upstream answer could not be judged; denied", "audit_id", o.AuditID, "upstream", o.Envelope.Server, "stage", failClosed.Name, "err", why)
	o.deny(fmt.Sprintf("the upstream's answer could not be judged (%s) and stage %s fails closed", why, failClosed.Name), RuleUnjudgeable, failClosed.Name)
	return true
}

// RefuseResponse denies o because the upstream's answer is one the gateway never passes
// (ambiguous keys), whatever the stages' failure modes.
func (e *Engine) RefuseResponse(o *Outcome, why string) {
	e.o.Logger.Warn("upstream answer refused", "audit_id", o.AuditID, "upstream", o.Envelope.Server, "err", why)
	o.Quiet = false
	o.deny("the upstream's answer was refused: "+why, RuleAmbiguous, StageGateway)
}

func (o *Outcome) deny(reason, rule, stage string) {
	var stages []abi.StageResult
	if o.Decision != nil {
		stages = o.Decision.Stages
	}
	o.Action = abi.ActionDeny
	o.Decision = &chain.Decision{Action: abi.ActionDeny, Reason: reason, Rule: rule, Stage: stage, Stages: stages}
}

// judgeAnswer runs tool pinning (tools/list) and the response phase on msg, the upstream's answer
// to the request reqID that o decided, and returns the message to send the client: the answer
// (result replaced when a stage redacted it, id as the client wrote it) or the deny error.
func judgeAnswer(ctx context.Context, e *Engine, tools ToolsObserver, log *slog.Logger, o *Outcome, reqID json.RawMessage, msg *mcp.Message) []byte {
	msg.ID = reqID
	if o.Envelope.Method == mcp.MethodToolsList && tools != nil && msg.Result != nil {
		res, err := tools.ObserveTools(ctx, o.Envelope.Server, msg.Result)
		if err != nil {
			log.Warn("tool pinning", "upstream", o.Envelope.Server, "err", err)
		}
		if res != nil {
			msg.Result = res
		}
	}
	d, err := e.Response(ctx, o, msg)
	if err != nil {
		if e.UnjudgeableResponse(o, "response phase: "+err.Error()) {
			return mcp.ErrorResponse(reqID, o.Deny())
		}
		b, _ := json.Marshal(msg)
		return b
	}
	if o.Action == abi.ActionDeny {
		return mcp.ErrorResponse(reqID, o.Deny())
	}
	if len(d.Result) > 0 && msg.Error == nil {
		msg.Result = d.Result
	}
	if o.Envelope.Method == mcp.MethodToolsList && msg.Error == nil {
		msg.Result = e.visibleTools(ctx, o, msg.Result) // visible.go: what this caller may call
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return mcp.ErrorResponse(reqID, mcp.NewError(mcp.CodeInternalError, "gateway: encode answer: "+err.Error(), nil))
	}
	return b
}
