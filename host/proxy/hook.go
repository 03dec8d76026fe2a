package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Claude Code PreToolUse hook contract (https://code.claude.com/docs/en/hooks): the hook reads
// one JSON object on stdin and, on exit 0, prints
// {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow|deny|ask",
// "permissionDecisionReason": "..."}}. Exit 2 blocks the call with stderr as the reason; any other
// non-zero exit is a non-blocking error.
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
	var in HookInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrHookInput, err)
	}
	if err := AmbiguousKeys(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHookInput, err)
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

// SplitMCPTool splits Claude Code's MCP tool name mcp__<server>__<tool>; ok is false for a
// built-in tool.
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

// Envelope maps the hook input to a tools/call request envelope: built-in tools keep their name
// (Bash, Read, Edit, ...), MCP tools are split into server and tool.
func (in *HookInput) Envelope() *abi.Envelope {
	tool, server := in.ToolName, ""
	if s, t, ok := SplitMCPTool(in.ToolName); ok {
		server, tool = s, t
	}
	args := bytes.TrimSpace(in.ToolInput)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	params, _ := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{tool, args})
	var rid json.RawMessage
	if in.ToolUseID != "" {
		rid, _ = json.Marshal(in.ToolUseID)
	}
	return &abi.Envelope{
		ABI:       abi.Version,
		Phase:     abi.PhaseRequest,
		Transport: HookTransport,
		Method:    mcp.MethodToolsCall,
		RequestID: rid,
		Server:    server,
		Session:   in.SessionID,
		Agent:     HookAgent,
		Cwd:       in.Cwd,
		Tool:      tool,
		Arguments: args,
		Params:    params,
	}
}

// HookOutput is what the hook prints on stdout.
type HookOutput struct {
	HookSpecificOutput HookDecision `json:"hookSpecificOutput"`
}

// HookDecision is the PreToolUse decision.
type HookDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"` // allow, deny or ask
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Hook decides one hook input: it runs the request phase through the engine, records the audit
// event and returns the hook output. An ask verdict that no Approver resolved is handed to Claude
// Code as "ask" (Claude Code asks the person); sample resolves by the bundle's fallback.
func (e *Engine) Hook(ctx context.Context, in *HookInput) (HookOutput, error) {
	o, err := e.Request(ctx, in.Envelope())
	if err != nil {
		return HookOutput{}, fmt.Errorf("hook %s: %w", in.ToolName, err)
	}
	decision := o.Action
	if o.Requested == abi.ActionAsk && o.Approval == nil {
		decision = abi.ActionAsk
		o.Action = abi.ActionAsk // the audit event says Claude Code asked
	}
	out := HookOutput{HookSpecificOutput: HookDecision{
		HookEventName:            HookEventPreToolUse,
		PermissionDecision:       decision,
		PermissionDecisionReason: hookReason(o, decision),
	}}
	o.Finish(ctx)
	return out, nil
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

// HookHandler serves hook decisions over HTTP for `palisade hook --gateway URL`: POST the hook
// input JSON to HookPath, get the HookOutput JSON. A Content-Type other than application/json is
// 415, bad input 400, no active bundle 503.
func HookHandler(e *Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST the PreToolUse hook JSON", http.StatusMethodNotAllowed)
			return
		}
		// JSON only: a web page can POST text/plain (or a form) to any address without a CORS
		// preflight, but not application/json.
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in, err := ParseHookInput(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := e.Hook(r.Context(), in)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, ErrNoChain) {
				code = http.StatusServiceUnavailable
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
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

// Decide posts the raw hook input. A transport failure or a 5xx wraps ErrGatewayUnreachable; a
// 4xx (the gateway judged the input invalid) is returned as a plain error.
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
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusNotFound:
		return HookOutput{}, fmt.Errorf("%w: %s: %s", ErrGatewayUnreachable, resp.Status, bytes.TrimSpace(body))
	case resp.StatusCode != http.StatusOK:
		return HookOutput{}, fmt.Errorf("hook: gateway: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	var out HookOutput
	if err := json.Unmarshal(body, &out); err != nil || !validHookDecision(out.HookSpecificOutput.PermissionDecision) {
		return HookOutput{}, fmt.Errorf("%w: gateway answered %q", ErrGatewayUnreachable, body)
	}
	return out, nil
}

func validHookDecision(d string) bool {
	return d == abi.ActionAllow || d == abi.ActionDeny || d == abi.ActionAsk
}
