package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
	"go.opentelemetry.io/otel/trace"
)

// Recorder receives audit events (host/audit.Publisher implements it).
type Recorder interface {
	Record(ctx context.Context, ev audit.Event)
}

// Approver holds a call whose verdict is ask until a person decides (host/approval implements
// it). Hold blocks until a decision, the approval's timeout, or ctx's end.
type Approver interface {
	Hold(ctx context.Context, h Held) (Resolution, error)
}

// Granter is an Approver that can also resolve a call by a grant a person gave earlier,
// without holding it. The hook path uses it: Claude Code's own prompt is the person there, so a
// hook call is never held (see Engine.Hook).
type Granter interface {
	Granted(ctx context.Context, h Held) (Resolution, bool)
}

// Held is a call waiting for a person.
type Held struct {
	AuditID  string
	Envelope *abi.Envelope
	Decision *chain.Decision
	// Bundle is the bundle whose chain asked: an approval is released only while it is still
	// the active one.
	Bundle chain.Info
	// Progress, when the client gave a progress token, sends a notifications/progress message
	// so the client does not time out unnoticed; nil otherwise.
	Progress func(message string)
	// Ask, when the transport can put the call to the person at the client (an elicitation on
	// the call's own stream: approvals.ask_client), asks there and returns their answer; it
	// returns an error when there is none (no answer, a client error, a URL-mode prompt that
	// only opened the approval page), and the call keeps waiting in the queue. nil = the queue
	// only.
	Ask func(ctx context.Context, h Held) (Answer, error)
	// Waiting, when set, is called by the Approver once the call starts waiting for a person:
	// after any earlier grant that could resolve it, before it is queued. The engine records
	// the call's held record then (audit.KindHeld), so a call a grant lets through at once
	// leaves none. nil = nothing to call.
	Waiting func()
}

// Answer is the answer of the person at the client to Held.Ask.
type Answer struct {
	Action string // allow or deny
	By     string // who answered: the session's principal, or the client's name
	Reason string
	Via    string // how: "elicitation"
}

// Resolution is how a held call was decided.
type Resolution struct {
	Action    string // allow or deny
	DecidedBy string // who decided ("timeout" when nobody did)
	Reason    string
	Scope     string // once, session, minutes
	ID        string // approval id
	// Via says how the decision came when not through the queue: "elicitation" for an answer
	// in the client (Held.Ask); recorded as detail.via. "" = the queue.
	Via string
}

// ErrNoChain is returned when no bundle is active.
var ErrNoChain = errors.New("proxy: no active bundle")

// EngineOptions configure an Engine.
type EngineOptions struct {
	Active   *chain.Active // required
	Recorder Recorder      // nil = events are dropped (tests only)
	Approver Approver      // nil = ask resolves by the bundle's fallback
	Gateway  string        // instance id recorded in audit events
	// AuditArguments says what events carry of the arguments: "hash" (default), "full", "none".
	AuditArguments string
	Metrics        *Metrics     // nil = none
	Logger         *slog.Logger // nil = discard
	// Hooks let other features act on a decision (token issuance, tool pinning). Each may
	// change the outcome; they run in order after the request phase.
	Hooks []Hook
	// JudgedMethods are the methods that always get a decision and an audit event; other
	// methods (initialize, tools/list, ping, ...) pass unless a stage has an opinion on them.
	// nil = DefaultJudgedMethods.
	JudgedMethods []string
	// Hook configures the answers to Claude Code's PreToolUse hook (Engine.Hook).
	Hook HookOptions
	// Self is where this engine's own files are: put on every request envelope that has none
	// (the `engine` field, ABI 1.1) so a stage can refuse calls that read or change them
	// (plugins/rules `engine_paths`). nil = envelopes carry none.
	Self *abi.Engine
	// Unsigned says the events this engine records carry no signature: a one-process mode
	// deciding without the engine process and without a bus identity. Every event says so
	// (detail.unsigned), so the record never passes one off as the engine's.
	Unsigned bool
	// Shadow, when it holds a shadow chain, judges each recorded call again with the shadow
	// bundle off the hot path and records the event with both verdicts (shadow.go). nil = none.
	Shadow *Shadow
}

// DefaultJudgedMethods are the methods a call is judged on by default.
var DefaultJudgedMethods = []string{
	mcp.MethodToolsCall, mcp.MethodResourcesRead, mcp.MethodPromptsGet, mcp.MethodSampling, mcp.MethodElicitation,
}

// Hook adjusts an outcome after the request phase (before forwarding).
type Hook interface {
	AfterRequest(ctx context.Context, o *Outcome) error
}

// ToolInfoSource knows tool definitions from tools/list (host/pin implements it). A Hook that
// also implements it fills the envelope's tool_info (ABI 1.1) before the request phase.
type ToolInfoSource interface {
	ToolInfo(server, tool string) *abi.ToolInfo
}

// Check is a Hook that can also deny a call before an ask is put to a person or a sample to
// the judge (tool pinning): a person is never shown a call the gateway would refuse after they
// approved it. The Engine calls CheckRequest right after the request phase and AfterRequest
// once the call is resolved.
type Check interface {
	CheckRequest(ctx context.Context, o *Outcome) error
}

// Engine decides messages. It is safe for concurrent use.
type Engine struct {
	o EngineOptions
}

// NewEngine returns an engine.
func NewEngine(o EngineOptions) *Engine {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.JudgedMethods == nil {
		o.JudgedMethods = DefaultJudgedMethods
	}
	return &Engine{o: o}
}

// Judged reports whether method always gets a decision.
func (e *Engine) Judged(method string) bool { return slices.Contains(e.o.JudgedMethods, method) }

// Options returns the engine's options.
func (e *Engine) Options() EngineOptions { return e.o }

// Outcome is one message's decision, carried from the request phase to the audit event.
type Outcome struct {
	AuditID   string
	Envelope  *abi.Envelope
	Action    string // final: allow or deny
	Requested string // what the chain asked (ask, sample, ...) before resolution
	Decision  *chain.Decision
	Response  *chain.Decision // response phase, if it ran
	Approval  *Resolution
	Chain     *chain.Chain
	Upstream  *audit.Upstream
	Detail    map[string]any // free data for the audit event (token hash, fallback, diff, ...)
	Meta      map[string]any // entries hooks add to the forwarded params._meta (execution token)
	// TokenSHA256 is the hash of the execution token attached to the forwarded call (only the
	// hash is audited).
	TokenSHA256 string
	// TraceID is the W3C trace id of the span the request phase ran in (host/proxy starts it
	// when tracing is on); "" without one. The audit event carries it.
	TraceID string
	Start   time.Time
	// Quiet marks a pass-through of an unjudged method that no stage had an opinion on: no
	// audit event is recorded for it.
	Quiet bool

	// own is the active bundle's own action on the request (ownAction), before a person, a
	// judge, a fallback or a hook resolved it, and deny when its response phase denied the
	// answer: what a shadow bundle's verdict on the same call is compared to.
	own string
	// respEnv is the answer's envelope the response phase judged (nil when none ran): the
	// shadow judges it too.
	respEnv  *abi.Envelope
	release  func()
	finished sync.Once
	engine   *Engine
	// upstream and bundle are the memory of Upstream (SetUpstream) and of the event's Bundle
	// (Event): the outcome's own, not an allocation each. Nothing changes an event's Bundle
	// after it is built.
	upstream  audit.Upstream
	bundle    audit.Bundle
	bundleSet bool
}

// SetUpstream sets Upstream to u, held in the outcome's own memory; later changes through
// Upstream (its latency, its error) change that copy.
func (o *Outcome) SetUpstream(u audit.Upstream) {
	o.upstream = u
	o.Upstream = &o.upstream
}

// Deny returns the JSON-RPC error for a denied outcome.
func (o *Outcome) Deny() *mcp.Error {
	reason := o.Decision.Reason
	if o.Approval != nil && o.Approval.Reason != "" {
		reason = o.Approval.Reason
	}
	return mcp.NewError(mcp.CodeDenied, "denied by policy: "+reason, mcp.DenyData{
		Rule: o.Decision.Rule, Stage: o.Decision.Stage, Reason: reason, AuditID: o.AuditID, Action: o.Requested,
	})
}

// Allowed reports whether the call may go upstream.
func (o *Outcome) Allowed() bool { return o.Action == abi.ActionAllow }

// Request runs the request phase for env and resolves ask and sample. The caller must call
// Finish exactly once (it records the audit event and releases the chain).
func (e *Engine) Request(ctx context.Context, env *abi.Envelope) (*Outcome, error) {
	return e.request(ctx, env, true)
}

// request is Request; hold=false never holds an ask for a person (the hook path): a grant
// (Granter) may resolve it, otherwise it stays ask.
func (e *Engine) request(ctx context.Context, env *abi.Envelope, hold bool) (*Outcome, error) {
	return e.requestInto(ctx, new(Outcome), env, hold)
}

// requestInto is request writing its outcome into o, memory the caller made for it (begin makes
// it with its Exchange, one allocation for both); o is returned on success and dropped on error.
func (e *Engine) requestInto(ctx context.Context, o *Outcome, env *abi.Envelope, hold bool) (*Outcome, error) {
	start := time.Now()
	ch, release := e.o.Active.Acquire()
	if ch == nil {
		return nil, ErrNoChain
	}
	if env.ID == "" {
		env.ID = audit.NewID()
	}
	if env.Time == "" {
		env.Time = start.UTC().Format(time.RFC3339Nano)
	}
	if env.Engine == nil {
		env.Engine = e.o.Self
	}
	if env.ToolInfo == nil && env.Tool != "" {
		for _, h := range e.o.Hooks {
			if src, ok := h.(ToolInfoSource); ok {
				if env.ToolInfo = src.ToolInfo(env.Server, env.Tool); env.ToolInfo != nil {
					break
				}
			}
		}
	}
	*o = Outcome{AuditID: env.ID, Envelope: env, Chain: ch, Start: start, release: release, engine: e}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		o.TraceID = sc.TraceID().String()
	}
	if c, ok := CallerFrom(ctx); ok {
		o.Detail = map[string]any{"caller": c}
		if env.Principal == nil {
			// Asked over the engine socket: the kernel's word for who is calling.
			env.Principal = CallerPrincipal(c)
		}
	}
	d, err := ch.Evaluate(ctx, env)
	if err != nil {
		release()
		return nil, err
	}
	o.Decision = d
	o.Requested = d.Action
	o.Action = d.Action
	o.own = ownAction(ch, d, e.Judged(env.Method))
	if d.Coverage != "" && d.Coverage != chain.CoveredByStage {
		o.Detail = map[string]any{"coverage": d.Coverage}
	}
	for _, h := range e.o.Hooks {
		if c, ok := h.(Check); ok {
			if err := c.CheckRequest(ctx, o); err != nil {
				e.o.Logger.Warn("request check failed", "audit_id", o.AuditID, "err", err)
			}
		}
	}
	if o.Decision != d && o.Action == abi.ActionDeny {
		// A check refused the call: nobody is asked about it.
		return e.hooks(ctx, observe(ch, o)), nil
	}
	switch d.Action {
	case abi.ActionAsk:
		if ch.Observing() {
			// Observe mode holds nobody: the event says a person would have been asked.
			o.Action = abi.ActionAsk
			break
		}
		g, granter := e.o.Approver.(Granter)
		if !hold && granter {
			if res, ok := g.Granted(ctx, Held{AuditID: o.AuditID, Envelope: env, Decision: d, Bundle: ch.Info()}); ok {
				o.Approval = &res
				o.Action = res.Action
			} else {
				o.Action = ch.Fallback(abi.ActionAsk)
			}
		} else if e.o.Approver != nil && hold && inputRequired(ctx) {
			// The client is asked by an input_required result and answers by retrying: a
			// standing grant may answer now; otherwise nothing is held.
			if res, ok := grantedFor(ctx, g, granter, Held{AuditID: o.AuditID, Envelope: env, Decision: d, Bundle: ch.Info()}); ok {
				o.Approval = &res
				o.Action = res.Action
				break
			}
			o.Action = abi.ActionAsk
			if o.Detail == nil {
				o.Detail = map[string]any{}
			}
			o.Detail["via"] = ViaInputRequired
		} else if e.o.Approver != nil && hold {
			hctx, wait := startApprovalSpan(ctx)
			var once sync.Once
			waiting := func() { once.Do(func() { e.recordHeld(ctx, o) }) }
			res, err := e.o.Approver.Hold(hctx, Held{AuditID: o.AuditID, Envelope: env, Decision: d, Bundle: ch.Info(), Progress: progressFrom(ctx), Ask: askFrom(ctx), Waiting: waiting})
			if err != nil {
				res = Resolution{Action: abi.ActionDeny, DecidedBy: "gateway", Reason: "approval failed: " + err.Error()}
			}
			wait(res)
			if res.Via != "" {
				if o.Detail == nil {
					o.Detail = map[string]any{}
				}
				o.Detail["via"] = res.Via
			}
			o.Approval = &res
			o.Action = res.Action
		} else {
			o.Action = ch.Fallback(abi.ActionAsk)
		}
	case abi.ActionSample:
		o.Action = ch.Fallback(abi.ActionSample)
	case abi.ActionNone:
		o.Action = ch.DefaultAction()
	}
	if d.Default && !e.Judged(env.Method) {
		o.Action, o.Quiet = abi.ActionAllow, silent(d)
	}
	if o.Action == abi.ActionAsk && ch.Observing() {
		return e.hooks(ctx, observe(ch, o)), nil
	}
	if o.Action == abi.ActionAsk && inputRequired(ctx) {
		return e.hooks(ctx, o), nil // asked in the client: neither allowed nor denied yet
	}
	if o.Action != abi.ActionAllow {
		o.Action = abi.ActionDeny
	}
	return e.hooks(ctx, observe(ch, o)), nil
}

// observe enforces nothing for a bundle in observe mode: an outcome other than allow is
// recorded in the event's detail.observed (what would have happened, and why) and the call goes
// on. Enforcing bundles pass through unchanged.
func observe(ch *chain.Chain, o *Outcome) *Outcome {
	if !ch.Observing() || o.Action == abi.ActionAllow {
		return o
	}
	if o.Detail == nil {
		o.Detail = map[string]any{}
	}
	o.Detail["observed"] = map[string]any{"action": o.Action, "requested": o.Requested,
		"rule": o.Decision.Rule, "stage": o.Decision.Stage, "reason": o.Decision.Reason, "phase": abi.PhaseRequest}
	o.Action, o.Quiet = abi.ActionAllow, false
	return o
}

// silent reports whether d is a pass no stage had anything to say about: no opinion, no
// failure, no rewrite. Such a pass of a message that is not a call (initialize, tools/list, a
// notification) is not recorded; anything else is.
func silent(d *chain.Decision) bool {
	if !d.Default || len(d.Result) > 0 || len(d.Arguments) > 0 {
		return false
	}
	for _, r := range d.Stages {
		if r.Action != abi.ActionNone || r.Error != "" {
			return false
		}
	}
	return true
}

func (e *Engine) hooks(ctx context.Context, o *Outcome) *Outcome {
	for _, h := range e.o.Hooks {
		if err := h.AfterRequest(ctx, o); err != nil {
			e.o.Logger.Warn("decision hook failed", "audit_id", o.AuditID, "err", err)
		}
	}
	return o
}

// Response runs the response phase on the upstream's answer. It returns the decision; when a
// stage replaced the result (redaction), Decision.Result holds the replacement.
func (e *Engine) Response(ctx context.Context, o *Outcome, resp *mcp.Message) (*chain.Decision, error) {
	env := mcp.ResponseEnvelope(o.Envelope, resp)
	if o.engine.o.Shadow.Loaded() {
		cp := *env // the shadow judges the answer as it came, before a stage rewrote it
		o.respEnv = &cp
	}
	d, err := o.Chain.Evaluate(ctx, env)
	if err != nil {
		return nil, err
	}
	if !d.Default && d.Action == abi.ActionDeny {
		o.own = abi.ActionDeny
	}
	if d.Default {
		// No response stage had an opinion: the request decision stands.
		d.Action = abi.ActionAllow
	}
	if a := answerAction(o.Chain, d); a != d.Action {
		// An answer is not held for a person, nor handed to the judge (its stage runs in the
		// request phase): ask and sample resolve by the bundle's fallback, as a call with
		// nobody to hold it does. Passing the answer as it came would make "ask" an allow.
		if o.Detail == nil {
			o.Detail = map[string]any{}
		}
		o.Detail["response_resolved"] = map[string]any{"requested": d.Action, "action": a, "by": "fallback"}
		if a == abi.ActionDeny {
			d.Reason = fmt.Sprintf("%s (an answer cannot be held for a person; fallback.%s is deny)", d.Reason, d.Action)
			o.own = abi.ActionDeny
		}
		d.Action = a
	}
	o.Response = d
	if !silent(d) {
		o.Quiet = false
	}
	if o.Chain.Observing() && (d.Action == abi.ActionDeny || len(d.Result) > 0) {
		// Observe mode: the answer goes on as the upstream sent it; the event says what
		// would have happened to it (denied, or redacted).
		would := d.Action
		if would != abi.ActionDeny {
			would = "redact"
		}
		if o.Detail == nil {
			o.Detail = map[string]any{}
		}
		o.Detail["observed_response"] = map[string]any{"action": would, "rule": d.Rule, "stage": d.Stage, "reason": d.Reason, "phase": abi.PhaseResponse}
		o.Quiet = false
		observed := *d
		observed.Action, observed.Result = abi.ActionAllow, nil
		return &observed, nil
	}
	if d.Action == abi.ActionDeny {
		o.Action = abi.ActionDeny
		o.Decision = &chain.Decision{Action: abi.ActionDeny, Reason: d.Reason, Rule: d.Rule, Stage: d.Stage, Stages: append(o.Decision.Stages, d.Stages...)}
	}
	return d, nil
}

// answerAction is what the response phase's decision d does to the answer under ch: ask and
// sample resolve by the bundle's fallback (an answer is not held for a person, and the judge
// runs in the request phase); any other action stands.
func answerAction(ch *chain.Chain, d *chain.Decision) string {
	if d.Action == abi.ActionAsk || d.Action == abi.ActionSample {
		return ch.Fallback(d.Action)
	}
	return d.Action
}

// ForwardParams returns the params to forward upstream: the original, or with the arguments a
// stage replaced and the _meta entries hooks added.
func (o *Outcome) ForwardParams() (json.RawMessage, bool) {
	params := o.Envelope.Params
	if len(o.Decision.Arguments) == 0 && len(o.Meta) == 0 {
		return params, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	if len(o.Decision.Arguments) > 0 {
		m["arguments"] = o.Decision.Arguments
	}
	if len(o.Meta) > 0 {
		meta := map[string]any{}
		if raw, ok := m["_meta"]; ok {
			_ = json.Unmarshal(raw, &meta)
		}
		for k, v := range o.Meta {
			meta[k] = v
		}
		b, _ := json.Marshal(meta)
		m["_meta"] = b
	}
	b, err := json.Marshal(m)
	if err != nil {
		return params, false
	}
	return b, true
}

// Finish records the audit event for o and releases its chain. Safe to call more than once.
func (o *Outcome) Finish(ctx context.Context) {
	o.finished.Do(func() {
		e := o.engine
		ev := o.Event()
		ev.Gateway = e.o.Gateway
		if e.o.Metrics != nil && !o.Quiet {
			e.o.Metrics.Decision(o.Action, o.Envelope.Server)
		}
		switch {
		case o.Quiet:
		case e.o.Shadow.submit(o, ev, e.o.Recorder):
			// The shadow worker records ev once the shadow bundle judged it (never blocks).
		case e.o.Recorder != nil:
			e.o.Recorder.Record(context.WithoutCancel(ctx), ev)
		}
		if e.o.Logger.Enabled(ctx, slog.LevelDebug) {
			// Asked first: the arguments are boxed (four allocations a call) before slog looks
			// at the level.
			e.o.Logger.Debug("decision", "audit_id", o.AuditID, "action", o.Action, "tool", o.Envelope.Tool, "stage", o.Decision.Stage)
		}
		o.release()
	})
}

// recordHeld records that o's call is held for a person, when it starts waiting (Held.Waiting,
// called by the Approver before it queues the call): the record is complete even if the
// gateway dies while the call waits. It is not the call's decision (that
// event follows when the call ends, with the same audit id the held record names in
// approval.id): kind held, its own id, on its own subject (audit.KindHeld).
func (e *Engine) recordHeld(ctx context.Context, o *Outcome) {
	if e.o.Recorder == nil {
		return
	}
	e.o.Recorder.Record(context.WithoutCancel(ctx), o.HeldEvent())
}

// HeldEvent is the held record of o's call (audit.KindHeld): the call's fields and verdicts as
// its decision event would carry them, action ask, and approval {id: the call's audit id,
// decision: held}.
func (o *Outcome) HeldEvent() audit.Event {
	ev := o.Event()
	ev.ID, ev.Kind, ev.Action = audit.NewID(), audit.KindHeld, abi.ActionAsk
	ev.Time = time.Now().UTC()
	ev.Approval = &audit.Approval{ID: o.AuditID, Decision: audit.ApprovalHeld}
	return ev
}

// Event builds the audit event for o.
func (o *Outcome) Event() audit.Event {
	env := o.Envelope
	info := o.Chain.Info()
	if !o.bundleSet { // written once: an event built before (HeldEvent) may be read meanwhile
		o.bundle, o.bundleSet = audit.Bundle{Name: info.Name, Version: info.Version, Digest: info.Digest}, true
	}
	ev := audit.Event{
		ID:              o.AuditID,
		Time:            o.Start.UTC(),
		Kind:            audit.KindDecision,
		Bundle:          &o.bundle,
		Transport:       env.Transport,
		Method:          env.Method,
		Server:          env.Server,
		Session:         env.Session,
		Agent:           env.Agent,
		Tool:            env.Tool,
		RequestID:       env.RequestID,
		TraceID:         o.TraceID,
		Action:          o.Action,
		RequestedAction: o.Requested,
		Reason:          o.Decision.Reason,
		Rule:            o.Decision.Rule,
		Stage:           o.Decision.Stage,
		LatencyUS:       time.Since(o.Start).Microseconds(),
		Upstream:        o.Upstream,
		TokenSHA256:     o.TokenSHA256,
		Principal:       env.Principal,
	}
	if ev.Tool == "" {
		ev.Tool = env.Prompt
	}
	if ev.Tool == "" {
		ev.Tool = env.URI
	}
	if len(env.Arguments) > 0 {
		ev.ArgumentsSHA256 = audit.ArgumentsHash(env.Arguments)
		if o.engine.o.AuditArguments == "full" {
			ev.Arguments = env.Arguments
		}
	}
	// Both phases' results in one allocation, a copy the loop below may redact in place.
	n := len(o.Decision.Stages)
	respond := o.Response != nil && o.Action != abi.ActionDeny
	if respond {
		n += len(o.Response.Stages)
	}
	if n > 0 {
		ev.Stages = slices.Grow(ev.Stages, n)
	}
	ev.Stages = append(ev.Stages, o.Decision.Stages...)
	if respond {
		ev.Stages = append(ev.Stages, o.Response.Stages...)
	}
	for i := range ev.Stages {
		// A match can be the secret: the audit event keeps where each finding was and why (its
		// path, label and rules; the stage's reason names them anyway), never what matched. Tuning
		// reads them (host/tune: exclusions at the paths of false positives).
		ev.Stages[i].Evidence = evidenceWithoutMatch(ev.Stages[i].Evidence)
	}
	if o.Approval != nil {
		ev.Approval = &audit.Approval{ID: o.Approval.ID, DecidedBy: o.Approval.DecidedBy, Decision: approvalWord(o.Approval.Action, o.Approval.DecidedBy), Scope: o.Approval.Scope}
	}
	detail := o.Detail
	if o.engine.o.Unsigned {
		d := map[string]any{"unsigned": "decided in this process without the engine; the event carries no signature"}
		for k, v := range detail {
			d[k] = v
		}
		detail = d
	}
	if len(info.Degraded) > 0 {
		// Served degraded: every decision says which stages could not run.
		d := map[string]any{"degraded": info.Degraded}
		for k, v := range detail {
			d[k] = v
		}
		detail = d
	}
	if len(detail) > 0 {
		ev.Detail, _ = json.Marshal(detail)
	}
	return ev
}

func approvalWord(action, by string) string {
	switch {
	case by == "timeout":
		return audit.ApprovalTimeout
	case action == abi.ActionAllow:
		return audit.ApprovalApproved
	}
	return audit.ApprovalDenied
}

// Caller is the local process that asked the engine, as the kernel reports it on the engine
// socket (SO_PEERCRED): never what the caller says of itself.
type Caller struct {
	User string `json:"os_user"`
	UID  int    `json:"uid"`
	PID  int    `json:"pid"`
	// Home is the system's home folder for UID (not recorded): what `~` means in the caller's
	// commands.
	Home string `json:"-"`
}

type callerKey struct{}

// WithCaller returns ctx carrying the verified local caller; a decision made under it records
// the caller in its audit event (detail.caller).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// LocalIssuer is the issuer of a principal the engine knows from the operating system
// (authn.LocalIssuer).
const LocalIssuer = "local"

// CallerPrincipal is the principal of a caller on the engine socket: {issuer: "local",
// subject: its OS user} (the uid when the name is unknown), as authn.LocalPrincipal is for a
// process's own user.
func CallerPrincipal(c Caller) *abi.Principal {
	sub := c.User
	if sub == "" {
		sub = strconv.Itoa(c.UID)
	}
	return &abi.Principal{Issuer: LocalIssuer, Subject: sub}
}

// CallerFrom returns the caller WithCaller put in ctx.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

type progressKey struct{}

// WithProgress returns a context carrying a progress sender for held calls.
func WithProgress(ctx context.Context, f func(message string)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

type askKey struct{}

// WithAsk returns a context carrying a way to ask the person at the client about a held call
// (Held.Ask).
func WithAsk(ctx context.Context, f func(ctx context.Context, h Held) (Answer, error)) context.Context {
	return context.WithValue(ctx, askKey{}, f)
}

type inputRequiredKey struct{}

// ViaInputRequired is detail.via of a call put to the person at the client as an
// input_required result (2026-07-28): the client answers by retrying the call.
const ViaInputRequired = "input_required"

// WithInputRequired returns a context saying that the request's client can be asked about it
// with an input_required result (the 2026-07-28 multi round-trip: it answers by retrying the
// call): an ask that no standing grant resolves is not held; the outcome's action stays ask
// (detail.via input_required) for the transport to put the question, and the event says so.
func WithInputRequired(ctx context.Context) context.Context {
	return context.WithValue(ctx, inputRequiredKey{}, true)
}

func inputRequired(ctx context.Context) bool {
	v, _ := ctx.Value(inputRequiredKey{}).(bool)
	return v
}

func askFrom(ctx context.Context) func(context.Context, Held) (Answer, error) {
	f, _ := ctx.Value(askKey{}).(func(context.Context, Held) (Answer, error))
	return f
}

func progressFrom(ctx context.Context) func(string) {
	f, _ := ctx.Value(progressKey{}).(func(string))
	return f
}

// MetaKeyFallback is the _meta key of a result produced by a fallback tool.
const MetaKeyFallback = "palisade/fallback"

// Fallback returns the params of the deterministic fallback call for a denied tools/call whose
// deciding stage named a fallback tool (e.g. draft instead of execute), and false otherwise.
func (o *Outcome) Fallback() (json.RawMessage, string, bool) {
	f := o.Decision.Fallback
	if o.Allowed() || f == "" || o.Envelope.Method != mcp.MethodToolsCall || f == o.Envelope.Tool {
		return nil, "", false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(o.Envelope.Params, &m); err != nil || m == nil {
		return nil, "", false
	}
	name, _ := json.Marshal(f)
	m["name"] = name
	b, err := json.Marshal(m)
	if err != nil {
		return nil, "", false
	}
	if o.Detail == nil {
		o.Detail = map[string]any{}
	}
	o.Detail["fallback"] = map[string]string{"from": o.Envelope.Tool, "to": f}
	return b, f, true
}

// MarkFallback marks a fallback tool's result so the client sees it is not what it asked for:
// a leading text block and _meta["palisade/fallback"] = {from, to, reason, audit_id}.
func (o *Outcome) MarkFallback(result json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(result, &r); err != nil || r == nil {
		return result
	}
	f := o.Decision.Fallback
	note := map[string]string{"type": "text", "text": fmt.Sprintf("[palisade] %s was denied (%s); the fallback tool %s ran instead.", o.Envelope.Tool, o.Decision.Reason, f)}
	var content []json.RawMessage
	_ = json.Unmarshal(r["content"], &content)
	nb, _ := json.Marshal(note)
	content = append([]json.RawMessage{nb}, content...)
	r["content"], _ = json.Marshal(content)
	meta := map[string]any{}
	_ = json.Unmarshal(r["_meta"], &meta)
	meta[MetaKeyFallback] = map[string]string{"from": o.Envelope.Tool, "to": f, "reason": o.Decision.Reason, "audit_id": o.AuditID}
	r["_meta"], _ = json.Marshal(meta)
	b, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return b
}

// evidenceWithoutMatch copies ev with every Match left out (nil when there is none).
func evidenceWithoutMatch(ev []abi.Evidence) []abi.Evidence {
	if len(ev) == 0 {
		return nil
	}
	out := make([]abi.Evidence, len(ev))
	for i, e := range ev {
		out[i] = abi.Evidence{Label: e.Label, Path: e.Path, Rules: e.Rules}
	}
	return out
}

// grantedFor asks g for a standing grant of h when the approver grants.
func grantedFor(ctx context.Context, g Granter, ok bool, h Held) (Resolution, bool) {
	if !ok {
		return Resolution{}, false
	}
	return g.Granted(ctx, h)
}

// ActiveInfo identifies the active bundle (zero before the first activation).
func (e *Engine) ActiveInfo() chain.Info {
	if c := e.o.Active.Load(); c != nil {
		return c.Info()
	}
	return chain.Info{}
}
