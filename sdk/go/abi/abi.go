// Package abi holds the Palisade plugin ABI v1 types: the envelope the host hands to a plugin's
// evaluate export and the verdict the plugin returns. It is pure Go (no go-pdk), so both the host
// and native plugin tests use the same types. See sdk/ABI.md.
package abi

import "encoding/json"

// Version is the envelope schema version this package implements: the shape of the envelope,
// verdict, describe and host-function JSON (sdk/ABI.md "Versions"). The host writes it as the
// envelope's abi and accepts a plugin whose describe states the same major and a minor no newer.
// The call convention (direct, or Extism compatibility) is versioned apart and is not in it.
const Version = "1.2"

// Phases.
const (
	PhaseRequest  = "request"
	PhaseResponse = "response"
)

// Actions, in increasing severity (see Severity).
const (
	ActionNone   = "none"
	ActionAllow  = "allow"
	ActionSample = "sample"
	ActionAsk    = "ask"
	ActionDeny   = "deny"
	// ActionUncertain is a verdict only, never a decision: the stage found something a careful
	// reviewer would ask about rather than refuse. The host maps it per way in (bundle.yaml
	// uncertain:, default ask) before merging, so the chain's decision is ask, deny or sample
	// and the stage's result says uncertain.
	ActionUncertain = "uncertain"
)

// Severity orders actions for merging: deny > ask > sample > allow > none.
// Unknown actions rank as none.
func Severity(action string) int {
	switch action {
	case ActionAllow:
		return 1
	case ActionSample:
		return 2
	case ActionAsk, ActionUncertain: // uncertain ranks as ask where nothing maps it
		return 3
	case ActionDeny:
		return 4
	}
	return 0
}

// ValidAction reports whether a is one of the five actions.
func ValidAction(a string) bool {
	switch a {
	case ActionNone, ActionAllow, ActionSample, ActionAsk, ActionDeny:
		return true
	}
	return false
}

// Client names the MCP client (from initialize's clientInfo).
type Client struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Prior is the verdict of a stage that ran earlier for the same message.
type Prior struct {
	Stage  string   `json:"stage"`
	Action string   `json:"action"`
	Score  float64  `json:"score,omitempty"`
	Labels []string `json:"labels,omitempty"`
	Rule   string   `json:"rule,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Guidance is the stage verdict's guidance (set by a sample verdict), for the judge stage.
	Guidance string `json:"guidance,omitempty"`
}

// Envelope is one MCP message as plugins see it.
type Envelope struct {
	ABI             string          `json:"abi"`
	ID              string          `json:"id"`
	Phase           string          `json:"phase"`
	Time            string          `json:"time,omitempty"`
	Transport       string          `json:"transport,omitempty"`
	Method          string          `json:"method"`
	RequestID       json.RawMessage `json:"request_id,omitempty"`
	Server          string          `json:"server,omitempty"`
	Session         string          `json:"session,omitempty"`
	ProtocolVersion string          `json:"protocol_version,omitempty"`
	Client          *Client         `json:"client,omitempty"`
	Agent           string          `json:"agent,omitempty"`
	Cwd             string          `json:"cwd,omitempty"`
	Tool            string          `json:"tool,omitempty"`
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	URI             string          `json:"uri,omitempty"`
	Prompt          string          `json:"prompt,omitempty"`
	Params          json.RawMessage `json:"params,omitempty"`
	Result          json.RawMessage `json:"result,omitempty"`
	Error           json.RawMessage `json:"error,omitempty"`
	Prior           []Prior         `json:"prior,omitempty"`
	// ToolInfo describes the called tool (since ABI 1.1): filled by the host where it knows the
	// tool's definition; nil otherwise, and plugins then judge from Tool and argument names.
	ToolInfo *ToolInfo `json:"tool_info,omitempty"`
	// Engine names the host's own files (since ABI 1.1), so a stage can refuse a call that
	// reads or changes them; nil when the host does not say (policy fixtures, the playground).
	Engine *Engine `json:"engine,omitempty"`
	// Principal is who is calling (since ABI 1.1): the identity the host verified (an OAuth
	// access token on HTTP, the OS user in the local modes). Only the host sets it; nil when
	// the host knows no identity (an unauthenticated endpoint, policy fixtures that give none).
	Principal *Principal `json:"principal,omitempty"`
}

// Principal is the verified identity of the caller (since ABI 1.1). The host sets it from a
// token it checked (issuer, signature, audience, expiry) or, in the local modes, to
// {issuer: "local", subject: OS user name}; a plugin may trust it and never sets it.
type Principal struct {
	// Issuer is the token's `iss` (the authorization server), or "local".
	Issuer string `json:"issuer"`
	// Subject is the token's `sub` (a user or a client), or the OS user name.
	Subject string `json:"subject"`
	// ClientID is the OAuth client the token was issued to (`client_id`, `azp`), when known.
	ClientID string `json:"client_id,omitempty"`
	// Scopes are the token's granted scopes.
	Scopes []string `json:"scopes,omitempty"`
	// Claims are the token claims the gateway is configured to copy (authn `claims`, e.g.
	// groups), by claim name, with their JSON values.
	Claims map[string]any `json:"claims,omitempty"`
}

// Engine is where the host's own files are (since ABI 1.1): its data dir and keys, the bundle
// it runs and its staged copy, its config, sockets, binary and the agent settings that launch
// it. A stage that refuses calls touching them (plugins/rules `engine_paths`) reads this, so
// the guard does not depend on where the engine was installed.
type Engine struct {
	// Binary is the running host's executable (absolute); its base name is how a shell
	// command names it ("palisade").
	Binary string `json:"binary,omitempty"`
	// Home is the user's home folder, for `~` and `$HOME` in arguments.
	Home string `json:"home,omitempty"`
	// Paths are absolute, cleaned paths; a folder covers everything below it, and a path
	// element may be a glob (`*`, `?`, `[...]`) matching one element (a staged copy's
	// random name).
	Paths []string `json:"paths,omitempty"`
	// Pids are the engine's own process ids (since 1.2): a command that signals one of them
	// (`kill -9 4242`) stops or pauses the guard, whatever name it uses.
	Pids []int `json:"pids,omitempty"`
}

// ToolInfo is what the host knows about the tool a tools/call names (since ABI 1.1): the
// definition from the server's tools/list answer, or for a client's built-in tool (Claude Code's
// Bash, Read, Write...) its name alone.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// BuiltIn is true for a tool of the client itself (a hook call), not of an MCP server.
	BuiltIn bool `json:"built_in,omitempty"`
}

// Evidence is one piece of matched input supporting a verdict.
type Evidence struct {
	Label string `json:"label,omitempty"`
	Path  string `json:"path,omitempty"`
	Match string `json:"match,omitempty"`
	// Rules are the stage's own rules that found it (plugins/injection:
	// `command_injection/shell/priv/sudo`): what an exclusion can name more narrowly than the
	// label (sdk/go/exclude).
	Rules []string `json:"rules,omitempty"`
}

// Verdict is what a plugin's evaluate export returns.
type Verdict struct {
	Action       string          `json:"action"`
	Reason       string          `json:"reason,omitempty"`
	Rule         string          `json:"rule,omitempty"`
	Score        float64         `json:"score,omitempty"`
	Labels       []string        `json:"labels,omitempty"`
	Evidence     []Evidence      `json:"evidence,omitempty"`
	Final        bool            `json:"final,omitempty"`
	Guidance     string          `json:"guidance,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	RequireToken bool            `json:"require_token,omitempty"`
	Fallback     string          `json:"fallback,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	// Incomplete is true when the plugin could not examine everything it should have (a limit
	// stopped a scanner, since ABI 1.1). The host treats such a verdict, unless it denies, by the
	// stage's failure mode: closed = deny, open = the verdict as given.
	Incomplete bool `json:"incomplete,omitempty"`
}

// StageResult is one stage's part in a decision, as the host records it: the chain fills one per
// stage that ran, the audit event carries them (sdk/schema/audit-event.schema.json, "stages"), and
// the playground and approval requests show them. It is the only stage-result type in Palisade.
//
// # Notes
//
// Verdict is host-side only (never encoded): the verdict as the plugin returned it, nil when the
// stage failed. Evidence is encoded where the host shows it to people who may see the arguments
// (playground, approvals); the audit event drops it, since a match can be the secret itself.
type StageResult struct {
	Stage     string   `json:"stage"`
	Phase     string   `json:"phase,omitempty"`  // request or response
	Action    string   `json:"action,omitempty"` // none when it had no opinion
	Score     float64  `json:"score,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Rule      string   `json:"rule,omitempty"`
	LatencyUS int64    `json:"latency_us,omitempty"`
	Error     string   `json:"error,omitempty"`   // trap, timeout, bad output
	Skipped   bool     `json:"skipped,omitempty"` // did not match; Wasm not entered
	// Observe marks a stage in observe mode: its verdict is recorded, not merged (enforces
	// nothing).
	Observe bool `json:"observe,omitempty"`
	// Uncertain marks a stage that answered uncertain: Action is what the bundle mapped it to
	// for this way in (bundle.yaml uncertain:).
	Uncertain bool       `json:"uncertain,omitempty"`
	Evidence  []Evidence `json:"evidence,omitempty"`
	Verdict   *Verdict   `json:"-"`
}

// Describe is what a plugin's optional describe export returns.
type Describe struct {
	Name         string   `json:"name"`
	Version      string   `json:"version,omitempty"`
	ABI          string   `json:"abi"`
	Phases       []string `json:"phases,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Input is what evaluate takes: InputEnvelope (the JSON envelope; "" means the same) or
	// InputView (the view, sdk/ABI.md "The view"), in the layout version View names.
	Input string `json:"input,omitempty"`
	// View is the view layout version the plugin reads, with Input InputView.
	View int `json:"view,omitempty"`
}

// SampleRequest is the input of the sample host function.
type SampleRequest struct {
	Guidance  string          `json:"guidance,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Server    string          `json:"server,omitempty"`
	Context   string          `json:"context,omitempty"`
}

// SampleResponse is the output of the sample host function.
type SampleResponse struct {
	Decision   string   `json:"decision,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	Reasons    []string `json:"reasons,omitempty"`
	Provider   string   `json:"provider,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// InferRequest is the input of the infer host function.
type InferRequest struct {
	Model string   `json:"model"`
	Texts []string `json:"texts"`
}

// InferResult is the model's answer for one text.
type InferResult struct {
	Label  string             `json:"label"`
	Score  float64            `json:"score"`
	Scores map[string]float64 `json:"scores,omitempty"`
}

// InferResponse is the output of the infer host function.
type InferResponse struct {
	Model   string        `json:"model,omitempty"`
	Results []InferResult `json:"results,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// KVRequest is the input of the kv host function.
type KVRequest struct {
	Op    string `json:"op"`
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
	Delta int64  `json:"delta,omitempty"`
	TTLMS int64  `json:"ttl_ms,omitempty"`
}

// KVResponse is the output of the kv host function.
type KVResponse struct {
	Found bool   `json:"found,omitempty"`
	Value string `json:"value,omitempty"`
	Count int64  `json:"count,omitempty"`
	Error string `json:"error,omitempty"`
}
