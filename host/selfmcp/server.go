package selfmcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/version"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/glob"
)

// Tool and resource names.
const (
	ToolCheckIntent  = "checkIntent"
	ToolReportAction = "reportAction"
	ToolGetPolicy    = "getPolicy"
	// ToolRequestPermission asks a person for a grant bound to the caller's principal.
	ToolRequestPermission = "requestPermission"
	ResourceRules         = "config://rules"
	ResourceRecent        = "audit://recent"
	// Transport is the transport name in envelopes and audit events.
	Transport = "mcp"
)

// Options configure the server.
type Options struct {
	Engine *engine.Engine // required: its active chain answers every tool
	// Recent holds the latest audit events, shown oldest first at audit://recent: the gateway's
	// one ring, which the dashboard shares; nil = empty.
	Recent *audit.Ring
	// Recorder receives reportAction events; nil = the engine's recorder.
	Recorder engine.Recorder
	Limits   Limits           // per principal (or caller) per tool per minute
	Now      func() time.Time // nil = time.Now
	// PollInterval is how often Watch looks for a bundle change; 0 = 1s.
	PollInterval time.Duration
	Version      string       // server version reported to clients; "" = version.String()
	Logger       *slog.Logger // nil = discard
	// Principal is who is calling, in the envelopes of the calls it judges: authn.LocalPrincipal
	// for `palisade mcp` in process; nil over the engine socket (the engine names its caller).
	Principal *abi.Principal
	// Permissions decides requestPermission through the held-call path (host/approval's
	// Manager); nil = the tool answers that no person can be asked here.
	Permissions Permissions
}

// Permissions holds a permission request until a person decides it: host/approval.Manager.
type Permissions interface {
	RequestPermission(ctx context.Context, env *abi.Envelope, b chain.Info, r approval.PermissionRequest, argsSHA256 string, progress func(string)) (engine.Resolution, error)
}

// Server is Palisade's own MCP server.
type Server struct {
	o       Options
	srv     *mcp.Server
	limiter *limiter
	active  *chain.Active
}

// New builds the server and registers its tools and resources.
func New(o Options) (*Server, error) {
	if o.Engine == nil || o.Engine.Options().Active == nil {
		return nil, errors.New("selfmcp: Options.Engine with an Active chain is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Recorder == nil {
		o.Recorder = o.Engine.Options().Recorder
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Version == "" {
		o.Version = version.String()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, active: o.Engine.Options().Active,
		limiter: &limiter{limits: o.Limits.withDefaults(), now: o.Now, buckets: map[string]*bucket{}}}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "palisade", Title: "Palisade policy gateway", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "Palisade decides which tool calls are allowed. Call checkIntent before a risky call; " +
			"when it says a person must decide, make the call through the gateway, which holds it until a person does. " +
			"Call reportAction after acting, and getPolicy to read the rules.",
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Logger:             o.Logger,
	})
	s.srv.AddReceivingMiddleware(s.rateLimit)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolCheckIntent, Description: "Ask whether a tool call would be allowed by the active policy, without making it.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.checkIntent)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolReportAction, Description: "Report an action the agent took, for the audit log."}, s.reportAction)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolRequestPermission, Description: "Ask a person for permission to call one tool of one server " +
		"(with given arguments, their digest, or any arguments) once, for a session, or for N minutes. Blocks until a person decides. " +
		"A grant covers only your own later calls (your verified identity), through the gateway."}, s.requestPermission)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolGetPolicy, Description: "Read the active policy: bundle, default action, stages and rules.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.getPolicy)
	s.srv.AddResource(&mcp.Resource{URI: ResourceRules, Name: "rules", Description: "The active bundle's rules and defaults", MIMEType: "application/json"}, s.readRules)
	s.srv.AddResource(&mcp.Resource{URI: ResourceRecent, Name: "recent decisions", Description: "The latest audit events", MIMEType: "application/json"}, s.readRecent)
	return s, nil
}

// MCP returns the underlying SDK server.
func (s *Server) MCP() *mcp.Server { return s.srv }

// ServeStdio serves one client over newline-delimited JSON-RPC on in/out until the client
// disconnects or ctx ends, watching for bundle changes meanwhile.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	ss, err := s.srv.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: out}, nil)
	if err != nil {
		return fmt.Errorf("selfmcp: %w", err)
	}
	return ss.Wait()
}

// VerifiedHTTPHandler serves Streamable HTTP with no token of its own, for a gateway whose
// resource server (host/authn) has already verified the caller's access token and put the
// principal in the request's context: requestPermission's grants are then bound to it. Never
// mount it where nothing verifies callers.
func (s *Server) VerifiedHTTPHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil)
}

// HTTPHandler serves Streamable HTTP; every request must carry `Authorization: Bearer token`
// (401 otherwise). An empty token is refused: use a loopback listener and a token.
func (s *Server) HTTPHandler(token string) (http.Handler, error) {
	if token == "" {
		return nil, errors.New("selfmcp: an HTTP server needs a bearer token")
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil)
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="palisade"`)
			http.Error(w, "palisade mcp: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// Watch notifies subscribers of config://rules whenever the active bundle changes, until ctx
// ends.
func (s *Server) Watch(ctx context.Context) {
	last := s.active.Load()
	t := time.NewTicker(s.o.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if cur := s.active.Load(); cur != last {
				last = cur
				s.BundleChanged(ctx)
			}
		}
	}
}

// BundleChanged notifies subscribers that config://rules changed.
func (s *Server) BundleChanged(ctx context.Context) {
	if err := s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: ResourceRules}); err != nil {
		s.o.Logger.Warn("resource update notification failed", "err", err)
	}
}

// principal is who is calling: Options.Principal (palisade mcp in process), the verified
// principal in the request's context (authn), or the OS user the engine socket saw; nil when
// none is known.
func (s *Server) principal(ctx context.Context) *abi.Principal {
	if s.o.Principal != nil {
		return s.o.Principal
	}
	if p := authn.FromContext(ctx); p != nil {
		return p
	}
	if c, ok := engine.CallerFrom(ctx); ok {
		return engine.CallerPrincipal(c)
	}
	return nil
}

// caller names who is calling, for rate limits without a principal: the hash of the bearer
// credential over HTTP, or "stdio" (one client per process).
func caller(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		if a := ex.Header.Get("Authorization"); a != "" {
			sum := sha256.Sum256([]byte(a))
			return "http:" + hex.EncodeToString(sum[:8])
		}
		return "http"
	}
	return "stdio"
}

func (s *Server) rateLimit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				who := approval.PrincipalKey(s.principal(ctx))
				if who == "" {
					who = caller(req)
				}
				if !s.limiter.allow(who, p.Name) {
					return nil, &jsonrpc.Error{Code: pmcp.CodeRateLimited,
						Message: fmt.Sprintf("rate limit: %s allows %d calls per minute per principal (%s); try again later", p.Name, s.limiter.limits.of(p.Name), who)}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// Call is the tool call an agent asks about.
type Call struct {
	Tool      string         `json:"tool" jsonschema:"the tool name the agent intends to call"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the arguments it would pass"`
	Server    string         `json:"server,omitempty" jsonschema:"the MCP server that offers the tool"`
}

// CheckIntentInput is checkIntent's input.
type CheckIntentInput struct {
	Call
	Intent string `json:"intent,omitempty" jsonschema:"what the agent wants to achieve, in a sentence"`
}

// CheckIntentOutput is checkIntent's answer.
type CheckIntentOutput struct {
	Allowed     bool     `json:"allowed"`
	Decision    string   `json:"decision" jsonschema:"allow, deny, ask or sample"`
	RiskLevel   string   `json:"risk_level" jsonschema:"low, medium or high"`
	Explanation string   `json:"explanation"`
	PolicyRule  string   `json:"policy_rule,omitempty"`
	Suggestions []string `json:"suggestions"`
}

func (s *Server) envelope(ctx context.Context, req mcp.Request, c Call) (*abi.Envelope, error) {
	if c.Tool == "" {
		return nil, errors.New("tool is required")
	}
	args, err := json.Marshal(c.Arguments)
	if err != nil {
		return nil, err
	}
	if c.Arguments == nil {
		args = []byte("{}")
	}
	params, _ := json.Marshal(map[string]any{"name": c.Tool, "arguments": json.RawMessage(args)})
	mc := pmcp.Context{Transport: Transport, Server: c.Server, Principal: s.principal(ctx)}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		mc.Session = ss.ID()
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			mc.Client = &abi.Client{Name: ip.ClientInfo.Name, Version: ip.ClientInfo.Version}
		}
	}
	return pmcp.NewEnvelope(&pmcp.Message{JSONRPC: "2.0", Method: pmcp.MethodToolsCall, Params: params}, mc)
}

func riskLevel(d *chain.Decision) string {
	switch {
	case d.Action == abi.ActionDeny || d.Score >= 0.67:
		return "high"
	case d.Action == abi.ActionAsk || d.Action == abi.ActionSample || d.Score >= 0.34:
		return "medium"
	}
	return "low"
}

func (s *Server) checkIntent(ctx context.Context, req *mcp.CallToolRequest, in CheckIntentInput) (*mcp.CallToolResult, CheckIntentOutput, error) {
	env, err := s.envelope(ctx, req, in.Call)
	if err != nil {
		return nil, CheckIntentOutput{}, err
	}
	o, err := s.judge().Judge(ctx, env)
	if err != nil {
		return nil, CheckIntentOutput{}, err
	}
	d := servedDecision(o)
	out := CheckIntentOutput{Decision: d.Action, Allowed: d.Action == abi.ActionAllow, RiskLevel: riskLevel(d), PolicyRule: d.Rule, Suggestions: []string{}}
	switch d.Action {
	case abi.ActionAllow:
		out.Explanation = "The policy allows this call"
	case abi.ActionDeny:
		out.Explanation = "The policy denies this call"
		out.Suggestions = []string{"Do not make this call.", "Choose another tool or narrower arguments the policy allows; getPolicy lists the rules."}
	default:
		out.Explanation = "A person (or the policy's judge) must decide this call"
		out.Suggestions = []string{"Make the call through the gateway: it holds the call until a person decides, and a grant they give (session or minutes) covers the same call later.", "Or choose a call the policy allows outright."}
	}
	if d.Reason != "" {
		out.Explanation += ": " + d.Reason
	}
	out.Explanation += "."
	return nil, out, nil
}

// judge returns an engine that decides a call exactly as the gateway's engine serves it (the
// same chain, tool definitions, pinning and token hooks) but asks no person and records no audit
// event or metric: check_intent asks about a call, it does not make one. It is built per call
// (a struct copy), so hooks the gateway adds after New are included.
func (s *Server) judge() *engine.Engine {
	jo := s.o.Engine.Options()
	jo.Approver, jo.Recorder, jo.Metrics = nil, nil, nil
	return engine.NewEngine(jo)
}

// servedDecision is the decision check_intent reports for o: ask and sample as the chain asked
// (through the gateway a person or the policy's judge decides them), anything else as served
// (a pinned tool's pending change denies, no opinion takes the bundle's default).
func servedDecision(o *engine.Outcome) *chain.Decision {
	d := *o.Decision
	switch {
	case d.Action == abi.ActionDeny:
	case o.Requested == abi.ActionAsk || o.Requested == abi.ActionSample:
		d.Action = o.Requested
	default:
		d.Action = o.Action
	}
	return &d
}

// ReportActionInput is reportAction's input.
type ReportActionInput struct {
	Call
	Outcome string `json:"outcome,omitempty" jsonschema:"success, failure or partial"`
	Details string `json:"details,omitempty" jsonschema:"what happened, briefly"`
}

// ReportActionOutput is reportAction's answer.
type ReportActionOutput struct {
	Recorded bool   `json:"recorded"`
	EventID  string `json:"event_id"`
}

func (s *Server) reportAction(ctx context.Context, req *mcp.CallToolRequest, in ReportActionInput) (*mcp.CallToolResult, ReportActionOutput, error) {
	env, err := s.envelope(ctx, req, in.Call)
	if err != nil {
		return nil, ReportActionOutput{}, err
	}
	id := audit.NewID()
	ev := audit.Event{ID: id, Time: s.o.Now().UTC(), Kind: audit.KindDecision, Transport: Transport, Method: "palisade/reportAction",
		Server: env.Server, Session: env.Session, Agent: env.Agent, Tool: env.Tool, Action: abi.ActionNone, Principal: env.Principal,
		Reason: strings.TrimSpace(in.Outcome + ": " + in.Details)}
	if len(env.Arguments) > 0 {
		ev.ArgumentsSHA256 = audit.ArgumentsHash(env.Arguments)
	}
	if info := s.active.Load(); info != nil {
		i := info.Info()
		ev.Bundle = &audit.Bundle{Name: i.Name, Version: i.Version, Digest: i.Digest}
	}
	detail := map[string]any{"report": map[string]string{"outcome": in.Outcome, "details": in.Details}}
	if c, ok := engine.CallerFrom(ctx); ok {
		detail["caller"] = c // the OS user the engine socket saw (a thin `palisade mcp`)
	}
	ev.Detail, _ = json.Marshal(detail)
	if s.o.Recorder == nil {
		return nil, ReportActionOutput{}, errors.New("no audit recorder configured")
	}
	s.o.Recorder.Record(ctx, ev)
	return nil, ReportActionOutput{Recorded: true, EventID: id}, nil
}

// Policy is getPolicy's answer and the content of config://rules.
type Policy struct {
	Bundle        chain.Info  `json:"bundle"`
	DefaultAction string      `json:"default_action"`
	Fallback      FallbackOut `json:"fallback"`
	Stages        []StageOut  `json:"stages"`
	Rules         []any       `json:"rules"`
}

// FallbackOut says how ask and sample resolve without a person or judge.
type FallbackOut struct {
	Ask    string `json:"ask"`
	Sample string `json:"sample"`
}

// StageOut describes one stage.
type StageOut struct {
	Name    string   `json:"name"`
	Phase   string   `json:"phase"`
	Methods []string `json:"methods,omitempty"`
	Tools   []string `json:"tools,omitempty"`
	Servers []string `json:"servers,omitempty"`
	Failure string   `json:"failure"`
}

// GetPolicyInput is getPolicy's input.
type GetPolicyInput struct {
	Tool string `json:"tool,omitempty" jsonschema:"only rules that could apply to this tool name"`
}

func (s *Server) getPolicy(ctx context.Context, _ *mcp.CallToolRequest, in GetPolicyInput) (*mcp.CallToolResult, Policy, error) {
	p, err := s.Policy()
	if err != nil {
		return nil, Policy{}, err
	}
	if in.Tool != "" {
		var keep []any
		for _, r := range p.Rules {
			if ruleMayApply(r, in.Tool) {
				keep = append(keep, r)
			}
		}
		p.Rules = keep
	}
	if p.Rules == nil {
		p.Rules = []any{}
	}
	return nil, p, nil
}

func ruleMayApply(r any, tool string) bool {
	m, ok := r.(map[string]any)
	if !ok {
		return true
	}
	when, _ := m["when"].(map[string]any)
	tools, ok := when["tool"].([]any)
	if !ok || len(tools) == 0 {
		return true
	}
	for _, t := range tools {
		if ts, _ := t.(string); glob.Match(ts, tool) {
			return true
		}
	}
	return false
}

// Policy describes the active bundle.
func (s *Server) Policy() (Policy, error) {
	ch, release := s.active.Acquire()
	defer release()
	if ch == nil {
		return Policy{}, engine.ErrNoChain
	}
	p := Policy{Bundle: ch.Info(), DefaultAction: ch.DefaultAction(), Fallback: FallbackOut{Ask: ch.Fallback(abi.ActionAsk), Sample: ch.Fallback(abi.ActionSample)}, Rules: []any{}}
	for _, st := range ch.Stages() {
		phase := "request"
		switch {
		case st.Request && st.Response:
			phase = "both"
		case st.Response:
			phase = "response"
		}
		failure := "open"
		if st.FailClosed {
			failure = "closed"
		}
		p.Stages = append(p.Stages, StageOut{Name: st.Name, Phase: phase, Methods: st.Match.Methods, Tools: st.Match.Tools, Servers: st.Match.Servers, Failure: failure})
	}
	if b, ok := ch.Extra().(*bundle.Bundle); ok && b != nil {
		p.Rules = append(p.Rules, bundleRules(b, s.o.Logger)...)
	}
	return p, nil
}

// bundleRules reads the rules of every stage that has them (config.rules or a data file named
// rules), tagging each with its stage.
func bundleRules(b *bundle.Bundle, log *slog.Logger) []any {
	var out []any
	for _, st := range b.Manifest.Stages {
		var src any
		if v, ok := st.Config["rules"]; ok {
			src = v
		} else if f, ok := st.Data["rules"]; ok {
			raw, err := os.ReadFile(filepath.Join(b.Dir, f))
			if err != nil {
				log.Warn("policy rules unreadable", "stage", st.Name, "err", err)
				continue
			}
			if err := yaml.Unmarshal(raw, &src); err != nil {
				log.Warn("policy rules unreadable", "stage", st.Name, "err", err)
				continue
			}
		}
		if m, ok := src.(map[string]any); ok {
			src = m["rules"]
		}
		list, _ := src.([]any)
		for _, r := range list {
			if m, ok := r.(map[string]any); ok {
				m["stage"] = st.Name
			}
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) readRules(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	p, err := s.Policy()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: ResourceRules, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (s *Server) readRecent(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	evs := []audit.Event{}
	if s.o.Recent != nil {
		evs = append(evs, s.o.Recent.Recent(100)...)
		slices.Reverse(evs) // oldest first
	}
	b, err := json.MarshalIndent(evs, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: ResourceRecent, MIMEType: "application/json", Text: string(b)}}}, nil
}

// RequestPermissionInput is requestPermission's input.
type RequestPermissionInput struct {
	Server          string         `json:"server" jsonschema:"the MCP server that offers the tool (the gateway's upstream name)"`
	Tool            string         `json:"tool" jsonschema:"the tool to be allowed"`
	Arguments       map[string]any `json:"arguments,omitempty" jsonschema:"only calls with exactly these arguments; omit both this and arguments_sha256 for any arguments"`
	ArgumentsSHA256 string         `json:"arguments_sha256,omitempty" jsonschema:"only calls whose arguments have this digest (as audit events show it)"`
	Scope           string         `json:"scope,omitempty" jsonschema:"once (the next call, default), session or minutes"`
	Minutes         int            `json:"minutes,omitempty" jsonschema:"for scope minutes; default 15"`
	Session         string         `json:"session,omitempty" jsonschema:"for scope session: the gateway's MCP session id the grant is for"`
	Reason          string         `json:"reason,omitempty" jsonschema:"why, in a sentence, shown to the person deciding"`
}

// RequestPermissionOutput is requestPermission's answer.
type RequestPermissionOutput struct {
	Granted    bool   `json:"granted"`
	Decision   string `json:"decision" jsonschema:"allow or deny"`
	DecidedBy  string `json:"decided_by"`
	Scope      string `json:"scope,omitempty"`
	ApprovalID string `json:"approval_id"`
	Reason     string `json:"reason,omitempty"`
}

// requestPermission holds the request in the approval queue, as a held call, until a person
// decides it; an allow is a grant for the caller's principal only (host/approval).
func (s *Server) requestPermission(ctx context.Context, req *mcp.CallToolRequest, in RequestPermissionInput) (*mcp.CallToolResult, RequestPermissionOutput, error) {
	if s.o.Permissions == nil {
		return nil, RequestPermissionOutput{}, errors.New("no person can be asked here: permission requests need `palisade serve` with approvals")
	}
	if in.Server == "" || in.Tool == "" {
		return nil, RequestPermissionOutput{}, errors.New("server and tool are required")
	}
	if in.Arguments != nil && in.ArgumentsSHA256 != "" {
		return nil, RequestPermissionOutput{}, errors.New("give arguments or arguments_sha256, not both")
	}
	if in.Scope == approval.ScopeSession && in.Session == "" {
		return nil, RequestPermissionOutput{}, errors.New("scope session needs the gateway session id (session)")
	}
	env, err := s.envelope(ctx, req, Call{Tool: in.Tool, Server: in.Server, Arguments: in.Arguments})
	if err != nil {
		return nil, RequestPermissionOutput{}, err
	}
	if env.Principal == nil {
		return nil, RequestPermissionOutput{}, errors.New("no verified caller: a grant is bound to a principal")
	}
	env.Session = in.Session
	var b chain.Info
	if c := s.active.Load(); c != nil {
		b = c.Info()
	}
	r := approval.PermissionRequest{Scope: in.Scope, Minutes: in.Minutes, AnyArguments: in.Arguments == nil && in.ArgumentsSHA256 == "", Reason: in.Reason}
	res, err := s.o.Permissions.RequestPermission(ctx, env, b, r, in.ArgumentsSHA256, nil)
	if err != nil {
		return nil, RequestPermissionOutput{}, err
	}
	return nil, RequestPermissionOutput{Granted: res.Action == abi.ActionAllow, Decision: res.Action, DecidedBy: res.DecidedBy,
		Scope: res.Scope, ApprovalID: res.ID, Reason: res.Reason}, nil
}
