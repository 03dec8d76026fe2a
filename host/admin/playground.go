package admin

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
)

// PlaygroundRequest is the body of POST /playground: either a whole JSON-RPC message, or a tool
// call composed from its parts (method defaults to tools/call).
type PlaygroundRequest struct {
	Message   json.RawMessage `json:"message,omitempty"`
	Method    string          `json:"method,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Server    string          `json:"server,omitempty"`
	Session   string          `json:"session,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
}

// PlaygroundResult is the answer: the merged request-phase decision and each stage's output.
// Nothing is forwarded, held or audited.
type PlaygroundResult struct {
	Envelope *abi.Envelope     `json:"envelope"`
	Bundle   chain.Info        `json:"bundle"`
	Action   string            `json:"action"`  // what the chain decided (allow, deny, ask, sample)
	Outcome  string            `json:"outcome"` // what a real call would get: allow, deny or held
	Reason   string            `json:"reason,omitempty"`
	Rule     string            `json:"rule,omitempty"`
	Stage    string            `json:"stage,omitempty"`
	Default  bool              `json:"default,omitempty"`
	Stages   []abi.StageResult `json:"stages"`
}

// RegisterPlayground adds POST /playground: run the active chain's request phase on a composed
// or pasted call and return every stage's verdict, without forwarding anything. held says whether
// ask verdicts are held for a person on this gateway (otherwise the bundle's fallback applies).
// The body (at most 1 MiB) draws on budget until it is answered (nil = counted nowhere); past
// it the answer is 503.
func RegisterPlayground(g *echo.Group, active *chain.Active, held bool, budget *sse.Budget) {
	g.POST("/playground", func(c echo.Context) error {
		body, release, err := budget.ReadAll(c.Request().Body, c.Request().ContentLength, 1<<20)
		defer release()
		switch {
		case errors.Is(err, sse.ErrBudget):
			c.Response().Header().Set("Retry-After", "1")
			return Error(c, http.StatusServiceUnavailable, "the body does not fit the gateway's memory budget (limits.stream_buffer_bytes) now; retry later")
		case errors.Is(err, sse.ErrTooLarge):
			return Error(c, http.StatusRequestEntityTooLarge, "the body is over 1 MiB")
		case err != nil:
			return Error(c, http.StatusBadRequest, "read body: "+err.Error())
		}
		var r PlaygroundRequest
		if err := json.Unmarshal(body, &r); err != nil {
			return Error(c, http.StatusBadRequest, "body must be JSON: {message} or {tool, arguments, server}")
		}
		m := &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`"playground"`)}
		if len(r.Message) > 0 {
			pm, err := mcp.Parse(r.Message, mcp.Context{})
			if err != nil {
				return Error(c, http.StatusBadRequest, "message: "+err.Error())
			}
			m = pm.Message
		} else {
			if r.Tool == "" {
				return Error(c, http.StatusBadRequest, "tool or message is required")
			}
			m.Method = r.Method
			if m.Method == "" {
				m.Method = mcp.MethodToolsCall
			}
			args := r.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			key := "name"
			if m.Method == mcp.MethodResourcesRead {
				key = "uri"
			}
			m.Params, _ = json.Marshal(map[string]any{key: r.Tool, "arguments": args})
		}
		env, err := mcp.NewEnvelope(m, mcp.Context{Transport: "playground", Server: r.Server, Session: r.Session, Agent: r.Agent, Cwd: r.Cwd})
		if err != nil {
			return Error(c, http.StatusBadRequest, "message: "+err.Error())
		}
		env.ID = audit.NewID()
		ch, release := active.Acquire()
		if ch == nil {
			return Error(c, http.StatusServiceUnavailable, "no active bundle")
		}
		defer release()
		d, err := ch.Evaluate(c.Request().Context(), env)
		if err != nil {
			return Error(c, http.StatusInternalServerError, err.Error())
		}
		env.Prior = nil
		res := PlaygroundResult{Envelope: env, Bundle: ch.Info(), Action: d.Action, Reason: d.Reason, Rule: d.Rule,
			Stage: d.Stage, Default: d.Default, Stages: d.Stages}
		switch d.Action {
		case abi.ActionAllow, abi.ActionDeny:
			res.Outcome = d.Action
		case abi.ActionAsk:
			res.Outcome = "held"
			if !held {
				res.Outcome = ch.Fallback(abi.ActionAsk)
			}
		default:
			res.Outcome = ch.Fallback(d.Action)
		}
		if res.Stages == nil {
			res.Stages = []abi.StageResult{}
		}
		return c.JSON(http.StatusOK, res)
	})
}
