package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Claude Code PreToolUse hook contract (https://code.claude.com/docs/en/hooks): the hook reads
// one JSON object on stdin and, on exit 0, prints
// {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow|deny|ask",
// "permissionDecisionReason": "..."}}, or nothing to leave the call to Claude Code's own
// permission flow. "allow" skips Claude Code's prompt. Exit 2 blocks the call with stderr as the
// reason; any other non-zero exit is a non-blocking error (the call proceeds), so Palisade never
// exits 1 from the hook.
const (
	HookEventPreToolUse = "PreToolUse"
	HookTransport       = "hook"
	HookAgent           = "claude-code"
	// HookPath is where a gateway serves hook decisions (POST the hook JSON, get the hook output).
	HookPath = "/v1/hook"
)

// ErrHookInput marks hook input Palisade cannot judge (not JSON, wrong event, no tool).
var ErrHookInput = errors.New("hook: invalid input")

// HookInput is Claude Code's PreToolUse hook input.
type HookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd,omitempty"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	// Principal is who is calling, as the transport verified it (never read from the input):
	// the access token's principal on the gateway's /v1/hook, authn.LocalPrincipal in process;
	// nil = the engine's caller on the socket, or unknown.
	Principal *abi.Principal `json:"-"`
}

// ParseHookInput decodes and validates hook input. Errors wrap ErrHookInput.
func ParseHookInput(b []byte) (*HookInput, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty stdin (expected Claude Code's PreToolUse JSON)", ErrHookInput)
	}
	// The strict scan first: it refuses ambiguous keys and deep nesting before anything is built.
	if err := mcp.Check(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHookInput, err)
	}
	var in HookInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrHookInput, err)
	}
	if in.HookEventName != "" && in.HookEventName != HookEventPreToolUse {
		return nil, fmt.Errorf("%w: hook_event_name %q: palisade hook handles PreToolUse only", ErrHookInput, in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, fmt.Errorf("%w: tool_name is missing", ErrHookInput)
	}
	if t := bytes.TrimSpace(in.ToolInput); len(t) > 0 && t[0] != '{' && string(t) != "null" {
		return nil, fmt.Errorf("%w: tool_input must be an object", ErrHookInput)
	}
	return &in, nil
}

// SplitMCPTool splits Claude Code's MCP tool name mcp__<server>__<tool> at the first "__"; ok
// is false for a built-in tool.
//
// # Notes
//
// A server or tool name may itself contain "__", so one name can stand for several (server,
// tool) pairs: use MCPCandidates to get every reading, never this one alone, to decide a call.
func SplitMCPTool(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// MCPTool is one reading of a Claude Code MCP tool name.
type MCPTool struct {
	Server string // the configured server name (as in .mcp.json or the gateway's upstreams)
	Tool   string
}

// MCPCandidates returns every (server, tool) pair the Claude Code tool name
// mcp__<server>__<tool> can stand for, resolved against the configured server names: the
// readings whose server part is a configured server (compared the way Claude Code writes it:
// characters other than letters, digits, _ and - become _), or, when none is, every split at
// a "__". It returns nil for a name that is not an MCP tool name (built-in tools).
func MCPCandidates(name string, servers []string) []MCPTool {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return nil
	}
	var splits []MCPTool
	for i := 0; i+2 <= len(rest); i++ {
		if rest[i] == '_' && rest[i+1] == '_' && i > 0 && i+2 < len(rest) {
			splits = append(splits, MCPTool{Server: rest[:i], Tool: rest[i+2:]})
		}
	}
	var known []MCPTool
	for _, sp := range splits {
		for _, s := range servers {
			if NormalizeMCPName(s) == sp.Server {
				known = append(known, MCPTool{Server: s, Tool: sp.Tool})
			}
		}
	}
	if len(known) > 0 {
		return dedupTools(known)
	}
	return splits
}

func dedupTools(ts []MCPTool) []MCPTool {
	out := ts[:0:0]
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// NormalizeMCPName is a server name as Claude Code writes it into tool names: every character
// other than an ASCII letter, digit, _ or - becomes _.
func NormalizeMCPName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Envelope maps the hook input to a tools/call request envelope for one reading of its tool:
// built-in tools keep their name (Bash, Read, Edit, ...) and mt is ignored; MCP tools carry
// mt's server and tool. The call is written as a JSON-RPC message and read back through
// mcp.Parse, like every other way in. Envelopes returns one per reading.
func (in *HookInput) Envelope(mt *MCPTool) (*abi.Envelope, error) {
	tool, server := in.ToolName, ""
	if mt != nil {
		server, tool = mt.Server, mt.Tool
	}
	args := bytes.TrimSpace(in.ToolInput)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	id := json.RawMessage("null")
	if in.ToolUseID != "" {
		id, _ = json.Marshal(in.ToolUseID)
	}
	name, _ := json.Marshal(tool)
	b := make([]byte, 0, 96+len(id)+len(name)+len(args))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = append(b, name...)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	b = append(b, "}}"...)
	p, err := mcp.Parse(b, mcp.Context{Transport: HookTransport, Server: server, Session: in.SessionID, Agent: HookAgent, Cwd: in.Cwd, Principal: in.Principal})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHookInput, err)
	}
	if in.ToolUseID == "" {
		p.Envelope.RequestID = nil
	}
	return p.Envelope, nil
}

// Envelopes returns the envelopes to judge for the hook input: one for a built-in tool, one per
// reading of an MCP tool name (MCPCandidates against servers).
func (in *HookInput) Envelopes(servers []string) ([]*abi.Envelope, error) {
	cands := MCPCandidates(in.ToolName, servers)
	if len(cands) == 0 {
		env, err := in.Envelope(nil)
		if err != nil {
			return nil, err
		}
		return []*abi.Envelope{env}, nil
	}
	out := make([]*abi.Envelope, len(cands))
	for i := range cands {
		env, err := in.Envelope(&cands[i])
		if err != nil {
			return nil, err
		}
		out[i] = env
	}
	return out, nil
}

// HookOutput is what the hook prints on stdout. A nil HookSpecificOutput is "no decision":
// Claude Code's own permission flow (its allow, ask and deny rules and its prompt) applies.
type HookOutput struct {
	HookSpecificOutput *HookDecision `json:"hookSpecificOutput,omitempty"`
}

// Decision returns the permission decision, "" when the hook has none.
func (o HookOutput) Decision() string {
	if o.HookSpecificOutput == nil {
		return ""
	}
	return o.HookSpecificOutput.PermissionDecision
}

// Reason returns the decision's reason, "" when the hook has none.
func (o HookOutput) Reason() string {
	if o.HookSpecificOutput == nil {
		return ""
	}
	return o.HookSpecificOutput.PermissionDecisionReason
}

// HookAnswer returns a hook output with decision (allow, deny or ask) and reason.
func HookAnswer(decision, reason string) HookOutput {
	return HookOutput{HookSpecificOutput: &HookDecision{HookEventName: HookEventPreToolUse, PermissionDecision: decision, PermissionDecisionReason: reason}}
}

// HookDecision is the PreToolUse decision.
type HookDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"` // allow, deny or ask
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// HookOptions configure how the engine answers Claude Code's hook.
type HookOptions struct {
	// AllowStages name the stages whose allow verdict, with a rule, is an explicit allow: only
	// then does the hook answer allow (Claude Code then skips its prompt). An allow from any
	// other stage (a risk score that found no signals), the bundle's default action or a
	// fallback is no opinion: the hook answers nothing. nil = DefaultHookAllowStages.
	AllowStages []string
	// Servers are MCP server names known besides Claude Code's own configuration (the
	// gateway's upstreams); MCP tool names are resolved against both.
	Servers []string
	// Home is where ~/.claude.json is read from; "" = the user's home directory, "-" = nowhere.
	Home string
}

// DefaultHookAllowStages is HookOptions.AllowStages when unset: the policy rules stage.
var DefaultHookAllowStages = []string{"rules"}

// Hook decides one hook input: it runs the request phase through the engine for every reading
// of the tool name, records one audit event per reading and returns the strictest answer:
//
//   - deny when a stage denied (or ask/sample resolved to deny by the bundle's fallback);
//   - ask when a stage asked and no earlier grant resolved it: Claude Code asks the person.
//     A hook call is never held in the approvals queue (Claude Code's prompt is the hook's
//     human channel, and the hook could not wait for another); a grant a person gave through
//     approvals (scope session or minutes, Granter) still applies;
//   - allow only when an explicit allow rule matched (a stage in HookOptions.AllowStages
//     answered allow with a rule) or a person's grant allowed the call;
//   - otherwise no decision (HookOutput{}): Claude Code's own permission flow applies, so
//     installing the hook never makes the agent less guarded.
func (e *Engine) Hook(ctx context.Context, in *HookInput) (HookOutput, error) {
	var servers []string
	if strings.HasPrefix(in.ToolName, "mcp__") { // read Claude Code's config only for MCP tools
		servers = append(append(servers, e.o.Hook.Servers...), ClaudeMCPServers(in.Cwd, e.o.Hook.Home)...)
	}
	envs, err := in.Envelopes(servers)
	if err != nil {
		return HookOutput{}, fmt.Errorf("hook %s: %w", in.ToolName, err)
	}
	var (
		best     HookOutput
		bestRank = -1
	)
	self := e.hookSelf(ctx, in.Cwd)
	for _, env := range envs {
		env.Engine = self
		// The hook's exchange ends at the request: Claude Code runs the tool itself, so nothing
		// is forwarded and no answer comes back to judge. It is never held: Claude Code asks
		// the person.
		x, err := e.begin(ctx, env, nil, nil, false)
		if err != nil {
			return HookOutput{}, fmt.Errorf("hook %s: %w", in.ToolName, err)
		}
		o := x.Outcome
		decision := e.hookDecision(o)
		if decision == abi.ActionAsk {
			o.Action = abi.ActionAsk // the audit event says Claude Code asked
		}
		if o.Detail == nil {
			o.Detail = map[string]any{}
		}
		o.Detail["hook_decision"] = hookWord(decision)
		if len(envs) > 1 {
			o.Detail["mcp_readings"] = len(envs)
		}
		var out HookOutput
		if decision != "" {
			out = HookAnswer(decision, hookReason(o, decision))
		}
		x.Finish(ctx)
		if r := hookRank(decision); r > bestRank {
			best, bestRank = out, r
		}
	}
	return best, nil
}

// hookSelf is the engine's own paths for a hook call: EngineOptions.Self plus the Claude Code
// files of the call's project (its settings, where the hook is installed, and its MCP
// servers), which only the hook input's cwd names.
func (e *Engine) hookSelf(ctx context.Context, cwd string) *abi.Engine {
	c, asked := CallerFrom(ctx)
	if e.o.Self == nil || (!filepath.IsAbs(cwd) && !asked) {
		return e.o.Self
	}
	s := *e.o.Self
	s.Paths = append([]string(nil), s.Paths...)
	if asked && c.Home != "" {
		// Asked over the engine socket: ~ is the caller's home (the kernel's uid, the system's
		// home for it), and the caller's Claude Code settings are among the files that launch
		// the guard. The engine's own home is not the agent's.
		s.Home = c.Home
		s.Paths = append(s.Paths, filepath.Join(c.Home, ".claude", "settings.json"), filepath.Join(c.Home, ".claude", "settings.local.json"))
	}
	if filepath.IsAbs(cwd) {
		s.Paths = append(s.Paths, ClaudeProjectFiles(cwd)...)
	}
	return &s
}

// ClaudeProjectFiles are the files under a project folder that configure Claude Code there:
// the settings files `palisade hook install` writes the hook into, and the project's MCP
// servers (.mcp.json, which `palisade wrap` rewrites).
func ClaudeProjectFiles(dir string) []string {
	return []string{
		filepath.Join(dir, ".claude", "settings.json"),
		filepath.Join(dir, ".claude", "settings.local.json"),
		filepath.Join(dir, ".mcp.json"),
	}
}

func hookWord(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

// hookRank orders hook answers from the most permissive to the strictest.
func hookRank(d string) int {
	switch d {
	case abi.ActionAllow:
		return 0
	case "":
		return 1
	case abi.ActionAsk:
		return 2
	}
	return 3 // deny
}

// hookDecision maps an outcome to the hook's answer ("" = no decision).
func (e *Engine) hookDecision(o *Outcome) string {
	if o.Requested == abi.ActionAsk && o.Approval == nil && o.Decision.Action == abi.ActionAsk {
		return abi.ActionAsk // no Approver here (or none resolved it) and no hook overruled it
	}
	if o.Action != abi.ActionAllow {
		return abi.ActionDeny // a stage, a hook (pinning), a person, or a deny default/fallback
	}
	if o.Approval != nil && o.Approval.Action == abi.ActionAllow {
		return abi.ActionAllow // a person approved it
	}
	if o.Decision.Default || o.Requested != abi.ActionAllow {
		return "" // the bundle's allow default or an allow fallback: no opinion
	}
	allow := e.o.Hook.AllowStages
	if allow == nil {
		allow = DefaultHookAllowStages
	}
	for _, s := range o.Decision.Stages {
		if s.Action == abi.ActionAllow && s.Rule != "" && s.Error == "" && slices.Contains(allow, s.Stage) {
			return abi.ActionAllow
		}
	}
	return ""
}

func hookReason(o *Outcome, decision string) string {
	d := o.Decision
	reason := d.Reason
	if o.Approval != nil && o.Approval.Reason != "" {
		reason = o.Approval.Reason
	}
	var b strings.Builder
	switch decision {
	case abi.ActionDeny:
		b.WriteString("Palisade denied this call")
	case abi.ActionAsk:
		b.WriteString("Palisade asks for approval")
	default:
		b.WriteString("Palisade allowed this call")
	}
	if reason != "" {
		b.WriteString(": " + reason)
	}
	var refs []string
	if d.Rule != "" {
		refs = append(refs, "rule "+d.Rule)
	}
	if d.Stage != "" {
		refs = append(refs, "stage "+d.Stage)
	}
	refs = append(refs, "audit "+o.AuditID)
	b.WriteString(" (" + strings.Join(refs, ", ") + ")")
	return b.String()
}

func ValidHookDecision(d string) bool {
	return d == abi.ActionAllow || d == abi.ActionDeny || d == abi.ActionAsk
}
