package proxy

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/added060/palisade/host/internal/sse"
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
	p, err := mcp.Parse(b, mcp.Context{Transport: HookTransport, Server: server, Session: in.SessionID, Agent: HookAgent, Cwd: in.Cwd})
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
	self := e.hookSelf(in.Cwd)
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
func (e *Engine) hookSelf(cwd string) *abi.Engine {
	if e.o.Self == nil || !filepath.IsAbs(cwd) {
		return e.o.Self
	}
	s := *e.o.Self
	s.Paths = append(append([]string(nil), s.Paths...), ClaudeProjectFiles(cwd)...)
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

// HookErrorHeader names, on a HookHandler answer, why the gateway could not judge the call
// (HookErrInput, HookErrAuth, HookErrNoBundle, HookErrInternal); absent when it judged it.
const HookErrorHeader = "Palisade-Hook-Error"

// Values of HookErrorHeader.
const (
	HookErrInput    = "invalid-input"
	HookErrAuth     = "unauthorized"
	HookErrNoBundle = "no-bundle"
	HookErrInternal = "internal"
	// HookErrBusy: the gateway's memory budget (limits.stream_buffer_bytes) could not cover
	// the input or judging it now; the call is asked, and HookClient decides in process.
	HookErrBusy = "over-budget"
)

// HookHandler serves hook decisions over HTTP, for `palisade hook --gateway URL` and for Claude
// Code's own http hooks: POST the hook input JSON to HookPath, get the HookOutput JSON.
//
// # Notes
//
// Claude Code treats a non-2xx answer from an http hook as a non-blocking error (the call
// proceeds), so every POST is answered 200 with a decision: invalid input is denied, and a call
// the gateway cannot judge (no active bundle, an engine error) is asked. HookErrorHeader says
// which, so HookClient can fall back to deciding in process. A Content-Type other than
// application/json is denied before the engine runs: a web page can POST text/plain without a
// CORS preflight.
//
// The input (at most HookBodyLimit bytes) counts in no memory budget; the gateway serves
// HTTP.HookHandler, whose inputs draw on the budget its MCP traffic shares.
func HookHandler(e *Engine) http.Handler { return hookHandler(e, nil) }

// HookBodyLimit caps one hook input.
const HookBodyLimit = 4 << 20

// HookHandler is proxy.HookHandler on h's engine, with each input, and the memory judging it
// costs (JudgeCost), drawn from h's memory budget until it is answered: an input that does not
// fit is asked (HookErrBusy), never read.
func (h *HTTP) HookHandler() http.Handler { return hookHandler(h.o.Engine, h.budget) }

func hookHandler(e *Engine, budget *sse.Budget) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST the PreToolUse hook JSON", http.StatusMethodNotAllowed)
			return
		}
		// JSON only: a web page can POST text/plain (or a form) to any address without a CORS
		// preflight, but not application/json. Denied before anything runs or is recorded.
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeHook(w, HookErrInput, HookAnswer(abi.ActionDeny, "Palisade refused the hook call: Content-Type must be application/json"))
			return
		}
		body, release, err := budget.ReadAll(r.Body, r.ContentLength, HookBodyLimit)
		defer release()
		switch {
		case errors.Is(err, sse.ErrBudget):
			writeHook(w, HookErrBusy, HookAnswer(abi.ActionAsk, "Palisade could not judge this call now: its input does not fit the gateway's memory budget (limits.stream_buffer_bytes)"))
			return
		case errors.Is(err, sse.ErrTooLarge):
			writeHook(w, HookErrInput, HookAnswer(abi.ActionDeny, fmt.Sprintf("Palisade refused the hook input: over %d bytes", HookBodyLimit)))
			return
		case err != nil:
			writeHook(w, HookErrInput, HookAnswer(abi.ActionDeny, "Palisade could not read the hook input: "+err.Error()))
			return
		}
		in, err := ParseHookInput(body)
		if err != nil {
			writeHook(w, HookErrInput, HookAnswer(abi.ActionDeny, "Palisade refused invalid hook input: "+err.Error()))
			return
		}
		judged := func() {}
		if budget != nil {
			var ok bool
			if judged, ok = holdJudging(budget, JudgeCost(len(body))); !ok {
				writeHook(w, HookErrBusy, HookAnswer(abi.ActionAsk, "Palisade could not judge this call now: judging it does not fit the gateway's memory budget (limits.stream_buffer_bytes)"))
				return
			}
		}
		out, err := e.Hook(r.Context(), in)
		judged()
		if err != nil {
			why := HookErrInternal
			if errors.Is(err, ErrNoChain) {
				why = HookErrNoBundle
			}
			writeHook(w, why, HookAnswer(abi.ActionAsk, "Palisade could not judge this call: "+err.Error()))
			return
		}
		writeHook(w, "", out)
	})
}

// HookAuth guards a hook handler with a bearer token ("" = no check). A missing or wrong token
// is answered 200 with a deny decision (a 401 would let Claude Code's http hook proceed).
func HookAuth(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeHook(w, HookErrAuth, HookAnswer(abi.ActionDeny, "Palisade refused this hook call: missing or wrong bearer token"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeHook(w http.ResponseWriter, why string, out HookOutput) {
	if why != "" {
		w.Header().Set(HookErrorHeader, why)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// ErrGatewayUnreachable marks a hook delegation that never got an answer from the gateway (the
// caller falls back to deciding in process).
var ErrGatewayUnreachable = errors.New("hook: gateway unreachable")

// HookClient asks a running gateway for a hook decision.
type HookClient struct {
	URL     string        // gateway base URL, e.g. http://127.0.0.1:8080
	Token   string        // bearer token; "" = none
	Timeout time.Duration // whole exchange; 0 = 2s
	Client  *http.Client  // nil = a client with Timeout
}

// Decide posts the raw hook input. A transport failure, a non-200 status, an answer that is not
// a hook output, or a gateway that could not judge the call (no bundle, an internal error) wraps
// ErrGatewayUnreachable: the caller decides in process instead. Any other answer is returned as
// is, a deny for invalid input or a wrong token included.
func (c HookClient) Decide(ctx context.Context, input []byte) (HookOutput, error) {
	t := c.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	hc := c.Client
	if hc == nil {
		hc = &http.Client{Timeout: t}
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.URL, "/")+HookPath, bytes.NewReader(input))
	if err != nil {
		return HookOutput{}, fmt.Errorf("%w: %v", ErrGatewayUnreachable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return HookOutput{}, fmt.Errorf("%w: %v", ErrGatewayUnreachable, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return HookOutput{}, fmt.Errorf("%w: %s: %s", ErrGatewayUnreachable, resp.Status, bytes.TrimSpace(body))
	}
	var out HookOutput
	if err := json.Unmarshal(body, &out); err != nil || (out.HookSpecificOutput != nil && !validHookDecision(out.Decision())) {
		return HookOutput{}, fmt.Errorf("%w: gateway answered %q", ErrGatewayUnreachable, body)
	}
	switch why := resp.Header.Get(HookErrorHeader); why {
	case HookErrNoBundle, HookErrInternal, HookErrBusy:
		return HookOutput{}, fmt.Errorf("%w: %s: %s", ErrGatewayUnreachable, why, out.Reason())
	}
	return out, nil
}

func validHookDecision(d string) bool {
	return d == abi.ActionAllow || d == abi.ActionDeny || d == abi.ActionAsk
}
