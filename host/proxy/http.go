package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
)

// Upstream is one MCP server behind the gateway.
type Upstream struct {
	Name    string
	URL     string
	Timeout time.Duration     // time to the response headers; 0 = 60s
	Headers map[string]string // added to every forwarded request
}

// HTTPOptions configure the Streamable HTTP proxy.
type HTTPOptions struct {
	Upstreams     []Upstream
	Engine        *Engine // required
	BodyLimit     int64   // request body cap; 0 = 4 MiB
	ResponseLimit int64   // cap on one upstream message judged in the response phase; 0 = 16 MiB
	// StreamIdleTimeout ends an upstream's SSE answer to a POST that sends nothing (not even a
	// keepalive comment) for this long; 0 = 5m. GET streams are the client's to hold.
	StreamIdleTimeout time.Duration
	// StreamBudget is the memory all upstream SSE events being read at once may hold; an event
	// past it ends its stream with an error. 0 = 256 MiB.
	StreamBudget int64
	Metrics      *Metrics     // nil = none
	Logger       *slog.Logger // nil = discard
	// Tools, if set, sees every tools/list result before the client (tool pinning and
	// description sanitizing, host/pin).
	Tools ToolsObserver
	// SamplingContext, if set, is given a way to send sampling/createMessage to the client of
	// a request (when its session declared the sampling capability and the protocol allows
	// server-to-client requests mid-call) and returns the context the request is judged in
	// (the gateway puts it where the LLM judge's mcp provider finds it).
	SamplingContext func(ctx context.Context, sample func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)) context.Context
}

// HTTP is the Streamable HTTP proxy: POST, GET and DELETE on /mcp/<upstream> (and /mcp when there
// is one upstream), for protocol versions 2024-11-05 through 2025-11-25 (sessions) and the
// stateless 2026-07-28.
type HTTP struct {
	o         HTTPOptions
	upstreams map[string]*upstream
	only      *upstream
	sessions  *sessionTable
	closing   chan struct{} // closed by Close: long-lived GET streams end
	closeOnce sync.Once
	pending   sync.Map // id → chan *mcp.Message: sampling requests sent to clients
	budget    *sse.Budget
}

// samplingIDPrefix marks the ids of requests the gateway itself sends to clients, so their
// answers are taken here instead of forwarded upstream.
const samplingIDPrefix = "palisade-sampling-"

// Close ends the long-lived GET streams so an HTTP server shutdown does not wait on them.
func (h *HTTP) Close() { h.closeOnce.Do(func() { close(h.closing) }) }

type upstream struct {
	Upstream
	client *http.Client
}

// Headers passed through to the upstream, and back to the client.
var (
	forwardRequestHeaders = []string{"Accept", "Content-Type", mcp.HeaderSessionID, mcp.HeaderProtocolVersion,
		mcp.HeaderMethod, mcp.HeaderName, mcp.HeaderLastEventID, "Authorization",
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
	h := &HTTP{o: o, upstreams: map[string]*upstream{}, sessions: newSessionTable(10000), closing: make(chan struct{}), budget: sse.NewBudget(o.StreamBudget)}
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
		h.upstreams[u.Name] = &upstream{Upstream: u, client: &http.Client{Transport: tr}}
	}
	if len(o.Upstreams) == 1 {
		h.only = h.upstreams[o.Upstreams[0].Name]
	}
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
	up, err := h.upstreamFor(c)
	if err != nil {
		h.count(c.Param("name"), "unknown_upstream")
		return writeError(c, http.StatusNotFound, nil, mcp.NewError(mcp.CodeInvalidRequest, err.Error(), nil))
	}
	req := c.Request()
	body, err := io.ReadAll(io.LimitReader(req.Body, h.o.BodyLimit+1))
	if err != nil {
		return writeError(c, http.StatusBadRequest, nil, mcp.NewError(mcp.CodeParseError, "read body: "+err.Error(), nil))
	}
	if int64(len(body)) > h.o.BodyLimit {
		h.count(up.Name, "too_large")
		return writeError(c, http.StatusRequestEntityTooLarge, nil, mcp.NewError(mcp.CodeTooLarge,
			fmt.Sprintf("request body is over the gateway's limit of %d bytes", h.o.BodyLimit), nil))
	}
	msgs, batch, err := parseStrict(body)
	if err != nil {
		code := mcp.CodeInvalidRequest
		if errors.Is(err, mcp.ErrNotJSON) {
			code = mcp.CodeParseError
		}
		h.count(up.Name, "malformed")
		return writeError(c, http.StatusBadRequest, nil, mcp.NewError(code, err.Error(), nil))
	}
	if batch {
		return h.postBatch(c, up, msgs)
	}
	m := msgs[0]
	if m.IsResponse() && h.deliver(m) {
		return c.NoContent(http.StatusAccepted)
	}
	if !m.IsRequest() {
		// Notifications and the client's responses pass through unjudged.
		return h.forwardRaw(c, up, body)
	}
	if err := checkHeaders(req.Header, m); err != nil {
		h.count(up.Name, "header_mismatch")
		return writeError(c, http.StatusBadRequest, m.ID, mcp.NewError(mcp.CodeHeaderMismatch, err.Error(), nil))
	}
	rw := newResponder(c)
	h.serveRequest(c.Request().Context(), rw, c.Request().Header, up, m, body)
	return nil
}

// parseStrict parses a POST body and refuses what JSON parsers would read differently (a key
// given twice or in two cases, a significant key in another case), so the chain judges exactly
// the call the upstream will run.
func parseStrict(body []byte) ([]*mcp.Message, bool, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, false, mcp.ErrEmpty
	}
	if body[0] != '[' {
		m, err := StrictMessage(body)
		if err != nil {
			return nil, false, err
		}
		return []*mcp.Message{m}, false, nil
	}
	if _, _, err := mcp.ParseBody(body); err != nil {
		return nil, true, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, true, fmt.Errorf("%w: %v", mcp.ErrNotJSON, err)
	}
	out := make([]*mcp.Message, 0, len(raws))
	for _, r := range raws {
		m, err := StrictMessage(r)
		if err != nil {
			return nil, true, err
		}
		out = append(out, m)
	}
	return out, true, nil
}

// checkHeaders refuses a request whose Mcp-Method or Mcp-Name header disagrees with its body.
func checkHeaders(hdr http.Header, m *mcp.Message) error {
	if v := hdr.Get(mcp.HeaderMethod); v != "" && v != m.Method {
		return fmt.Errorf("Mcp-Method header %q does not match the body's method %q", v, m.Method)
	}
	if v := hdr.Get(mcp.HeaderName); v != "" {
		name, uri, _ := mcp.Target(m)
		if m.Method == mcp.MethodResourcesRead {
			name = uri
		}
		if v != name {
			return fmt.Errorf("Mcp-Name header %q does not match the body's name %q", v, name)
		}
	}
	if hdr.Get(mcp.HeaderProtocolVersion) >= mcp.Stateless && hdr.Get(mcp.HeaderMethod) == "" {
		return fmt.Errorf("protocol %s requires the Mcp-Method header", hdr.Get(mcp.HeaderProtocolVersion))
	}
	return nil
}

func (h *HTTP) context(hdr http.Header, up *upstream, m *mcp.Message) mcp.Context {
	ctx := mcp.Context{Transport: "http", Server: up.Name, Session: hdr.Get(mcp.HeaderSessionID), ProtocolVersion: hdr.Get(mcp.HeaderProtocolVersion)}
	if s, ok := h.sessions.get(ctx.Session); ok {
		ctx.Client = s.client
		if ctx.ProtocolVersion == "" {
			ctx.ProtocolVersion = s.protocol
		}
	}
	if m.Method == mcp.MethodInitialize {
		ctx.Client, ctx.ProtocolVersion = mcp.ClientInfo(m.Params)
	}
	return ctx
}

// serveRequest judges one request, forwards it if allowed, judges the answer and writes it.
func (h *HTTP) serveRequest(ctx context.Context, rw *responder, hdr http.Header, up *upstream, m *mcp.Message, body []byte) {
	env := mcp.Envelope(m, h.context(hdr, up, m), audit.NewID())
	if tok := mcp.ProgressToken(m.Params); tok != nil && acceptsSSE(hdr) {
		ctx = WithProgress(ctx, rw.progressFunc(tok))
	}
	if h.o.SamplingContext != nil && acceptsSSE(hdr) && rw.sink == nil && env.ProtocolVersion < mcp.Stateless {
		if s, ok := h.sessions.get(env.Session); ok && s.sampling {
			ctx = h.o.SamplingContext(ctx, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
				return h.sample(ctx, rw, params)
			})
		}
	}
	out, err := h.o.Engine.Request(ctx, env)
	if err != nil {
		h.count(up.Name, "error")
		rw.error(http.StatusServiceUnavailable, m.ID, mcp.NewError(mcp.CodeInternalError, "gateway: "+err.Error(), nil))
		return
	}
	defer func() {
		rw.send() // the client has its answer before the audit event is built
		out.Finish(ctx)
	}()
	if !out.Allowed() {
		h.count(up.Name, "denied")
		if params, _, ok := out.Fallback(); ok {
			h.serveFallback(ctx, rw, hdr, up, m, out, params)
			return
		}
		rw.error(http.StatusOK, m.ID, out.Deny())
		return
	}
	if params, changed := out.ForwardParams(); changed {
		m2 := *m
		m2.Params = params
		body, _ = json.Marshal(&m2)
	}
	start := time.Now()
	resp, err := h.send(ctx, up, hdr, http.MethodPost, body)
	if err != nil {
		h.upstreamFailed(ctx, rw, up, m, out, start, err)
		return
	}
	defer resp.Body.Close()
	out.Upstream = &audit.Upstream{Status: resp.StatusCode}
	h.observe(up.Name, "ok", start)
	if m.Method == mcp.MethodInitialize {
		if sid := resp.Header.Get(mcp.HeaderSessionID); sid != "" {
			h.sessions.put(sid, session{client: env.Client, protocol: env.ProtocolVersion, sampling: mcp.DeclaresSampling(m.Params)})
		}
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		h.relayStream(ctx, rw, resp, up, m, out)
	case strings.HasPrefix(ct, "application/json"):
		h.relayJSON(ctx, rw, resp, up, m, out)
	default:
		rw.passthrough(resp)
	}
	out.Upstream.LatencyUS = time.Since(start).Microseconds()
	h.count(up.Name, "ok")
}

// serveFallback calls the fallback tool a denied call named instead, and answers with its result
// marked as a fallback. If the fallback fails, the client gets the deny.
func (h *HTTP) serveFallback(ctx context.Context, rw *responder, hdr http.Header, up *upstream, m *mcp.Message, out *Outcome, params json.RawMessage) {
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
	var answer []byte
	ct := resp.Header.Get("Content-Type")
	raw, err := io.ReadAll(io.LimitReader(resp.Body, h.o.ResponseLimit))
	if err == nil && strings.HasPrefix(ct, "text/event-stream") {
		raw = answerInStream(raw)
	}
	if msg, perr := mcp.ParseMessage(raw); err == nil && perr == nil && msg.IsResponse() && msg.Error == nil {
		msg.Result = out.MarkFallback(msg.Result)
		answer, _ = json.Marshal(msg)
	}
	if answer == nil {
		rw.error(http.StatusOK, m.ID, out.Deny())
		return
	}
	rw.json(nil, answer)
}

func (h *HTTP) observe(server, outcome string, start time.Time) {
	if h.o.Metrics != nil {
		h.o.Metrics.Upstream(server, outcome, time.Since(start))
	}
}

func (h *HTTP) upstreamFailed(ctx context.Context, rw *responder, up *upstream, m *mcp.Message, out *Outcome, start time.Time, err error) {
	reason := "unreachable"
	status := http.StatusBadGateway
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
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
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, up.URL, rd)
	if err != nil {
		return nil, err
	}
	for _, k := range forwardRequestHeaders {
		if v := hdr.Values(k); len(v) > 0 {
			req.Header[k] = v
		}
	}
	for k, v := range hdr {
		if strings.HasPrefix(strings.ToLower(k), "mcp-param-") {
			req.Header[k] = v
		}
	}
	for k, v := range up.Headers {
		req.Header.Set(k, v)
	}
	if method != http.MethodPost {
		return up.client.Do(req)
	}
	// A POST's answer stream ends when the upstream goes quiet for StreamIdleTimeout.
	ictx, cancel := context.WithCancel(ctx)
	resp, err := up.client.Do(req.WithContext(ictx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = newIdleBody(resp.Body, h.o.StreamIdleTimeout, cancel)
	return resp, nil
}

// idleBody cancels its request when no byte arrives for d.
type idleBody struct {
	io.ReadCloser
	d      time.Duration
	timer  *time.Timer
	cancel context.CancelFunc
}

func newIdleBody(rc io.ReadCloser, d time.Duration, cancel context.CancelFunc) *idleBody {
	return &idleBody{ReadCloser: rc, d: d, cancel: cancel, timer: time.AfterFunc(d, cancel)}
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// relayJSON judges a single JSON answer in the response phase and writes it.
func (h *HTTP) relayJSON(ctx context.Context, rw *responder, resp *http.Response, up *upstream, m *mcp.Message, out *Outcome) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, h.o.ResponseLimit+1))
	if err != nil || int64(len(b)) > h.o.ResponseLimit {
		if err == nil {
			err = fmt.Errorf("response over %d bytes", h.o.ResponseLimit)
		}
		rw.error(http.StatusBadGateway, m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s: %v", up.Name, err), nil))
		return
	}
	b = h.judgeResponse(ctx, b, m, out)
	rw.json(resp, b)
}

// judgeResponse runs the response phase on an upstream message if it answers m, and returns the
// bytes to send on.
func (h *HTTP) judgeResponse(ctx context.Context, b []byte, m *mcp.Message, out *Outcome) []byte {
	msg, err := mcp.ParseMessage(b)
	if err != nil || !msg.IsResponse() || !bytes.Equal(bytes.TrimSpace(msg.ID), bytes.TrimSpace(m.ID)) {
		return b
	}
	if m.Method == mcp.MethodToolsList && h.o.Tools != nil && msg.Result != nil {
		if res, err := h.o.Tools.ObserveTools(ctx, out.Envelope.Server, msg.Result); err == nil && res != nil {
			msg.Result = res
			nb, err := json.Marshal(msg)
			if err == nil {
				b = nb
			}
		} else if err != nil {
			h.o.Logger.Warn("tool pinning", "upstream", out.Envelope.Server, "err", err)
		}
	}
	d, err := h.o.Engine.Response(ctx, out, msg)
	if err != nil {
		return b
	}
	switch {
	case d.Action == abi.ActionDeny:
		return mcp.ErrorResponse(m.ID, out.Deny())
	case len(d.Result) > 0:
		msg.Result = d.Result
		nb, err := json.Marshal(msg)
		if err == nil {
			return nb
		}
	}
	return b
}

// relayStream passes SSE events through as they arrive; the event that answers m is judged first.
func (h *HTTP) relayStream(ctx context.Context, rw *responder, resp *http.Response, up *upstream, m *mcp.Message, out *Outcome) {
	rw.startSSE(resp)
	r := sse.NewReader(resp.Body, int(h.o.ResponseLimit)).WithBudget(h.budget)
	defer r.Release()
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				h.o.Logger.Warn("upstream stream broke", "upstream", up.Name, "audit_id", out.AuditID, "err", err)
				if out.Upstream != nil {
					out.Upstream.Error = err.Error()
				}
			}
			return
		}
		if (ev.Name == "" || ev.Name == "message") && len(ev.Data) > 0 {
			ev.Data = h.judgeResponse(ctx, ev.Data, m, out)
		}
		if err := rw.event(ev); err != nil {
			return // client gone
		}
	}
}

// forwardRaw passes a notification or client response to the upstream and relays the answer.
func (h *HTTP) forwardRaw(c echo.Context, up *upstream, body []byte) error {
	start := time.Now()
	resp, err := h.send(c.Request().Context(), up, c.Request().Header, http.MethodPost, body)
	if err != nil {
		h.observe(up.Name, "error", start)
		return writeError(c, http.StatusBadGateway, nil, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s unreachable: %v", up.Name, err), nil))
	}
	defer resp.Body.Close()
	h.observe(up.Name, "ok", start)
	newResponder(c).passthrough(resp)
	return nil
}

// postBatch judges every element of a JSON-RPC batch; allowed requests are forwarded one by one
// and the answers returned as one JSON array (progress notifications inside a batch are dropped).
func (h *HTTP) postBatch(c echo.Context, up *upstream, msgs []*mcp.Message) error {
	hdr := c.Request().Header.Clone()
	hdr.Set("Accept", "application/json, text/event-stream")
	var answers []json.RawMessage
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		if !m.IsRequest() {
			if resp, err := h.send(c.Request().Context(), up, hdr, http.MethodPost, b); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			continue
		}
		if err := checkHeadersBatch(m); err != nil {
			answers = append(answers, mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeInvalidRequest, err.Error(), nil)))
			continue
		}
		rec := &collector{}
		h.serveRequest(c.Request().Context(), &responder{sink: rec}, hdr, up, m, b)
		answers = append(answers, rec.answer(m.ID))
	}
	if len(answers) == 0 {
		return c.NoContent(http.StatusAccepted)
	}
	out, _ := json.Marshal(answers)
	return c.JSONBlob(http.StatusOK, out)
}

func checkHeadersBatch(m *mcp.Message) error {
	if m.Method == "" {
		return errors.New("batch element without method")
	}
	return nil
}

func (h *HTTP) get(c echo.Context) error {
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
	newResponder(c).passthrough(resp)
	return nil
}

func (h *HTTP) del(c echo.Context) error {
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
	sampling bool // the client declared the sampling capability
}

// sample sends sampling/createMessage to the client on the request's SSE answer and waits for
// the client to POST its response.
func (h *HTTP) sample(ctx context.Context, rw *responder, params json.RawMessage) (json.RawMessage, error) {
	id := samplingIDPrefix + audit.NewID()
	ch := make(chan *mcp.Message, 1)
	h.pending.Store(id, ch)
	defer h.pending.Delete(id)
	rawID, _ := json.Marshal(id)
	b, _ := json.Marshal(mcp.Message{JSONRPC: "2.0", ID: rawID, Method: mcp.MethodSampling, Params: params})
	if err := rw.event(&sse.Event{Name: "message", Data: b}); err != nil {
		return nil, fmt.Errorf("sampling: write to client: %w", err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("sampling: client answered %w", m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("sampling: no answer from the client: %w", ctx.Err())
	}
}

// deliver hands a client's answer to a sampling request the gateway sent; false if it is not one.
func (h *HTTP) deliver(m *mcp.Message) bool {
	var id string
	if json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, samplingIDPrefix) {
		return false
	}
	v, ok := h.pending.Load(id)
	if !ok {
		return true // late or unknown: ours all the same, never the upstream's
	}
	select {
	case v.(chan *mcp.Message) <- m:
	default:
	}
	return true
}

// sessionTable is a bounded map of sessions; the oldest is dropped when full.
type sessionTable struct {
	mu    sync.Mutex
	max   int
	m     map[string]session
	order []string
}

func newSessionTable(max int) *sessionTable {
	return &sessionTable{max: max, m: map[string]session{}}
}

func (t *sessionTable) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	return s, ok
}

func (t *sessionTable) put(id string, s session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[id]; !ok {
		t.order = append(t.order, id)
	}
	t.m[id] = s
	for len(t.m) > t.max && len(t.order) > 0 {
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *sessionTable) del(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}
