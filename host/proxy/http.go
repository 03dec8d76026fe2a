package proxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"
)

// Upstream is one MCP server behind the gateway.
type Upstream struct {
	Name    string
	URL     string
	Timeout time.Duration     // time to the response headers; 0 = 60s
	Headers map[string]string // added to every forwarded request
	// Transport, if set, carries the upstream's requests instead of an HTTP connection to URL
	// (a *StdioUpstream: a local stdio server; Timeout does not apply to it, the total
	// exchange limit does). nil = HTTP to URL.
	Transport http.RoundTripper
	// Credentials, when set, wraps the HTTP transport to URL with the upstream's own
	// credentials (an OAuth client credentials token source: the gateway's identity towards
	// this server, never the client's token, which the proxy strips).
	Credentials func(base http.RoundTripper) http.RoundTripper
}

// HTTPOptions configure the Streamable HTTP proxy.
type HTTPOptions struct {
	// RateLimit, when set, is asked about every tools/call before it is judged: a non-nil
	// error (CodeRateLimited, naming the limit) is the client's answer, a JSON-RPC error as
	// a deny is. The gateway's limits.per_principal and limits.tools.
	RateLimit     func(env *abi.Envelope) *mcp.Error
	Upstreams     []Upstream
	Engine        *engine.Engine // required
	BodyLimit     int64          // request body cap; 0 = 4 MiB
	ResponseLimit int64          // cap on one upstream message judged in the response phase; 0 = 16 MiB
	// StreamIdleTimeout ends an upstream's SSE answer to a POST that sends nothing (not even a
	// keepalive comment) for this long; 0 = 5m. GET streams are the client's to hold.
	StreamIdleTimeout time.Duration
	// StreamBudget is the memory all upstream SSE events, upstream JSON answers and request
	// bodies being read or held at once may take past 64 KiB each; an event past it ends its
	// stream with an error, an answer past it is answered with an error (never passed), and a
	// body past it is refused with 503. 0 = 256 MiB.
	StreamBudget int64
	// Budget, if set, is the budget to draw on instead of a new one of StreamBudget, so other
	// readers (the hook endpoint) share it.
	Budget *sse.Budget
	// MaxBatch is how many messages one batch may hold. A client's larger batch POST is
	// refused whole (413, -32003) before any element is judged or forwarded; an upstream's
	// larger batch is not judged and nothing in it reaches the client: the request it came
	// for is answered with -32002. 0 = 100.
	MaxBatch int
	// UpstreamTotalTimeout bounds one POST exchange with an upstream, from sending the request
	// to the last byte of its answer (SSE keepalives do not extend it); the client then gets a
	// -32002 error naming the limit. Time spent judging the request (an approval hold) comes
	// before and does not count. 0 = 5m.
	UpstreamTotalTimeout time.Duration
	Metrics              *engine.Metrics // nil = none
	Logger               *slog.Logger    // nil = discard
	// Tracer, if set, traces every judged request (trace.go): a span per request in the
	// client's W3C trace context, a child span per upstream call, and traceparent on the
	// upstream's request. nil = no spans, and no trace headers go upstream.
	Tracer trace.Tracer
	// Tools, if set, sees every tools/list result before the client (tool pinning and
	// description sanitizing, host/pin).
	Tools engine.ToolsObserver
	// SamplingContext, if set, is given a way to send sampling/createMessage to the client of
	// a request (when its session declared the sampling capability and the protocol allows
	// server-to-client requests mid-call) and returns the context the request is judged in
	// (the gateway puts it where the LLM judge's mcp provider finds it).
	SamplingContext func(ctx context.Context, sample func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)) context.Context
	// AskClient puts a held call to the person at the client as well as in the queue: an
	// elicitation/create on the call's SSE answer, when the session declared elicitation and the
	// protocol allows a server-to-client request mid-call (ask.go; approvals.ask_client). The
	// client's answer decides the call like an approver's: enable it only where the client's
	// user is the person who approves (docs/DESIGN.md "Asking in the client"). false = the
	// queue only.
	AskClient bool
	// AskURL, when set, is the approval page ("{id}" = the held call's id) a client that declared
	// elicitation url mode is sent to instead of the form; its accept only opens the page, and
	// the decision comes through the queue. "" = form mode for every client.
	AskURL string
	// Aggregate configures /mcp when there are several upstreams (aggregate.go): it serves
	// them all as one MCP server. With one upstream /mcp is that upstream's path.
	Aggregate AggregateOptions
}

// HTTP is the Streamable HTTP proxy: POST, GET and DELETE on /mcp/<upstream>, and on /mcp (the
// one upstream, or with several every upstream as one MCP server: aggregate.go), for protocol
// versions 2024-11-05 through 2025-11-25 (sessions) and the stateless 2026-07-28.
type HTTP struct {
	o         HTTPOptions
	upstreams map[string]*upstream
	order     []*upstream // config order
	only      *upstream
	agg       *aggregator // /mcp over several upstreams; nil with one
	sessions  *sessionTable
	closing   chan struct{} // closed by Close: long-lived GET streams end
	closeOnce sync.Once
	pending   sync.Map // id → clientPending: requests the gateway sent clients (sampling, ask)
	// inputStates sign the requestState of the questions put to 2026-07-28 clients.
	inputStates *inputStates
	budget      *sse.Budget
	asked       *askedTable // server requests relayed to clients, for judging their answers
	// totalTimeoutCause is the cause of an exchange cut at UpstreamTotalTimeout, built once.
	totalTimeoutCause error
}

// mcpParamPrefix starts the names of the request headers forwarded upstream as they came
// (any case).
const mcpParamPrefix = "mcp-param-"

// samplingIDPrefix marks the ids of requests the gateway itself sends to clients, so their
// answers are taken here instead of forwarded upstream.
const samplingIDPrefix = "palisade-sampling-"

// Close ends the long-lived GET streams so an HTTP server shutdown does not wait on them, and
// closes the kept upstream connections.
func (h *HTTP) Close() {
	h.closeOnce.Do(func() {
		close(h.closing)
		for _, up := range h.order {
			up.client.CloseIdleConnections()
		}
	})
}

type upstream struct {
	Upstream
	client *http.Client
	health *health
}

// Headers passed through to the upstream, and back to the client.
var (
	forwardRequestHeaders = []string{"Accept", "Content-Type", mcp.HeaderSessionID, mcp.HeaderProtocolVersion,
		mcp.HeaderMethod, mcp.HeaderName, mcp.HeaderLastEventID,
		// The browser origin, checked by the gateway and forwarded so an upstream that checks
		// Origin itself keeps doing so through the gateway.
		"Origin"}
	forwardResponseHeaders = []string{"Content-Type", mcp.HeaderSessionID, mcp.HeaderProtocolVersion, "Cache-Control"}
)

// NewHTTP returns the proxy.
func NewHTTP(o HTTPOptions) (*HTTP, error) {
	if o.Engine == nil {
		return nil, errors.New("proxy: Engine is required")
	}
	if o.BodyLimit <= 0 {
		o.BodyLimit = 4 << 20
	}
	if o.ResponseLimit <= 0 {
		o.ResponseLimit = 16 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StreamIdleTimeout <= 0 {
		o.StreamIdleTimeout = 5 * time.Minute
	}
	if o.StreamBudget <= 0 {
		o.StreamBudget = 256 << 20
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 100
	}
	if o.UpstreamTotalTimeout <= 0 {
		o.UpstreamTotalTimeout = 5 * time.Minute
	}
	if o.Budget == nil {
		o.Budget = sse.NewBudget(o.StreamBudget)
	}
	h := &HTTP{o: o, upstreams: map[string]*upstream{}, sessions: newSessionTable(10000), closing: make(chan struct{}), budget: o.Budget, asked: newAskedTable(10000),
		inputStates: newInputStates(), totalTimeoutCause: fmt.Errorf("%w (%s)", ErrUpstreamTimeout, o.UpstreamTotalTimeout)}
	for _, u := range o.Upstreams {
		if u.Timeout <= 0 {
			u.Timeout = 60 * time.Second
		}
		tr := &http.Transport{
			Proxy:                  nil,
			DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:           256,
			MaxIdleConnsPerHost:    256,
			IdleConnTimeout:        90 * time.Second,
			ResponseHeaderTimeout:  u.Timeout,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		}
		// inline.go: plain http on the calling goroutine, https by tr.
		rt := http.RoundTripper(newInlineTransport(tr))
		up := &upstream{Upstream: u, client: &http.Client{Transport: rt}, health: &health{}}
		if u.Credentials != nil && u.Transport == nil {
			up.client = &http.Client{Transport: u.Credentials(rt)}
		}
		if u.Transport != nil {
			up.client = &http.Client{Transport: u.Transport}
		}
		if s, ok := u.Transport.(*StdioUpstream); ok {
			// A start marks it up (and brings the aggregate's sessions to it), an exit down,
			// without waiting for traffic.
			s.watch(func(err error) { h.observed(up, err) })
		}
		h.upstreams[u.Name] = up
		h.order = append(h.order, up)
	}
	switch o.Aggregate.Names {
	case "", NamesPrefix, NamesRefuse:
	default:
		return nil, fmt.Errorf("proxy: aggregate names %q: want %q or %q", o.Aggregate.Names, NamesPrefix, NamesRefuse)
	}
	if len(o.Upstreams) == 1 {
		h.only = h.upstreams[o.Upstreams[0].Name]
	} else if len(o.Upstreams) > 1 {
		h.agg = newAggregator(h, o.Aggregate, h.order)
	}
	go h.probe()
	return h, nil
}

// Register adds the MCP routes to e.
func (h *HTTP) Register(e *echo.Echo) {
	for _, path := range []string{"/mcp", "/mcp/:name"} {
		e.POST(path, h.post)
		e.GET(path, h.get)
		e.DELETE(path, h.del)
	}
}

func (h *HTTP) upstreamFor(c echo.Context) (*upstream, error) {
	name := c.Param("name")
	if name == "" {
		if h.only != nil {
			return h.only, nil
		}
		names := make([]string, 0, len(h.upstreams))
		for n := range h.upstreams {
			names = append(names, n)
		}
		return nil, fmt.Errorf("several upstreams: use /mcp/<name> with one of %s", strings.Join(names, ", "))
	}
	u, ok := h.upstreams[name]
	if !ok {
		return nil, fmt.Errorf("unknown upstream %q", name)
	}
	return u, nil
}

func (h *HTTP) count(server, result string) {
	if h.o.Metrics != nil {
		h.o.Metrics.Request(server, result)
	}
}

// writeError answers with a JSON-RPC error object.
func writeError(c echo.Context, status int, id json.RawMessage, e *mcp.Error) error {
	return c.JSONBlob(status, mcp.ErrorResponse(id, e))
}

func (h *HTTP) post(c echo.Context) error {
	arrived := time.Now()
	if c.Param("name") == "" && h.agg != nil {
		return h.agg.post(c)
	}
	up, err := h.upstreamFor(c)
	if err != nil {
		h.count(c.Param("name"), "unknown_upstream")
		return writeError(c, http.StatusNotFound, nil, mcp.NewError(mcp.CodeInvalidRequest, err.Error(), nil))
	}
	req := c.Request()
	body, msgs, batch, release, done := h.readPost(c, up.Name)
	defer release()
	if done {
		return nil
	}
	if batch {
		return h.postBatch(c, up, msgs)
	}
	p := msgs[0]
	if p.Message.IsResponse() && h.deliver(p.Message, req.Header.Get(mcp.HeaderSessionID)) {
		return c.NoContent(http.StatusAccepted)
	}
	if !p.Message.IsRequest() {
		// A notification or the client's answer to a server request: judged like every message.
		if b, ok := h.judgeClientMessage(c.Request().Context(), up, req.Header, p); !ok {
			if b == nil {
				return writeError(c, http.StatusForbidden, nil, mcp.NewError(mcp.CodeDenied, "denied by policy: "+p.Message.Method+" was not forwarded", nil))
			}
			body = b // the upstream gets the refusal in place of the client's answer
		}
		return h.forwardRaw(c, up, req.Header, body)
	}
	rw := newResponder(c)
	rw.start = arrived // the body's read and parse count too
	h.serveRequest(c.Request().Context(), rw, c.Request().Header, up, p, body)
	return nil
}

// readPost reads and parses a POST body within the body limit and the memory budget (held
// until release, never nil) and checks its routing headers; done means the error answer was
// written. server names the path in metrics ("" for the aggregate endpoint).
func (h *HTTP) readPost(c echo.Context, server string) (body []byte, msgs []*mcp.Parsed, batch bool, release func(), done bool) {
	req := c.Request()
	// The body counts in the gateway's memory budget until the request is answered.
	body, release, err := h.budget.ReadAll(req.Body, req.ContentLength, h.o.BodyLimit)
	switch {
	case errors.Is(err, sse.ErrTooLarge):
		h.count(server, "too_large")
		_ = writeError(c, http.StatusRequestEntityTooLarge, nil, mcp.NewError(mcp.CodeTooLarge,
			fmt.Sprintf("request body is over the gateway's limit of %d bytes", h.o.BodyLimit), nil))
		return nil, nil, false, release, true
	case errors.Is(err, sse.ErrBudget):
		h.count(server, "over_budget")
		c.Response().Header().Set("Retry-After", "1")
		_ = writeError(c, http.StatusServiceUnavailable, nil, mcp.NewError(mcp.CodeTooLarge,
			"request body does not fit the gateway's memory budget (limits.stream_buffer_bytes) now; retry later", nil))
		return nil, nil, false, release, true
	case err != nil:
		_ = writeError(c, http.StatusBadRequest, nil, mcp.NewError(mcp.CodeParseError, "read body: "+err.Error(), nil))
		return nil, nil, false, release, true
	}
	msgs, batch, err = mcp.ParseBodyLimit(body, h.context(req.Context(), req.Header), h.o.MaxBatch)
	if errors.Is(err, mcp.ErrBatchTooLarge) {
		h.count(server, "batch_too_large")
		_ = writeError(c, http.StatusRequestEntityTooLarge, nil, mcp.NewError(mcp.CodeTooLarge,
			fmt.Sprintf("the batch holds more than %d messages, the gateway's limit (limits.batch_elements); send fewer per POST", h.o.MaxBatch),
			map[string]int{"limit": h.o.MaxBatch}))
		return nil, nil, false, release, true
	}
	if err != nil {
		code := mcp.CodeInvalidRequest
		if errors.Is(err, mcp.ErrNotJSON) || errors.Is(err, mcp.ErrTooDeep) {
			code = mcp.CodeParseError
		}
		h.count(server, "malformed")
		_ = writeError(c, http.StatusBadRequest, nil, mcp.NewError(code, err.Error(), nil))
		return nil, nil, false, release, true
	}
	// Routing headers describe the whole POST: every message in it must agree with them.
	for _, p := range msgs {
		if err := checkHeaders(req.Header, p); err != nil {
			h.count(server, "header_mismatch")
			var id json.RawMessage
			if !batch {
				id = p.Message.ID
			}
			_ = writeError(c, http.StatusBadRequest, id, mcp.NewError(mcp.CodeHeaderMismatch, err.Error(), nil))
			return nil, nil, false, release, true
		}
	}
	return body, msgs, batch, release, false
}

// checkHeaders refuses a message whose routing headers disagree with its body: Mcp-Method with
// the method, Mcp-Name with the tool or prompt name or resource URI, and each Mcp-Param-{Name}
// with the tools/call argument it mirrors (see paramHeaders). A header the message has no value
// for (a response, a method without a name) is a mismatch too: intermediaries route on it.
func checkHeaders(hdr http.Header, p *mcp.Parsed) error {
	m := p.Message
	if v, ok := headerValue(hdr, mcp.HeaderMethod); ok && v != m.Method {
		return fmt.Errorf("%s header %q does not match the body's method %q", mcp.HeaderMethod, v, m.Method)
	}
	if v, ok := headerValue(hdr, mcp.HeaderName); ok {
		if name := routedName(p.Envelope); v != name {
			return fmt.Errorf("%s header %q does not match the body's name %q", mcp.HeaderName, v, name)
		}
	}
	if err := paramHeaders(hdr, p.Envelope); err != nil {
		return err
	}
	if m.Method != "" && hdr.Get(mcp.HeaderProtocolVersion) >= mcp.Stateless && hdr.Get(mcp.HeaderMethod) == "" {
		return fmt.Errorf("protocol %s requires the %s header", hdr.Get(mcp.HeaderProtocolVersion), mcp.HeaderMethod)
	}
	return nil
}

// headerValue returns a header's value; a header given twice with different values is refused
// by reporting the joined values, which match no body.
func headerValue(hdr http.Header, k string) (string, bool) {
	vs := hdr.Values(k)
	switch len(vs) {
	case 0:
		return "", false
	case 1:
		return vs[0], true
	}
	return strings.Join(vs, ", "), true
}

// routedName is what Mcp-Name mirrors for a message: the tool or prompt name, or the resource URI.
func routedName(env *abi.Envelope) string {
	if env == nil {
		return ""
	}
	switch env.Method {
	case mcp.MethodToolsCall:
		return env.Tool
	case mcp.MethodPromptsGet:
		return env.Prompt
	case mcp.MethodResourcesRead:
		return env.URI
	}
	return ""
}

// paramHeaders compares every Mcp-Param-{Name} header with the tools/call arguments. The name
// in the header is the x-mcp-header annotation of a property in the tool's inputSchema (at any
// depth), which the gateway does not hold, so it checks what it can without the schema: when a
// top-level argument has the header's name (ignoring case; argument keys are unique ignoring
// case, see mcp.Parse), the header must mirror that argument; otherwise it must mirror some
// primitive argument at any depth. A header that mirrors nothing in the body, or one on another
// method, is refused. Values compare as the spec encodes them: strings as they are or in the
// =?base64?...?= form, numbers and booleans as their JSON text. A header missing for an
// annotated argument is left to the upstream, which holds the schema.
// decodeArgs decodes a tools/call's arguments object (numbers kept as json.Number), nil for
// anything else. Its own function so that the map escapes only for a call with a parameter
// header, not for every call paramHeaders looks at.
func decodeArgs(arguments json.RawMessage) map[string]any {
	var args map[string]any
	if len(arguments) > 0 && arguments[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(arguments))
		d.UseNumber()
		_ = d.Decode(&args)
	}
	return args
}

func paramHeaders(hdr http.Header, env *abi.Envelope) error {
	var args map[string]any
	decoded := false
	for k := range hdr {
		name, ok := cutFold(k, mcp.HeaderParamPrefix)
		if !ok {
			continue
		}
		v, _ := headerValue(hdr, k)
		if env == nil || env.Method != mcp.MethodToolsCall {
			return fmt.Errorf("%s header on a message that is not a tools/call", k)
		}
		if !decoded {
			decoded = true
			args = decodeArgs(env.Arguments)
		}
		v, ok = decodeParamHeader(v)
		if !ok {
			return fmt.Errorf("%s header has an invalid =?base64?...?= value", k)
		}
		named := false
		for ak, av := range args {
			if strings.EqualFold(ak, name) {
				named = true
				if !paramMatches(v, av) {
					return fmt.Errorf("%s header %q does not match the body's argument %q", k, v, ak)
				}
			}
		}
		if !named && !anyParamMatches(v, args) {
			return fmt.Errorf("%s header %q mirrors no argument of the call", k, v)
		}
	}
	return nil
}

// decodeParamHeader undoes the =?base64?...?= form of an Mcp-Param value.
func decodeParamHeader(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	return string(b), err == nil
}

// paramMatches compares a decoded header value with a primitive argument.
func paramMatches(v string, arg any) bool {
	switch a := arg.(type) {
	case string:
		return a == v
	case bool:
		return strconv.FormatBool(a) == v
	case json.Number:
		if a.String() == v {
			return true
		}
		x, err1 := strconv.ParseFloat(a.String(), 64)
		y, err2 := strconv.ParseFloat(v, 64)
		return err1 == nil && err2 == nil && x == y
	}
	return false
}

// anyParamMatches reports whether v mirrors some primitive value inside args. The walk keeps its
// own stack: mcp.Parse already bounded the depth, and nothing here recurses.
func anyParamMatches(v string, args map[string]any) bool {
	stack := []any{args}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch t := x.(type) {
		case map[string]any:
			for _, c := range t {
				stack = append(stack, c)
			}
		case []any:
			stack = append(stack, t...)
		default:
			if paramMatches(v, t) {
				return true
			}
		}
	}
	return false
}

func cutFold(s, prefix string) (string, bool) {
	if len(s) <= len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

// context is what the request's headers say about its session and who is calling (the
// principal the gateway verified, in rctx: authn.FromContext); mcp.Parse adds what the body
// says. The principal is never read from what the client sends.
func (h *HTTP) context(rctx context.Context, hdr http.Header) mcp.Context {
	ctx := mcp.Context{Transport: "http", Session: hdr.Get(mcp.HeaderSessionID), ProtocolVersion: hdr.Get(mcp.HeaderProtocolVersion),
		Principal: authn.FromContext(rctx)}
	if s, ok := h.sessions.get(ctx.Session); ok {
		ctx.Client = s.client
		if ctx.ProtocolVersion == "" {
			ctx.ProtocolVersion = s.protocol
		}
		if s.alias != "" {
			ctx.Session = s.alias // an upstream's session of an aggregate client session
		}
	}
	return ctx
}

// serveRequest judges one request, forwards it if allowed, judges the answer and writes it.
func (h *HTTP) serveRequest(ctx context.Context, rw *responder, hdr http.Header, up *upstream, p *mcp.Parsed, body []byte) {
	m, env := p.Message, p.Envelope
	env.ID, env.Server = audit.NewID(), up.Name
	ctx, span := h.startRequestSpan(ctx, hdr, p)
	defer span.end() // last: after the answer is sent and the audit event recorded
	if tok := p.ProgressToken; tok != nil && acceptsSSE(hdr) {
		ctx = engine.WithProgress(ctx, rw.progressFunc(tok))
	}
	if h.o.SamplingContext != nil && acceptsSSE(hdr) && rw.sink == nil && env.ProtocolVersion < mcp.Stateless {
		if s, ok := h.sessions.get(env.Session); ok && s.sampling {
			ctx = h.o.SamplingContext(ctx, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
				return h.sample(ctx, rw, params)
			})
		}
	}
	if s, ok := h.askable(rw, hdr, env); ok {
		ctx = engine.WithAsk(ctx, func(ctx context.Context, held engine.Held) (engine.Answer, error) {
			return h.ask(ctx, rw, s, held)
		})
	}
	inputAsk := false // a held call is put to the client as an input_required result
	if h.inputAskable(env, m.Params) {
		var rest json.RawMessage
		ctx, inputAsk, rest = h.inputAsk(ctx, env, m.Params)
		if rest != nil { // the gateway's answer and state leave the call before anything sees it
			m2 := *m
			m2.Params = rest
			m, p.Message = &m2, &m2
			body, _ = json.Marshal(&m2)
		}
	}
	if h.o.RateLimit != nil && env.Method == mcp.MethodToolsCall {
		if e := h.o.RateLimit(env); e != nil {
			// A JSON-RPC error in a 200 answer, as a deny is: clients read it as the call's
			// answer (a 429 would be a transport failure to most).
			h.count(up.Name, "rate_limited")
			rw.json(nil, mcp.ErrorResponse(m.ID, e))
			rw.send()
			return
		}
	}
	// Judging costs memory beyond the body's bytes (the envelope encoded for the stages):
	// the budget covers it while the request phase runs.
	judged, ok := holdJudging(h.budget, JudgeCost(len(m.Params)))
	if !ok {
		h.count(up.Name, "over_budget")
		if rw.sink == nil {
			rw.w().Header().Set("Retry-After", "1")
		}
		rw.error(http.StatusServiceUnavailable, m.ID, mcp.NewError(mcp.CodeTooLarge,
			"judging this request does not fit the gateway's memory budget (limits.stream_buffer_bytes) now; retry later", nil))
		return
	}
	x, err := h.o.Engine.Begin(ctx, p, h.o.Tools)
	judged()
	if err != nil {
		h.count(up.Name, "error")
		rw.error(http.StatusServiceUnavailable, m.ID, mcp.NewError(mcp.CodeInternalError, "gateway: "+err.Error(), nil))
		return
	}
	out := x.Outcome
	span.out = out
	var upTook time.Duration // time spent waiting on the upstream; 0: not forwarded, < 0: not observed
	defer func() {
		rw.send() // the client has its answer before the audit event is built
		h.observeOverhead(up.Name, rw, out, upTook)
		x.Finish(ctx)
	}()
	switch step, params, changed := x.Forward(); step {
	case engine.StepDeny:
		if inputAsk && out.Action == abi.ActionAsk {
			h.count(up.Name, "input_required")
			rw.json(nil, h.inputRequiredAnswer(m.ID, out, h.o.Engine.ActiveInfo().Digest))
			return
		}
		h.count(up.Name, "denied")
		rw.json(nil, x.Deny())
		return
	case engine.StepFallback:
		h.count(up.Name, "denied")
		upTook = -1 // answered by another upstream call: not the gateway's own time alone
		h.serveFallback(ctx, rw, hdr, up, m, x, params)
		return
	default:
		if changed {
			m2 := *m
			m2.Params = params
			body, _ = json.Marshal(&m2)
		}
	}
	start := time.Now()
	uctx, upSpan := h.startUpstreamSpan(ctx, up)
	// subscriptions/listen is answered by a stream that lasts as long as the client wants it
	// (like the GET stream of the session era): no idle or total limit cuts it.
	resp, err := h.sendTimed(uctx, up, hdr, http.MethodPost, body, m.Method != mcp.MethodSubscriptionsListen)
	upTook = time.Since(start)
	if err != nil {
		upSpan.end(0, err)
		h.upstreamFailed(ctx, rw, up, m, out, start, err)
		return
	}
	defer resp.Body.Close()
	defer upSpan.end(resp.StatusCode, nil) // once the answer is relayed
	out.SetUpstream(audit.Upstream{Status: resp.StatusCode})
	h.observe(up.Name, "ok", start)
	if m.Method == mcp.MethodInitialize {
		if sid := resp.Header.Get(mcp.HeaderSessionID); sid != "" {
			h.sessions.put(sid, session{client: env.Client, protocol: env.ProtocolVersion, sampling: p.Sampling, caps: mcp.Capabilities(m.Params), elicitURL: elicitURLMode(m.Params)})
		}
	}
	r := &relay{h: h, up: up, hdr: hdr, m: m, x: x}
	switch mt := mediaType(resp.Header); {
	case mt == "text/event-stream":
		rw.startSSE(resp)
		if err := r.stream(ctx, rw, resp); err != nil && ctx.Err() == nil {
			h.o.Logger.Warn("upstream stream broke", "upstream", up.Name, "audit_id", out.AuditID, "err", err)
			out.Upstream.Error = err.Error()
		}
	case mt == "application/json":
		h.relayJSON(ctx, rw, resp, r)
	case resp.StatusCode >= 300:
		// Not a JSON-RPC answer: the status is kept, the body is not passed unread.
		rw.error(resp.StatusCode, m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s answered HTTP %d", up.Name, resp.StatusCode), nil))
	default:
		b, release, err := h.readAnswer(resp)
		defer release()
		if err != nil {
			rw.error(http.StatusBadGateway, m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s: %v", up.Name, err), nil))
			break
		}
		if b := r.unjudgeable(b, fmt.Errorf("content type %q is neither JSON nor SSE", resp.Header.Get("Content-Type"))); len(b) > 0 {
			rw.json(resp, b[0].b)
		}
	}
	out.Upstream.LatencyUS = time.Since(start).Microseconds()
	upTook += r.waited
	if m.Method == mcp.MethodSubscriptionsListen {
		upTook = -1 // a stream as long as the client wants: no overhead to observe
	}
	h.count(up.Name, "ok")
}

// serveFallback calls the fallback tool a denied call named instead, and answers with its result
// marked as a fallback. If the fallback fails, the client gets the deny.
func (h *HTTP) serveFallback(ctx context.Context, rw *responder, hdr http.Header, up *upstream, m *mcp.Message, x *engine.Exchange, params json.RawMessage) {
	out := x.Outcome
	fm := *m
	fm.Params = params
	body, _ := json.Marshal(&fm)
	fh := hdr.Clone()
	if fh.Get(mcp.HeaderName) != "" {
		name, _, _ := mcp.Target(&fm)
		fh.Set(mcp.HeaderName, name)
	}
	start := time.Now()
	resp, err := h.send(ctx, up, fh, http.MethodPost, body)
	if err != nil {
		h.upstreamFailed(ctx, rw, up, m, out, start, err)
		return
	}
	defer resp.Body.Close()
	out.Upstream = &audit.Upstream{Status: resp.StatusCode, LatencyUS: time.Since(start).Microseconds()}
	var msg *mcp.Message
	raw, release, err := h.readAnswer(resp)
	defer release()
	if err == nil {
		msg = answerIn(raw, mediaType(resp.Header) == "text/event-stream", m.ID, h.o.MaxBatch)
	}
	rw.json(nil, x.Answer(ctx, msg))
}

// observeOverhead records the gateway's own share of a request's time
// (palisade_gateway_overhead_seconds): all of it less upTook, the time spent waiting on the
// upstream (0: not forwarded). Not for a call held for a person (the wait is theirs), one
// answered by a fallback tool or a subscriptions/listen stream (upTook < 0), nor a message
// collected into a batch. A sampling or elicitation request the gateway puts to the client
// while the upstream's stream waits counts as the gateway's time.
func (h *HTTP) observeOverhead(server string, rw *responder, out *engine.Outcome, upTook time.Duration) {
	if h.o.Metrics == nil || rw.sink != nil || rw.start.IsZero() || upTook < 0 || out.Approval != nil {
		return
	}
	path := "forwarded"
	if upTook == 0 {
		path = "answered"
	}
	h.o.Metrics.Overhead(server, path, time.Since(rw.start)-upTook)
}

func (h *HTTP) observe(server, outcome string, start time.Time) {
	if h.o.Metrics != nil {
		h.o.Metrics.Upstream(server, outcome, time.Since(start))
	}
}

func (h *HTTP) upstreamFailed(ctx context.Context, rw *responder, up *upstream, m *mcp.Message, out *engine.Outcome, start time.Time, err error) {
	reason := "unreachable"
	status := http.StatusBadGateway
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUpstreamTimeout) || isTimeout(err) {
		reason, status = "timed out", http.StatusGatewayTimeout
	}
	h.observe(up.Name, "error", start)
	h.count(up.Name, "upstream_error")
	out.Upstream = &audit.Upstream{LatencyUS: time.Since(start).Microseconds(), Error: err.Error()}
	h.o.Logger.Warn("upstream failed", "upstream", up.Name, "audit_id", out.AuditID, "err", err)
	if ctx.Err() != nil {
		return // the client went away
	}
	rw.error(status, m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s %s: %v", up.Name, reason, err), map[string]string{"upstream": up.Name, "audit_id": out.AuditID}))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func acceptsSSE(h http.Header) bool { return strings.Contains(h.Get("Accept"), "text/event-stream") }

func (h *HTTP) send(ctx context.Context, up *upstream, hdr http.Header, method string, body []byte) (*http.Response, error) {
	return h.sendTimed(ctx, up, hdr, method, body, method == http.MethodPost)
}

// sendTimed is send; timed puts the POST limits (StreamIdleTimeout, UpstreamTotalTimeout) on the
// answer. A long-lived stream (GET, subscriptions/listen) has none: it lasts as long as ctx.
func (h *HTTP) sendTimed(ctx context.Context, up *upstream, hdr http.Header, method string, body []byte, timed bool) (*http.Response, error) {
	if !timed {
		req, err := h.upstreamRequest(ctx, ctx, up, hdr, method, body)
		if err != nil {
			return nil, err
		}
		resp, err := up.client.Do(req)
		h.observeSend(ctx, up, err)
		return resp, err
	}
	// A POST's answer stream ends when the upstream goes quiet for StreamIdleTimeout, and
	// whatever it sends, UpstreamTotalTimeout after the request went out. The request is made
	// in that context at once (req.WithContext would copy it).
	ictx, cancel := context.WithTimeoutCause(ctx, h.o.UpstreamTotalTimeout, h.totalTimeoutCause)
	req, err := h.upstreamRequest(ctx, ictx, up, hdr, method, body)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := up.client.Do(req)
	h.observeSend(ctx, up, err)
	if err != nil {
		err = deadlineCause(ictx, err)
		cancel()
		return nil, err
	}
	resp.Body = newIdleBody(ictx, resp.Body, h.o.StreamIdleTimeout, cancel)
	return resp, nil
}

// upstreamRequest is the request to up carrying body, in rctx (ctx or a context under it): the
// headers passed through from the client's hdr, its token stripped, this gateway's trace
// context (from ctx) and the upstream's own headers.
func (h *HTTP) upstreamRequest(ctx, rctx context.Context, up *upstream, hdr http.Header, method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, up.URL, rd)
	if err != nil {
		return nil, err
	}
	for _, k := range forwardRequestHeaders {
		if v := hdr.Values(k); len(v) > 0 {
			req.Header[k] = v
		}
	}
	for k, v := range hdr {
		if len(k) >= len(mcpParamPrefix) && strings.EqualFold(k[:len(mcpParamPrefix)], mcpParamPrefix) {
			req.Header[k] = v
		}
	}
	// The client's token is its credential for the gateway, never for the server behind it
	// (MCP authorization, "Token Passthrough"); the upstream's own credentials come next.
	authn.StripToken(req)
	if h.o.Tracer != nil {
		injectTraceContext(ctx, req.Header) // this gateway's span, never the client's header
	}
	for k, v := range up.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// ErrUpstreamTimeout marks an upstream exchange cut at HTTPOptions.UpstreamTotalTimeout.
var ErrUpstreamTimeout = errors.New("the upstream did not finish its answer within the gateway's limit (limits.upstream_total_timeout)")

// deadlineCause returns ctx's cause instead of err when ctx ended at the total deadline.
func deadlineCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); errors.Is(c, ErrUpstreamTimeout) {
		return c
	}
	return err
}

// idleBody cancels its request when no byte arrives for d; a read cut by the total deadline
// fails with ErrUpstreamTimeout.
type idleBody struct {
	io.ReadCloser
	ctx    context.Context
	d      time.Duration
	timer  *time.Timer
	cancel context.CancelFunc
}

func newIdleBody(ctx context.Context, rc io.ReadCloser, d time.Duration, cancel context.CancelFunc) *idleBody {
	return &idleBody{ReadCloser: rc, ctx: ctx, d: d, cancel: cancel, timer: time.AfterFunc(d, cancel)}
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	if err != nil && err != io.EOF {
		err = deadlineCause(b.ctx, err)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// readAnswer reads a whole upstream answer body, within ResponseLimit and the memory budget
// (released by release, which is never nil). An answer over either is an error, never passed.
func (h *HTTP) readAnswer(resp *http.Response) (_ []byte, release func(), err error) {
	b, release, err := h.budget.ReadAll(resp.Body, resp.ContentLength, h.o.ResponseLimit)
	switch {
	case errors.Is(err, sse.ErrTooLarge):
		err = fmt.Errorf("response over %d bytes", h.o.ResponseLimit)
	case errors.Is(err, sse.ErrBudget):
		err = errors.New("response does not fit the gateway's memory budget (limits.stream_buffer_bytes) now")
	}
	return b, release, err
}

// JudgeCost is the memory judging a message whose params (or result) are n bytes costs beyond
// those bytes, drawn from the budget while it is judged. Measured with one 4 MiB tools/call
// whose arguments are a flat array of two million zeros, and one whose arguments are a single
// string (go test -memprofile on an in-process gateway, six calls each): 30-42 MiB allocated per
// call besides the body, about 17 MiB of it encoding the envelope for the stages
// (encoding/json's growing buffer and its copy) and 15-19 MiB the plugin instance's memory
// growing to read it (wazero). Arguments are never decoded on the host, so the cost follows
// the bytes, not their shape: 8 per byte.
func JudgeCost(n int) int64 {
	const perByte = 8
	if n <= 16<<10 {
		return 0 // small messages are not counted, as the first 64 KiB of a body are not
	}
	return perByte * int64(n)
}

// holdJudging takes cost from b for a message being judged, but never more than half of b, so
// a message alone on the gateway is judged whatever the budget's size.
func holdJudging(b *sse.Budget, cost int64) (release func(), ok bool) {
	return b.Hold(min(cost, b.Size()/2))
}

// relayJSON judges a JSON answer (one message or a batch) and writes the answer to the request.
func (h *HTTP) relayJSON(ctx context.Context, rw *responder, resp *http.Response, r *relay) {
	t := time.Now()
	b, release, err := h.readAnswer(resp)
	r.waited += time.Since(t)
	defer release() // once the answer is written
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, ErrUpstreamTimeout) {
			status = http.StatusGatewayTimeout
			r.x.Outcome.Upstream.Error = err.Error()
		}
		rw.error(status, r.m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s: %v", r.up.Name, err), nil))
		return
	}
	for _, o := range r.filter(ctx, b) {
		if o.answer {
			rw.json(resp, o.b)
			return
		}
		// A JSON body answers one request: what else it carried cannot reach the client.
		h.o.Logger.Debug("upstream message beside a JSON answer dropped", "upstream", r.up.Name)
	}
	if ans := r.finish(ctx, nil); ans != nil {
		rw.json(resp, ans)
	}
}

// forwardRaw passes a notification or client response to the upstream (with hdr) and relays
// the answer's status.
func (h *HTTP) forwardRaw(c echo.Context, up *upstream, hdr http.Header, body []byte) error {
	start := time.Now()
	resp, err := h.send(c.Request().Context(), up, hdr, http.MethodPost, body)
	if err != nil {
		h.observe(up.Name, "error", start)
		return writeError(c, http.StatusBadGateway, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s unreachable: %v", up.Name, err), nil))
	}
	defer resp.Body.Close()
	h.observe(up.Name, "ok", start)
	// The upstream acknowledges a notification or response with a status and no body: any body
	// would reach the client unjudged, so only the status passes.
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, h.o.ResponseLimit)); errors.Is(err, ErrUpstreamTimeout) {
		return writeError(c, http.StatusGatewayTimeout, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s timed out: %v", up.Name, err), nil))
	}
	if resp.StatusCode >= 300 {
		return writeError(c, resp.StatusCode, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s answered HTTP %d", up.Name, resp.StatusCode), nil))
	}
	return c.NoContent(resp.StatusCode)
}

// postBatch judges every element of a JSON-RPC batch; allowed requests are forwarded one by one
// and the answers returned as one JSON array (progress notifications inside a batch are dropped).
func (h *HTTP) postBatch(c echo.Context, up *upstream, msgs []*mcp.Parsed) error {
	hdr := c.Request().Header.Clone()
	hdr.Set("Accept", "application/json, text/event-stream")
	var answers []json.RawMessage
	var held []func() // the answers' share of the memory budget, until the array is written
	defer func() {
		for _, release := range held {
			release()
		}
	}()
	for _, p := range msgs {
		m := p.Message
		b, _ := json.Marshal(m)
		if !m.IsRequest() {
			if nb, ok := h.judgeClientMessage(c.Request().Context(), up, c.Request().Header, p); !ok {
				if nb == nil {
					continue
				}
				b = nb
			}
			if resp, err := h.send(c.Request().Context(), up, hdr, http.MethodPost, b); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			continue
		}
		rec := &collector{}
		h.serveRequest(c.Request().Context(), &responder{sink: rec}, hdr, up, p, b)
		ans := rec.answer(m.ID)
		release, ok := h.budget.Hold(int64(len(ans)))
		if !ok {
			ans = mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeUpstream, "the answer does not fit the gateway's memory budget (limits.stream_buffer_bytes) now", nil))
		}
		held = append(held, release)
		answers = append(answers, ans)
	}
	if len(answers) == 0 {
		return c.NoContent(http.StatusAccepted)
	}
	out, _ := json.Marshal(answers)
	return c.JSONBlob(http.StatusOK, out)
}

func (h *HTTP) get(c echo.Context) error {
	if c.Param("name") == "" && h.agg != nil {
		return h.agg.get(c)
	}
	up, err := h.upstreamFor(c)
	if err != nil {
		return writeError(c, http.StatusNotFound, nil, mcp.NewError(mcp.CodeInvalidRequest, err.Error(), nil))
	}
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	go func() {
		select {
		case <-h.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := h.send(ctx, up, c.Request().Header, http.MethodGet, nil)
	if err != nil {
		return writeError(c, http.StatusBadGateway, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s unreachable: %v", up.Name, err), nil))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300:
		// 405 (no GET stream), 404 (unknown session): the status is what clients act on.
		return writeError(c, resp.StatusCode, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s answered HTTP %d", up.Name, resp.StatusCode), nil))
	case mediaType(resp.Header) != "text/event-stream":
		return writeError(c, http.StatusBadGateway, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s answered GET with %q, not an event stream", up.Name, resp.Header.Get("Content-Type")), nil))
	}
	// Headers go to the client now, not with the upstream's first event: clients (the Go SDK)
	// wait for them inside Connect, and an idle upstream may send nothing for a long time.
	rw := newResponder(c)
	rw.startSSE(resp)
	r := &relay{h: h, up: up, hdr: c.Request().Header}
	if err := r.stream(ctx, rw, resp); err != nil && ctx.Err() == nil {
		h.o.Logger.Debug("upstream GET stream ended", "upstream", up.Name, "err", err)
	}
	return nil
}

// judgeServerRequest judges a request the upstream sends the client (sampling/createMessage,
// elicitation/create, roots/list, ping, ...) and reports whether it may reach the client; a
// denied one is answered to the upstream with the deny, as over stdio. A request for a
// capability the client's session did not declare is refused without reaching the chain.
func (h *HTTP) judgeServerRequest(ctx context.Context, up *upstream, hdr http.Header, m *mcp.Message) bool {
	c := h.context(ctx, hdr)
	c.Server = up.Name
	env, err := mcp.NewEnvelope(m, c)
	if err != nil {
		h.o.Logger.Warn("upstream request refused", "method", m.Method, "upstream", up.Name, "err", err)
		h.answerUpstream(ctx, up, hdr, mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeInvalidRequest, "palisade proxy: "+err.Error(), nil)))
		return false
	}
	if need := mcp.NeededCapability(m.Method); need != "" {
		if s, ok := h.sessions.get(c.Session); !ok || !s.caps[need] {
			h.answerUpstream(ctx, up, hdr, h.o.Engine.RefuseServerRequest(ctx, env, need))
			return false
		}
	}
	if deny := h.o.Engine.JudgeServerRequest(ctx, &mcp.Parsed{Message: m, Envelope: env}); deny != nil {
		h.answerUpstream(ctx, up, hdr, deny)
		return false
	}
	h.asked.put(c.Session, m.ID, m.Method)
	return true
}

// judgeServerNotification judges a notification the upstream sends the client and reports
// whether it may reach the client; a denied one is dropped (the denial is recorded).
func (h *HTTP) judgeServerNotification(ctx context.Context, up *upstream, hdr http.Header, m *mcp.Message) bool {
	c := h.context(ctx, hdr)
	c.Server = up.Name
	env, err := mcp.NewEnvelope(m, c)
	if err != nil {
		h.o.Logger.Warn("upstream notification refused", "method", m.Method, "upstream", up.Name, "err", err)
		return false
	}
	if !h.o.Engine.JudgeMessage(ctx, env) {
		h.count(up.Name, "denied_notification")
		return false
	}
	return true
}

// judgeClientMessage judges what a client POSTs that is not a request: a notification, or its
// answer to a server request (judged in the response phase as that request's method). It
// returns ok, or for a refused answer the error to send the upstream instead (nil for a
// refused notification: nothing goes upstream).
func (h *HTTP) judgeClientMessage(ctx context.Context, up *upstream, hdr http.Header, p *mcp.Parsed) ([]byte, bool) {
	m := p.Message
	c := h.context(ctx, hdr)
	c.Server = up.Name
	if m.IsResponse() {
		env := mcp.AnswerEnvelope(m, c, h.asked.take(c.Session, m.ID))
		if h.o.Engine.JudgeMessage(ctx, env) {
			return nil, true
		}
		return mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeDenied, "palisade: the client's answer was denied by policy", nil)), false
	}
	env := p.Envelope
	env.Server = up.Name
	return nil, h.o.Engine.JudgeMessage(ctx, env)
}

// answerUpstream POSTs the gateway's own answer to a server request to the upstream, in the
// client's session.
func (h *HTTP) answerUpstream(ctx context.Context, up *upstream, hdr http.Header, b []byte) {
	ah := http.Header{}
	for _, k := range []string{mcp.HeaderSessionID, mcp.HeaderProtocolVersion} {
		if v := hdr.Values(k); len(v) > 0 {
			ah[k] = v
		}
	}
	ah.Set("Content-Type", "application/json")
	ah.Set("Accept", "application/json, text/event-stream")
	resp, err := h.send(context.WithoutCancel(ctx), up, ah, http.MethodPost, b)
	if err != nil {
		h.o.Logger.Warn("answer to upstream request failed", "upstream", up.Name, "err", err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

func (h *HTTP) del(c echo.Context) error {
	if c.Param("name") == "" && h.agg != nil {
		return h.agg.del(c)
	}
	up, err := h.upstreamFor(c)
	if err != nil {
		return writeError(c, http.StatusNotFound, nil, mcp.NewError(mcp.CodeInvalidRequest, err.Error(), nil))
	}
	h.sessions.del(c.Request().Header.Get(mcp.HeaderSessionID))
	resp, err := h.send(c.Request().Context(), up, c.Request().Header, http.MethodDelete, nil)
	if err != nil {
		return writeError(c, http.StatusBadGateway, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s unreachable: %v", up.Name, err), nil))
	}
	defer resp.Body.Close()
	newResponder(c).passthrough(resp)
	return nil
}

// session is what the gateway remembers of an MCP session.
type session struct {
	client   *abi.Client
	protocol string
	sampling bool            // the client declared the sampling capability
	caps     map[string]bool // every capability the client declared (mcp.Capabilities)
	// elicitURL: the client declared elicitation url mode (approvals asked in the client
	// link to the approval page).
	elicitURL bool
	// alias, on an upstream's session the aggregate endpoint opened, is the client's own
	// session on /mcp: what envelopes name and what the client's answers come back with.
	alias string
}

// sample sends sampling/createMessage to the client on the request's SSE answer and waits for
// the client to POST its response.
func (h *HTTP) sample(ctx context.Context, rw *responder, params json.RawMessage) (json.RawMessage, error) {
	res, err := h.clientRequest(ctx, rw, samplingIDPrefix, "", mcp.MethodSampling, params)
	if err != nil {
		return nil, fmt.Errorf("sampling: %w", err)
	}
	return res, nil
}

// deliver hands a client's answer (POSTed in session) to a request the gateway sent it
// (sampling, an approval asked in the client); false if it is not one. An answer to an
// approval question counts only in the session it was asked in.
func (h *HTTP) deliver(m *mcp.Message, session string) bool {
	var id string
	if json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, samplingIDPrefix) && !strings.HasPrefix(id, askIDPrefix) {
		return false
	}
	v, ok := h.pending.Load(id)
	if !ok {
		return true // late or unknown: ours all the same, never the upstream's
	}
	p := v.(clientPending)
	if p.session != "" && p.session != session {
		h.o.Logger.Warn("answer to a gateway request from another session dropped", "id", id)
		return true
	}
	select {
	case p.ch <- m:
	default:
	}
	return true
}

// bounded is a map that keeps at most max entries, dropping the oldest first: the gateway's
// per-session state (sessions, the server requests relayed to clients) must not grow with
// what clients open and never close.
type bounded[V any] struct {
	mu    sync.Mutex
	max   int
	m     map[string]V
	order []string // insertion order; may hold keys deleted since (compacted as it grows)
}

func newBounded[V any](max int) *bounded[V] { return &bounded[V]{max: max, m: map[string]V{}} }

func (t *bounded[V]) get(k string) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[k]
	return v, ok
}

func (t *bounded[V]) put(k string, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[k]; !ok {
		t.order = append(t.order, k)
	}
	t.m[k] = v
	for len(t.m) > t.max && len(t.order) > 0 {
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
	if len(t.order) > 2*t.max { // deleted entries leave their keys behind: compact
		live := t.order[:0]
		for _, k := range t.order {
			if _, ok := t.m[k]; ok {
				live = append(live, k)
			}
		}
		t.order = live
	}
}

// take removes k and returns what it held.
func (t *bounded[V]) take(k string) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.m[k]
	delete(t.m, k)
	return v
}

// sessionTable is what the gateway remembers of each MCP session, by session id.
type sessionTable struct{ *bounded[session] }

func newSessionTable(max int) *sessionTable { return &sessionTable{newBounded[session](max)} }

func (t *sessionTable) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	return t.bounded.get(id)
}

func (t *sessionTable) del(id string) { t.take(id) }

// askedTable remembers the method of each server→client request relayed to a client, by
// session and id, so the client's answer is judged as that method's answer; past max entries
// the oldest are forgotten (their answers are judged with no method).
type askedTable struct{ *bounded[string] }

func newAskedTable(max int) *askedTable { return &askedTable{newBounded[string](max)} }

func (t *askedTable) put(session string, id json.RawMessage, method string) {
	t.bounded.put(session+"\x00"+idKey(id), method)
}

func (t *askedTable) take(session string, id json.RawMessage) string {
	return t.bounded.take(session + "\x00" + idKey(id))
}
