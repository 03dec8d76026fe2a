package engine

import (
	"context"
	"encoding/json"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// MetaHidesTool is the verdict metadata key a stage sets on a deny that holds for every
// argument of the call, at any time, for this caller (plugins/rules: a deny rule with no
// argument or time condition, and no argument- or time-dependent non-deny rule before it; a
// `principal` condition makes it hold for the principals it matches). Such a deny hides the
// tool from the caller's tools/list unless the bundle says tools_list.hide_denied: false.
const MetaHidesTool = "hides_tool"

// visibleTools returns the tools/list result with the tools the caller may never call left
// out: for each listed tool, the request phase is run on a tools/call of it by list's principal
// with empty arguments (the chain's first group only: chain.WithFirstGroupOnly), and the tool
// is dropped when the merged decision is a deny that a stage of that group marked
// MetaHidesTool. A first-group stage runs for every call
// (no earlier stage's final allow can skip it) and a deny outweighs every other verdict, so
// such a deny answers every call of that tool by that principal, whatever its arguments: a
// hidden tool is one the principal cannot call. Nothing is recorded (no call was made).
// In observe mode, with tools_list.hide_denied: false, or on any error the result is returned
// unchanged.
func (e *Engine) visibleTools(ctx context.Context, o *Outcome, result json.RawMessage) json.RawMessage {
	list := o.Envelope
	if o.Chain.Observing() || !o.Chain.HidesDenied() || len(result) == 0 {
		return result
	}
	first := firstGroup(o.Chain)
	if len(first) == 0 {
		return result
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return result
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(res["tools"], &tools); err != nil || len(tools) == 0 {
		return result
	}
	kept := tools[:0:0]
	for _, t := range tools {
		var tool struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &tool) != nil || tool.Name == "" || e.mayCall(ctx, o.Chain, first, list, tool.Name) {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(tools) {
		return result
	}
	res["tools"], _ = json.Marshal(kept)
	b, err := json.Marshal(res)
	if err != nil {
		return result
	}
	who := ""
	if list.Principal != nil {
		who = list.Principal.Subject
	}
	e.o.Logger.Debug("tools hidden from the caller", "upstream", list.Server, "principal", who, "hidden", len(tools)-len(kept))
	return b
}

// mayCall reports whether a tools/call of name by list's caller could be allowed for some
// arguments (see visibleTools); false only for a first-group MetaHidesTool deny.
func (e *Engine) mayCall(ctx context.Context, ch *chain.Chain, first map[string]bool, list *abi.Envelope, name string) bool {
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": map[string]any{}})
	env, err := mcp.NewEnvelope(&mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`0`), Method: mcp.MethodToolsCall, Params: params},
		mcp.Context{Transport: list.Transport, Server: list.Server, Session: list.Session, Agent: list.Agent, Cwd: list.Cwd,
			Client: list.Client, Principal: list.Principal})
	if err != nil {
		return true
	}
	env.Time, env.Engine = list.Time, list.Engine
	d, err := ch.Evaluate(chain.WithFirstGroupOnly(ctx), env) // no judge, no later stage
	if err != nil || d.Action != abi.ActionDeny || !first[d.Stage] {
		return true
	}
	for _, r := range d.Stages {
		if r.Stage != d.Stage || r.Action != abi.ActionDeny || r.Observe || r.Verdict == nil || len(r.Verdict.Metadata) == 0 {
			continue
		}
		var meta map[string]any
		if json.Unmarshal(r.Verdict.Metadata, &meta) == nil && meta[MetaHidesTool] == true {
			return false
		}
	}
	return true
}

// firstGroup names the stages of the chain's first group: those before the first stage that
// reads earlier verdicts (chain.Stage.NeedsPrior), which therefore run on every call they match.
func firstGroup(ch *chain.Chain) map[string]bool {
	m := map[string]bool{}
	for i, s := range ch.Stages() {
		if i > 0 && s.NeedsPrior {
			break
		}
		if !s.Observe {
			m[s.Name] = true
		}
	}
	return m
}
