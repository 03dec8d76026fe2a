package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/version"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
)

// Naming schemes of the aggregate endpoint (AggregateOptions.Names).
const (
	// NamesPrefix exposes every tool and prompt as <server>__<name>.
	NamesPrefix = "prefix"
	// NamesRefuse exposes names as the servers give them and refuses a name two servers offer.
	NamesRefuse = "refuse"
	// NameSeparator joins a server's name and a tool or prompt name under NamesPrefix.
	NameSeparator = "__"
)

// AggregateOptions configure /mcp when there are several upstreams: the gateway serves them
// all as one MCP server.
type AggregateOptions struct {
	// Names is how tool and prompt names from different servers are kept apart: NamesPrefix
	// (every name becomes <server>__<name>) or NamesRefuse (names as given; a name two servers
	// offer fails the list that finds it, naming both). "" = NamesPrefix.
	Names string
}

// ErrAmbiguousName is a tool or prompt name two upstreams offer under NamesRefuse.
var ErrAmbiguousName = errors.New("aggregate: ambiguous name")

// protocolVersions are the session protocol versions the aggregate endpoint speaks.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// aggregator serves /mcp over every upstream. Each client session (aggSession) holds one
// session per upstream, opened by an initialize the gateway sends; every upstream exchange goes
// through serveRequest, so it is judged exactly as on /mcp/<name>.
type aggregator struct {
	h     *HTTP
	names string
	order []*upstream // config order: merged lists keep it

	mu       sync.Mutex
	sessions map[string]*aggSession
	fifo     []string
	// stateless serves clients of the sessionless protocol: owner tables only.
	stateless *aggSession
	seq       atomic.Uint64
}

func newAggregator(h *HTTP, o AggregateOptions, order []*upstream) *aggregator {
	if o.Names == "" {
		o.Names = NamesPrefix
	}
	a := &aggregator{h: h, names: o.Names, order: order, sessions: map[string]*aggSession{}}
	a.stateless = a.newSession("")
	return a
}

// aggSession is one client session on /mcp and what it holds of each upstream.
type aggSession struct {
	id       string
	protocol string
	init     json.RawMessage // the client's initialize params, sent to each upstream
	client   *abi.Client
	sampling bool
	caps     map[string]bool
	done     chan struct{}

	mu      sync.Mutex
	ups     map[string]*upSession
	owners  map[string]map[string]owner // list method → exposed name or URI → owner
	tmpls   []template
	pending map[string]pendingRequest // rewritten server-request ids → where they came from
	streams []func(*upstream, *upSession)
	closed  bool
	// notes are the gateway's own notifications for the client's GET stream (list_changed
	// when an upstream that was down comes back); dropped when no stream reads them.
	notes chan []byte
}

// upSession is a client session's session on one upstream.
type upSession struct {
	mu           sync.Mutex
	ready        bool
	id           string // the upstream's Mcp-Session-Id ("" for a stateless upstream)
	protocol     string
	caps         map[string]json.RawMessage
	instructions string
}

// owner is who offers an exposed name: the upstream and the name it gave.
type owner struct {
	up        *upstream
	name      string
	ambiguous string // another upstream offering the same name or URI
}

type template struct {
	re *regexp.Regexp
	up *upstream
}

type pendingRequest struct {
	up  *upstream
	id  json.RawMessage
	hdr http.Header
}

func (a *aggregator) newSession(id string) *aggSession {
	return &aggSession{id: id, done: make(chan struct{}), notes: make(chan []byte, 8), ups: map[string]*upSession{}, owners: map[string]map[string]owner{}, pending: map[string]pendingRequest{}}
}

func (a *aggregator) session(id string) *aggSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

func (a *aggregator) put(s *aggSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions[s.id] = s
	a.fifo = append(a.fifo, s.id)
	for len(a.sessions) > 10000 && len(a.fifo) > 0 {
		if old := a.sessions[a.fifo[0]]; old != nil {
			old.close()
		}
		delete(a.sessions, a.fifo[0])
		a.fifo = a.fifo[1:]
	}
}

func (a *aggregator) remove(id string) *aggSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	delete(a.sessions, id)
	if i := slices.Index(a.fifo, id); i >= 0 {
		a.fifo = slices.Delete(a.fifo, i, i+1)
	}
	return s
}

func (s *aggSession) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

func (s *aggSession) upState(name string) *upSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	us := s.ups[name]
	if us == nil {
		us = &upSession{}
		s.ups[name] = us
	}
	return us
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type aggKey struct{}

// aggFrom returns the client session an upstream exchange runs for on /mcp; nil on /mcp/<name>.
func aggFrom(ctx context.Context) *aggSession {
	s, _ := ctx.Value(aggKey{}).(*aggSession)
	return s
}

// sessionFor finds the client session a POST, GET or DELETE belongs to; it writes the error
// and returns nil when there is none.
func (a *aggregator) sessionFor(c echo.Context) *aggSession {
	hdr := c.Request().Header
	if sid := hdr.Get(mcp.HeaderSessionID); sid != "" {
		if s := a.session(sid); s != nil {
			return s
		}
		_ = writeError(c, http.StatusNotFound, nil, mcp.NewError(mcp.CodeInvalidRequest, "unknown or closed session: initialize again", nil))
		return nil
	}
	if hdr.Get(mcp.HeaderProtocolVersion) >= mcp.Stateless {
		return a.stateless
	}
	_ = writeError(c, http.StatusBadRequest, nil, mcp.NewError(mcp.CodeInvalidRequest, "missing "+mcp.HeaderSessionID+": initialize first", nil))
	return nil
}

// post serves a POST on the aggregate endpoint.
func (a *aggregator) post(c echo.Context) error {
	h := a.h
	_, msgs, batch, release, done := h.readPost(c, "")
	defer release()
	if done {
		return nil
	}
	ctx := c.Request().Context()
	hdr := c.Request().Header
	if !batch && msgs[0].Message.Method == mcp.MethodInitialize && msgs[0].Message.IsRequest() {
		a.initialize(ctx, c, msgs[0])
		return nil
	}
	s := a.sessionFor(c)
	if s == nil {
		return nil
	}
	ctx = context.WithValue(ctx, aggKey{}, s)
	if batch {
		var answers []json.RawMessage
		for _, p := range msgs {
			if !p.Message.IsRequest() {
				a.clientMessage(ctx, s, hdr, p)
				continue
			}
			rec := &collector{}
			a.serve(ctx, &responder{sink: rec}, hdr, s, p)
			answers = append(answers, rec.answer(p.Message.ID))
		}
		if len(answers) == 0 {
			return c.NoContent(http.StatusAccepted)
		}
		out, _ := json.Marshal(answers)
		return c.JSONBlob(http.StatusOK, out)
	}
	p := msgs[0]
	if p.Message.IsResponse() && h.deliver(p.Message, c.Request().Header.Get(mcp.HeaderSessionID)) {
		return c.NoContent(http.StatusAccepted)
	}
	if !p.Message.IsRequest() {
		if status, err := a.clientMessage(ctx, s, hdr, p); err != nil {
			return writeError(c, status, nil, err)
		}
		return c.NoContent(http.StatusAccepted)
	}
	rw := newResponder(c)
	if s != a.stateless {
		rw.headers = http.Header{mcp.HeaderSessionID: {s.id}, mcp.HeaderProtocolVersion: {s.protocol}}
	}
	a.serve(ctx, rw, hdr, s, p)
	return nil
}

// clientMessage judges a notification or a client's answer to a server request and passes it
// on: an answer to the upstream that asked, a notification to every open upstream session
// (notifications/initialized is the gateway's own to send).
func (a *aggregator) clientMessage(ctx context.Context, s *aggSession, hdr http.Header, p *mcp.Parsed) (int, *mcp.Error) {
	h := a.h
	m := p.Message
	if m.IsResponse() {
		var id string
		_ = json.Unmarshal(m.ID, &id)
		s.mu.Lock()
		pr, ok := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		if !ok {
			return http.StatusBadRequest, mcp.NewError(mcp.CodeInvalidRequest, "the answer's id matches no request the gateway relayed in this session", nil)
		}
		m2 := *m
		m2.ID = pr.id
		b, _ := json.Marshal(&m2)
		if nb, ok := h.judgeClientMessage(ctx, pr.up, pr.hdr, &mcp.Parsed{Message: &m2}); !ok {
			b = nb
		}
		if resp, err := h.send(ctx, pr.up, pr.hdr, http.MethodPost, b); err == nil {
			drain(resp)
		}
		return 0, nil
	}
	p.Envelope.Server = ""
	if !h.o.Engine.JudgeMessage(ctx, p.Envelope) {
		return http.StatusForbidden, mcp.NewError(mcp.CodeDenied, "denied by policy: "+m.Method+" was not forwarded", nil)
	}
	if m.Method == "notifications/initialized" || s == a.stateless {
		return 0, nil
	}
	b, _ := json.Marshal(m)
	for _, up := range a.order {
		us := s.upState(up.Name)
		us.mu.Lock()
		ready := us.ready
		us.mu.Unlock()
		if !ready {
			continue
		}
		if resp, err := h.send(ctx, up, a.upHeader(s, us, hdr, ""), http.MethodPost, b); err == nil {
			drain(resp)
		}
	}
	return 0, nil
}

func drain(resp *http.Response) {
	buf := make([]byte, 4096)
	for n := 0; n < 1<<20; {
		k, err := resp.Body.Read(buf)
		n += k
		if err != nil {
			break
		}
	}
	resp.Body.Close()
}

// initialize answers the client's initialize itself: the request and the answer are judged
// like any call's; the session to each upstream is opened by the gateway, which merges their
// capabilities and instructions.
func (a *aggregator) initialize(ctx context.Context, c echo.Context, p *mcp.Parsed) {
	h := a.h
	rw := newResponder(c)
	var params struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(p.Message.Params, &params)
	s := a.newSession(newSessionID())
	s.protocol = params.ProtocolVersion
	if !slices.Contains(protocolVersions, s.protocol) {
		s.protocol = protocolVersions[len(protocolVersions)-1]
	}
	s.init, s.client, s.sampling, s.caps = p.Message.Params, p.Envelope.Client, p.Sampling, mcp.Capabilities(p.Message.Params)
	p.Envelope.Session = s.id
	x, ok := a.begin(ctx, rw, p)
	if !ok {
		return
	}
	defer x.Finish(ctx)
	h.sessions.put(s.id, session{client: s.client, protocol: s.protocol, sampling: s.sampling, caps: s.caps})
	a.put(s)
	// The upstreams' sessions open now (their capabilities make the gateway's); one that is
	// down is opened on a later need, after its backoff.
	ictx := context.WithValue(ctx, aggKey{}, s)
	var wg sync.WaitGroup
	for _, up := range a.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.open(ictx, s, up); err != nil {
				h.o.Logger.Warn("aggregate: upstream session not opened", "upstream", up.Name, "err", err)
			}
		}()
	}
	wg.Wait()
	merged := newMergedCaps()
	for _, up := range a.order {
		us := s.upState(up.Name)
		us.mu.Lock()
		merged.add(up.Name, us.caps, us.instructions)
		us.mu.Unlock()
	}
	res := map[string]any{
		"protocolVersion": s.protocol,
		"serverInfo":      map[string]string{"name": "palisade", "title": "Palisade gateway", "version": version.String()},
	}
	merged.into(res)
	rb, _ := json.Marshal(res)
	rw.w().Header().Set(mcp.HeaderSessionID, s.id)
	rw.json(nil, x.Answer(ctx, &mcp.Message{JSONRPC: "2.0", Result: rb}))
}

// begin judges a request the gateway answers itself (no upstream): the request phase now, the
// answer through Exchange.Answer. When the request is not forwarded it answers the client
// (the deny, or the error) and returns false; otherwise the caller answers and finishes x.
func (a *aggregator) begin(ctx context.Context, rw *responder, p *mcp.Parsed) (*engine.Exchange, bool) {
	p.Envelope.ID, p.Envelope.Server = audit.NewID(), ""
	x, err := a.h.o.Engine.Begin(ctx, p, nil)
	if err != nil {
		rw.error(http.StatusServiceUnavailable, p.Message.ID, mcp.NewError(mcp.CodeInternalError, "gateway: "+err.Error(), nil))
		return nil, false
	}
	if step, _, _ := x.Forward(); step != engine.StepForward {
		rw.json(nil, x.Deny())
		x.Finish(ctx)
		return nil, false
	}
	return x, true
}

// mergedCaps are the capabilities and instructions the aggregate endpoint declares: list
// changes and resource subscriptions of its own, plus every capability an upstream declares
// (logging, completions); each upstream's instructions prefixed with its name.
type mergedCaps struct {
	caps  map[string]any
	instr []string
}

func newMergedCaps() *mergedCaps {
	return &mergedCaps{caps: map[string]any{
		"tools":     map[string]any{"listChanged": true},
		"prompts":   map[string]any{"listChanged": true},
		"resources": map[string]any{"listChanged": true, "subscribe": true},
	}}
}

// add takes one upstream's capabilities and instructions.
func (m *mergedCaps) add(name string, caps map[string]json.RawMessage, instructions string) {
	for k := range caps {
		if m.caps[k] == nil && k != "experimental" {
			m.caps[k] = map[string]any{}
		}
	}
	if instructions != "" {
		m.instr = append(m.instr, name+": "+instructions)
	}
}

// into sets capabilities and, when there are any, instructions in res.
func (m *mergedCaps) into(res map[string]any) {
	res["capabilities"] = m.caps
	if len(m.instr) > 0 {
		res["instructions"] = strings.Join(m.instr, "\n\n")
	}
}

// answerLocal judges a request the gateway answers itself with msg.
func (a *aggregator) answerLocal(ctx context.Context, rw *responder, p *mcp.Parsed, msg *mcp.Message) {
	x, ok := a.begin(ctx, rw, p)
	if !ok {
		return
	}
	defer x.Finish(ctx)
	msg.JSONRPC = "2.0"
	rw.json(nil, x.Answer(ctx, msg))
}

// open opens (once) the client session's session on up: the gateway's initialize, with the
// client's params, through serveRequest (judged), then notifications/initialized.
func (a *aggregator) open(ctx context.Context, s *aggSession, up *upstream) (*upSession, error) {
	h := a.h
	us := s.upState(up.Name)
	us.mu.Lock()
	defer us.mu.Unlock()
	if us.ready {
		return us, nil
	}
	if s == a.stateless {
		us.ready = true
		return us, nil
	}
	if err := up.health.due(); err != nil {
		return nil, err
	}
	ans, hdr, err := a.call(ctx, s, nil, up, mcp.MethodInitialize, s.init)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	var res struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		Instructions    string                     `json:"instructions"`
	}
	_ = json.Unmarshal(ans, &res)
	us.id, us.protocol, us.caps, us.instructions = hdr.Get(mcp.HeaderSessionID), res.ProtocolVersion, res.Capabilities, res.Instructions
	if us.id != "" {
		h.sessions.put(us.id, session{client: s.client, protocol: us.protocol, sampling: s.sampling, caps: s.caps, alias: s.id})
	}
	if resp, err := h.send(ctx, up, a.upHeader(s, us, nil, ""), http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err == nil {
		drain(resp)
	}
	us.ready = true
	s.mu.Lock()
	streams := slices.Clone(s.streams)
	s.mu.Unlock()
	for _, f := range streams {
		if us.id != "" {
			f(up, us)
		}
	}
	return us, nil
}

// forget drops a client session's session on up after it failed, so the next need opens a new one.
func (s *aggSession) forget(up string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ups, up)
}

// upHeader is the header of a request to up in s: the client's (hdr, or none when nil; send
// strips the client's token either way) with the upstream's session and protocol, and Mcp-Name set to the name the
// upstream knows (name, when the client sent the header).
func (a *aggregator) upHeader(s *aggSession, us *upSession, hdr http.Header, name string) http.Header {
	var out http.Header
	if hdr != nil {
		out = hdr.Clone()
	} else {
		out = http.Header{}
	}
	out.Set("Content-Type", "application/json")
	out.Set("Accept", "application/json, text/event-stream")
	out.Del(mcp.HeaderLastEventID)
	if us == nil {
		return out
	}
	if us.id != "" {
		out.Set(mcp.HeaderSessionID, us.id)
	} else {
		out.Del(mcp.HeaderSessionID)
	}
	if us.protocol != "" {
		out.Set(mcp.HeaderProtocolVersion, us.protocol)
	}
	if name != "" && out.Get(mcp.HeaderName) != "" {
		out.Set(mcp.HeaderName, name)
	}
	return out
}

// call sends the gateway's own request (initialize, a list page) to up in s through
// serveRequest, so it is judged like the client's, and returns the result and the answer's
// headers. us is nil for initialize.
func (a *aggregator) call(ctx context.Context, s *aggSession, us *upSession, up *upstream, method string, params json.RawMessage) (json.RawMessage, http.Header, error) {
	hdr := a.upHeader(s, us, nil, "")
	if us != nil && us.protocol >= mcp.Stateless {
		hdr.Set(mcp.HeaderMethod, method)
	}
	return a.callWith(ctx, s, up, hdr, method, params)
}

// callWith is call with the request's headers given.
func (a *aggregator) callWith(ctx context.Context, s *aggSession, up *upstream, hdr http.Header, method string, params json.RawMessage) (json.RawMessage, http.Header, error) {
	h := a.h
	id, _ := json.Marshal("palisade-aggregate-" + strconv.FormatUint(a.seq.Add(1), 10))
	body, _ := json.Marshal(&mcp.Message{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	p, err := mcp.Parse(body, mcp.Context{Transport: "http", Session: s.id, ProtocolVersion: s.protocol, Client: s.client, Principal: authn.FromContext(ctx)})
	if err != nil {
		return nil, nil, err
	}
	rec := &collector{}
	h.serveRequest(ctx, &responder{sink: rec}, hdr, up, p, body)
	if rec.last == nil {
		return nil, nil, errors.New("no answer")
	}
	m, err := mcp.ParseMessage(rec.last)
	if err != nil {
		return nil, nil, err
	}
	if m.Error != nil {
		return nil, nil, m.Error
	}
	return m.Result, rec.header, nil
}

// serve answers one client request on the aggregate endpoint.
func (a *aggregator) serve(ctx context.Context, rw *responder, hdr http.Header, s *aggSession, p *mcp.Parsed) {
	m := p.Message
	switch m.Method {
	case mcp.MethodInitialize:
		rw.error(http.StatusBadRequest, m.ID, mcp.NewError(mcp.CodeInvalidRequest, "initialize must be the only message of its POST", nil))
	case "ping":
		a.answerLocal(ctx, rw, p, &mcp.Message{Result: json.RawMessage(`{}`)})
	case mcp.MethodToolsList, "prompts/list", "resources/list", "resources/templates/list":
		a.list(ctx, rw, s, p)
	case "logging/setLevel":
		a.broadcast(ctx, rw, s, p)
	case mcp.MethodServerDiscover:
		a.discoverServer(ctx, rw, hdr, s, p)
	case mcp.MethodSubscriptionsListen:
		a.listen(ctx, rw, hdr, s, p)
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead, "resources/subscribe", "resources/unsubscribe", "completion/complete":
		a.route(ctx, rw, hdr, s, p)
	default:
		a.answerLocal(ctx, rw, p, &mcp.Message{Error: mcp.NewError(mcp.CodeMethodNotFound, "method "+m.Method+" is not served on the aggregate endpoint; use /mcp/<name>", nil)})
	}
}

// listKey is the result field of each list method.
var listKey = map[string]string{
	mcp.MethodToolsList:        "tools",
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
}

// maxListPages bounds the pages the gateway reads from one upstream for one list.
const maxListPages = 50

// list answers a list with every upstream's items, each upstream's pages judged as on
// /mcp/<name>. An upstream that is down or fails is left out (named in _meta).
func (a *aggregator) list(ctx context.Context, rw *responder, s *aggSession, p *mcp.Parsed) {
	method := p.Message.Method
	items, down, err := a.discover(ctx, s, method)
	if err != nil {
		rw.json(nil, mcp.ErrorResponse(p.Message.ID, mcp.NewError(mcp.CodeInvalidParams, err.Error(), nil)))
		return
	}
	res := map[string]any{listKey[method]: items}
	if len(down) > 0 {
		res["_meta"] = map[string]any{"palisade/unavailable": down}
	}
	rb, _ := json.Marshal(res)
	b, _ := json.Marshal(&mcp.Message{JSONRPC: "2.0", ID: p.Message.ID, Result: rb})
	rw.json(nil, b)
}

// discover lists method on every upstream (concurrently), renames per the naming scheme,
// records who owns each name or URI in s, and returns the merged items and the upstreams left
// out.
func (a *aggregator) discover(ctx context.Context, s *aggSession, method string) ([]json.RawMessage, []string, error) {
	key := listKey[method]
	per := make([][]json.RawMessage, len(a.order))
	errs := make([]error, len(a.order))
	var wg sync.WaitGroup
	for i, up := range a.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			per[i], errs[i] = a.listOne(ctx, s, up, method, key)
		}()
	}
	wg.Wait()
	var items []json.RawMessage
	var down []string
	owners := map[string]owner{}
	var tmpls []template
	for i, up := range a.order {
		if errs[i] != nil {
			a.h.o.Logger.Warn("aggregate: upstream left out of the list", "upstream", up.Name, "method", method, "err", errs[i])
			down = append(down, up.Name)
			continue
		}
		for _, it := range per[i] {
			var obj map[string]json.RawMessage
			if json.Unmarshal(it, &obj) != nil {
				continue
			}
			var name, uri string
			_ = json.Unmarshal(obj["name"], &name)
			_ = json.Unmarshal(obj["uri"], &uri)
			switch key {
			case "tools", "prompts":
				exposed := name
				if a.names == NamesPrefix {
					exposed = up.Name + NameSeparator + name
					obj["name"], _ = json.Marshal(exposed)
					it, _ = json.Marshal(obj)
				}
				if o, ok := owners[exposed]; ok {
					return nil, nil, fmt.Errorf("%w: %s %q is offered by both %q and %q (aggregate.names: refuse); rename one, or set aggregate.names: prefix",
						ErrAmbiguousName, strings.TrimSuffix(key, "s"), name, o.up.Name, up.Name)
				}
				owners[exposed] = owner{up: up, name: name}
			case "resources":
				if o, ok := owners[uri]; ok {
					o.ambiguous = up.Name
					owners[uri] = o
				} else {
					owners[uri] = owner{up: up, name: uri}
				}
			case "resourceTemplates":
				var t string
				_ = json.Unmarshal(obj["uriTemplate"], &t)
				if re := templateRegexp(t); re != nil {
					tmpls = append(tmpls, template{re: re, up: up})
				}
			}
			items = append(items, it)
		}
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	s.mu.Lock()
	if key == "resourceTemplates" {
		s.tmpls = tmpls
	} else {
		s.owners[method] = owners
	}
	s.mu.Unlock()
	return items, down, nil
}

// listOne reads every page of method from up.
func (a *aggregator) listOne(ctx context.Context, s *aggSession, up *upstream, method, key string) ([]json.RawMessage, error) {
	us, err := a.open(ctx, s, up)
	if err != nil {
		return nil, err
	}
	if !a.declares(us, key) {
		return nil, nil
	}
	var out []json.RawMessage
	var cursor string
	for range maxListPages {
		var params json.RawMessage
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res, _, err := a.call(ctx, s, us, up, method, params)
		if err != nil {
			var je *mcp.Error
			if !errors.As(err, &je) || je.Code == mcp.CodeUpstream {
				s.forget(up.Name) // its session may be gone with it: the next need opens a new one
			}
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("%s result: %w", method, err)
		}
		var items []json.RawMessage
		_ = json.Unmarshal(page[key], &items)
		out = append(out, items...)
		cursor = ""
		_ = json.Unmarshal(page["nextCursor"], &cursor)
		if cursor == "" {
			break
		}
	}
	return out, nil
}

// declares reports whether an upstream session's server declared the capability a list needs
// (a stateless upstream, whose capabilities the gateway did not read, is asked anyway).
func (a *aggregator) declares(us *upSession, key string) bool {
	if us.caps == nil {
		return true
	}
	switch key {
	case "tools":
		return us.caps["tools"] != nil
	case "prompts":
		return us.caps["prompts"] != nil
	}
	return us.caps["resources"] != nil
}

// templateRegexp turns an RFC 6570 URI template into a regexp over URIs: {+var} and {#var}
// take anything, other expressions one path segment.
func templateRegexp(t string) *regexp.Regexp {
	if t == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("^")
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(t))
			break
		}
		b.WriteString(regexp.QuoteMeta(t[:i]))
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return nil
		}
		expr := t[i+1 : i+j]
		switch {
		case strings.HasPrefix(expr, "+"), strings.HasPrefix(expr, "#"):
			b.WriteString(".*")
		case strings.HasPrefix(expr, "?"), strings.HasPrefix(expr, "&"):
			b.WriteString("(?:[?&].*)?")
		default:
			b.WriteString("[^/?#]*")
		}
		t = t[i+j+1:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return re
}

// routeParams is what a routed request names.
type routeParams struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
	Ref  *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
}

// route sends a call to the upstream that owns what it names, with the name that upstream
// knows, through serveRequest: judged as on /mcp/<name>, with the envelope naming the server
// and the original name.
func (a *aggregator) route(ctx context.Context, rw *responder, hdr http.Header, s *aggSession, p *mcp.Parsed) {
	m := p.Message
	var rp routeParams
	_ = json.Unmarshal(m.Params, &rp)
	var o owner
	var err error
	switch {
	case m.Method == mcp.MethodToolsCall:
		o, err = a.owner(ctx, s, mcp.MethodToolsList, rp.Name)
	case m.Method == mcp.MethodPromptsGet:
		o, err = a.owner(ctx, s, "prompts/list", rp.Name)
	case m.Method == "completion/complete" && rp.Ref != nil && rp.Ref.Type == "ref/prompt":
		o, err = a.owner(ctx, s, "prompts/list", rp.Ref.Name)
	case m.Method == "completion/complete" && rp.Ref != nil:
		o, err = a.resourceOwner(ctx, s, rp.Ref.URI)
	default:
		o, err = a.resourceOwner(ctx, s, rp.URI)
	}
	if err != nil {
		a.answerLocal(ctx, rw, p, &mcp.Message{Error: mcp.NewError(mcp.CodeInvalidParams, err.Error(), nil)})
		return
	}
	params := m.Params
	if o.name != "" && (m.Method == mcp.MethodToolsCall || m.Method == mcp.MethodPromptsGet || m.Method == "completion/complete" && rp.Ref.Type == "ref/prompt") {
		params, err = renameParam(m.Params, m.Method == "completion/complete", o.name)
		if err != nil {
			rw.error(http.StatusBadRequest, m.ID, mcp.NewError(mcp.CodeInvalidParams, err.Error(), nil))
			return
		}
	}
	us, err := a.open(ctx, s, o.up)
	if err != nil {
		rw.error(http.StatusBadGateway, m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s: %v", o.up.Name, err), map[string]string{"upstream": o.up.Name}))
		return
	}
	m2 := *m
	m2.Params = params
	body, _ := json.Marshal(&m2)
	p2, err := mcp.Parse(body, a.h.context(ctx, hdr))
	if err != nil {
		rw.error(http.StatusBadRequest, m.ID, mcp.NewError(mcp.CodeInvalidRequest, err.Error(), nil))
		return
	}
	a.h.serveRequest(ctx, rw, a.upHeader(s, us, hdr, o.name), o.up, p2, body)
}

// renameParam sets params.name (params.ref.name for completion/complete) to name.
func renameParam(params json.RawMessage, ref bool, name string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil {
		return nil, err
	}
	nb, _ := json.Marshal(name)
	if ref {
		var r map[string]json.RawMessage
		if err := json.Unmarshal(obj["ref"], &r); err != nil {
			return nil, err
		}
		r["name"] = nb
		obj["ref"], _ = json.Marshal(r)
	} else {
		obj["name"] = nb
	}
	return json.Marshal(obj)
}

// owner finds who offers an exposed tool or prompt name: by its prefix under NamesPrefix,
// else from the last list (listed again when the name is not in it).
func (a *aggregator) owner(ctx context.Context, s *aggSession, list, name string) (owner, error) {
	what := strings.TrimSuffix(list, "s/list")
	if a.names == NamesPrefix {
		server, orig, ok := strings.Cut(name, NameSeparator)
		if ok {
			for _, up := range a.order {
				if up.Name == server {
					return owner{up: up, name: orig}, nil
				}
			}
		}
		return owner{}, fmt.Errorf("%s %q names no upstream: names on this endpoint are <server>%s<name>", what, name, NameSeparator)
	}
	for range 2 {
		s.mu.Lock()
		o, ok := s.owners[list][name]
		s.mu.Unlock()
		if ok {
			return o, nil
		}
		if _, _, err := a.discover(ctx, s, list); err != nil {
			return owner{}, err
		}
	}
	return owner{}, fmt.Errorf("no upstream offers %s %q", what, name)
}

// resourceOwner finds who offers a resource URI: a listed resource, else a listed template.
func (a *aggregator) resourceOwner(ctx context.Context, s *aggSession, uri string) (owner, error) {
	for try := range 2 {
		s.mu.Lock()
		o, ok := s.owners["resources/list"][uri]
		var byTmpl []*upstream
		for _, t := range s.tmpls {
			if t.re.MatchString(uri) && !slices.Contains(byTmpl, t.up) {
				byTmpl = append(byTmpl, t.up)
			}
		}
		s.mu.Unlock()
		switch {
		case ok && o.ambiguous != "":
			return owner{}, fmt.Errorf("%w: resource %q is offered by both %q and %q; read it on /mcp/<name>", ErrAmbiguousName, uri, o.up.Name, o.ambiguous)
		case ok:
			return owner{up: o.up}, nil
		case len(byTmpl) == 1:
			return owner{up: byTmpl[0]}, nil
		case len(byTmpl) > 1:
			return owner{}, fmt.Errorf("%w: resource %q matches templates of both %q and %q; read it on /mcp/<name>", ErrAmbiguousName, uri, byTmpl[0].Name, byTmpl[1].Name)
		}
		if try == 0 {
			if _, _, err := a.discover(ctx, s, "resources/list"); err != nil {
				return owner{}, err
			}
			if _, _, err := a.discover(ctx, s, "resources/templates/list"); err != nil {
				return owner{}, err
			}
		}
	}
	return owner{}, fmt.Errorf("no upstream offers resource %q", uri)
}

// broadcast sends a request (logging/setLevel) to every upstream whose session is open or
// opens, each judged, and answers the client with an empty result once all have answered.
func (a *aggregator) broadcast(ctx context.Context, rw *responder, s *aggSession, p *mcp.Parsed) {
	var wg sync.WaitGroup
	for _, up := range a.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			us, err := a.open(ctx, s, up)
			if err == nil {
				_, _, err = a.call(ctx, s, us, up, p.Message.Method, p.Message.Params)
			}
			if err != nil {
				a.h.o.Logger.Debug("aggregate: broadcast failed", "upstream", up.Name, "method", p.Message.Method, "err", err)
			}
		}()
	}
	wg.Wait()
	a.answerLocal(ctx, rw, p, &mcp.Message{Result: json.RawMessage(`{}`)})
}

// serverRequest gives a request an upstream sends the client an id of the gateway's own, so
// answers from the client go back to the upstream that asked, with its id.
func (s *aggSession) serverRequest(up *upstream, hdr http.Header, m *mcp.Message, seq uint64) []byte {
	id := "palisade-upstream-" + strconv.FormatUint(seq, 10)
	s.mu.Lock()
	if len(s.pending) >= 1000 {
		for k := range s.pending {
			delete(s.pending, k)
			break
		}
	}
	s.pending[id] = pendingRequest{up: up, id: m.ID, hdr: hdr.Clone()}
	s.mu.Unlock()
	m2 := *m
	m2.ID, _ = json.Marshal(id)
	b, _ := json.Marshal(&m2)
	return b
}

// listChanged handles an upstream's notifications/*/list_changed: the session's owner table
// for that list is rebuilt from the upstreams in the background (the notification itself is
// forwarded to the client, which lists again).
func (a *aggregator) listChanged(s *aggSession, method string) {
	list := strings.TrimPrefix(strings.TrimSuffix(method, "/list_changed"), "notifications/") + "/list"
	if _, ok := listKey[list]; !ok || s == a.stateless {
		return
	}
	go func() {
		ctx := context.WithValue(context.Background(), aggKey{}, s)
		if _, _, err := a.discover(ctx, s, list); err != nil {
			a.h.o.Logger.Warn("aggregate: rediscovery after list_changed failed", "method", list, "err", err)
		}
		if list == "resources/list" {
			_, _, _ = a.discover(ctx, s, "resources/templates/list")
		}
	}()
}

// get serves the client's GET stream: the upstreams' GET streams of its sessions, merged, each
// message judged as on /mcp/<name>; an upstream session opened later joins the stream.
func (a *aggregator) get(c echo.Context) error {
	h := a.h
	s := a.sessionFor(c)
	if s == nil {
		return nil
	}
	if s == a.stateless {
		return writeError(c, http.StatusMethodNotAllowed, nil, mcp.NewError(mcp.CodeInvalidRequest, "no GET stream without a session", nil))
	}
	ctx, cancel := context.WithCancel(context.WithValue(c.Request().Context(), aggKey{}, s))
	defer cancel()
	rw := newResponder(c)
	rw.startSSE(nil)
	// The relays write to rw: the handler waits for them before it returns (after that the
	// response is net/http's again), and one started after it stopped does nothing.
	var relays sync.WaitGroup
	var relaysMu sync.Mutex
	stopped := false
	defer func() {
		relaysMu.Lock()
		stopped = true
		relaysMu.Unlock()
		cancel()
		relays.Wait()
	}()
	relayUp := func(up *upstream, us *upSession) {
		relaysMu.Lock()
		defer relaysMu.Unlock()
		if stopped {
			return
		}
		relays.Add(1)
		go func() {
			defer relays.Done()
			hdr := a.upHeader(s, us, nil, "")
			hdr.Set("Accept", "text/event-stream")
			resp, err := h.send(ctx, up, hdr, http.MethodGet, nil)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode >= 300 || mediaType(resp.Header) != "text/event-stream" {
				return
			}
			r := &relay{h: h, up: up, hdr: hdr}
			if err := r.stream(ctx, rw, resp); err != nil && ctx.Err() == nil {
				h.o.Logger.Debug("aggregate: upstream GET stream ended", "upstream", up.Name, "err", err)
			}
		}()
	}
	s.mu.Lock()
	s.streams = append(s.streams, relayUp)
	idx := len(s.streams) - 1
	open := map[*upstream]*upSession{}
	for _, up := range a.order {
		if us := s.ups[up.Name]; us != nil {
			open[up] = us
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if idx < len(s.streams) {
			s.streams[idx] = func(*upstream, *upSession) {}
		}
		s.mu.Unlock()
	}()
	for up, us := range open {
		us.mu.Lock()
		ready := us.ready && us.id != ""
		us.mu.Unlock()
		if ready {
			relayUp(up, us)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.closing:
			return nil
		case <-s.done:
			return nil
		case b := <-s.notes:
			if err := rw.event(&sse.Event{Data: b}); err != nil {
				return nil
			}
		}
	}
}

// recovered runs when up answers again after being down: every session that has no session on
// it yet opens one (its GET stream joins the client's), the session's lists are discovered
// again, and the client is told that the lists it saw changed (notifications/*/list_changed on
// its GET stream), so tools of a server that came back are offered again without a reconnect.
func (a *aggregator) recovered(up *upstream) {
	a.mu.Lock()
	sessions := make([]*aggSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	for _, s := range sessions {
		if s == a.stateless {
			continue
		}
		us := s.upState(up.Name)
		us.mu.Lock()
		ready := us.ready
		us.mu.Unlock()
		if ready {
			continue
		}
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), aggKey{}, s), 30*time.Second)
		us, err := a.open(ctx, s, up)
		if err != nil {
			cancel()
			a.h.o.Logger.Debug("aggregate: session on a recovered upstream not opened", "upstream", up.Name, "err", err)
			continue
		}
		for _, l := range []struct{ list, cap, note string }{
			{mcp.MethodToolsList, "tools", "notifications/tools/list_changed"},
			{"prompts/list", "prompts", "notifications/prompts/list_changed"},
			{"resources/list", "resources", "notifications/resources/list_changed"},
		} {
			if !a.declares(us, l.cap) {
				continue
			}
			_, _, _ = a.discover(ctx, s, l.list)
			select {
			case s.notes <- []byte(`{"jsonrpc":"2.0","method":"` + l.note + `"}`):
			default: // no stream is reading: the client lists again when it next connects
			}
		}
		cancel()
	}
}

// del ends the client's session and its session on every upstream.
func (a *aggregator) del(c echo.Context) error {
	h := a.h
	sid := c.Request().Header.Get(mcp.HeaderSessionID)
	s := a.remove(sid)
	if s == nil {
		return writeError(c, http.StatusNotFound, nil, mcp.NewError(mcp.CodeInvalidRequest, "unknown session", nil))
	}
	s.close()
	h.sessions.del(sid)
	s.mu.Lock()
	ups := make(map[string]*upSession, len(s.ups))
	for k, v := range s.ups {
		ups[k] = v
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, up := range a.order {
		us := ups[up.Name]
		if us == nil {
			continue
		}
		us.mu.Lock()
		id := us.id
		us.mu.Unlock()
		if id == "" {
			continue
		}
		h.sessions.del(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := h.send(context.WithoutCancel(c.Request().Context()), up, a.upHeader(s, us, nil, ""), http.MethodDelete, nil); err == nil {
				drain(resp)
			}
		}()
	}
	wg.Wait()
	return c.NoContent(http.StatusNoContent)
}
