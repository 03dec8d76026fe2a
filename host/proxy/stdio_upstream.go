package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/version"
)

// ErrStdioDown is the transport error of a stdio upstream whose process is not running (it
// exited and waits for its restart, or could not start).
var ErrStdioDown = errors.New("stdio upstream down")

// StdioUpstreamOptions configure NewStdioUpstream.
type StdioUpstreamOptions struct {
	Name    string   // the upstream's name, in logs; required
	Command string   // the stdio MCP server; required
	Args    []string // its arguments
	Env     []string // its whole environment; nil = this process's
	Dir     string   // its working directory; "" = this process's
	// Grace is how long the child has to exit after SIGTERM (Close) before SIGKILL; 0 = 5s.
	Grace time.Duration
	// StartTimeout bounds one start, from launch to the child's answer to initialize; a child
	// that misses it is killed and restarted. 0 = 30s.
	StartTimeout time.Duration
	// MaxLineBytes bounds one JSON-RPC line from the child (a longer one ends the child, which
	// is restarted) and one request body; 0 = 16 MiB.
	MaxLineBytes int
	Logger       *slog.Logger // nil = discard
}

func (o StdioUpstreamOptions) withDefaults() StdioUpstreamOptions {
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 16 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// StdioUpstream runs a local stdio MCP server and lets the HTTP proxy reach it as if it spoke
// Streamable HTTP: it is the http.RoundTripper of that upstream (Upstream.Transport), so
// /mcp/<name>, the aggregate /mcp and health treat it like any other upstream, and every
// message is judged once, by the proxy. It judges nothing itself.
//
// One process serves every client session: the StdioUpstream initializes it once per start
// (declaring no client capabilities) and answers each session's initialize with that result
// and a session id of its own. Request ids and progress tokens are rewritten to its own so
// sessions cannot collide, and answers go back to the session that asked. Server
// notifications other than progress go to every session's GET stream. Requests from the
// server (sampling, elicitation, roots) are refused to the server (-32601), ping is answered.
//
// A supervisor starts the process, restarts it when it exits (0.5 s doubling to 30 s,
// starting over after a child that ran 30 s), logs each stderr line with the upstream's name,
// and Close stops it (SIGTERM, then SIGKILL after Grace). Sessions outlive a restart; calls in
// flight when the child exits end without an answer. While no child runs, RoundTrip fails
// (ErrStdioDown), which the proxy's health reads as down.
//
// # Notes
//
// No port is opened: nothing but the proxy can send the server a message.
type StdioUpstream struct {
	o       StdioUpstreamOptions
	closing chan struct{}
	done    chan struct{}
	nextID  atomic.Int64

	mu       sync.Mutex
	closed   bool
	proc     *stdioChild   // the latest child launched, until it exits
	child    *stdioChild   // the child that answered initialize; nil while down or starting
	starting bool          // a child is being launched and initialized
	down     error         // why no child runs (when !starting and child == nil)
	ready    chan struct{} // closed when the start under way ends, ready or not
	onState  func(error)   // health: nil = up, else down
	sessions map[string]*bridgeSession
	order    []string // session ids by age, for evicting the oldest
}

// maxBridgeSessions bounds the sessions a StdioUpstream keeps; past it the oldest is dropped.
const maxBridgeSessions = 10000

type stdioChild struct {
	cmd    *exec.Cmd
	wmu    sync.Mutex
	stdin  io.WriteCloser
	init   json.RawMessage // the child's initialize result
	exited chan struct{}

	mu       sync.Mutex
	calls    map[int64]*bridgeCall  // by the bridge's request id
	progress map[string]*bridgeCall // by the bridge's progress token
	byClient map[string]int64       // session id + "\x00" + client id → bridge id (cancellation)
}

type bridgeCall struct {
	id     json.RawMessage // the client's id
	token  json.RawMessage // the client's progress token; nil = none
	ptoken string          // the bridge's progress token
	ckey   string          // its byClient key
	events chan []byte     // progress notifications, in the client's terms
	resp   chan []byte     // the answer, with the client's id
}

type bridgeSession struct {
	id    string
	notes chan []byte   // server notifications for the GET stream
	gone  chan struct{} // closed by DELETE or eviction
	get   atomic.Bool   // a GET stream is open
}

// NewStdioUpstream starts the supervisor, which launches the child at once; requests wait for
// the first start (up to StartTimeout).
func NewStdioUpstream(o StdioUpstreamOptions) (*StdioUpstream, error) {
	o = o.withDefaults()
	if o.Name == "" || o.Command == "" {
		return nil, errors.New("proxy: stdio upstream: Name and Command are required")
	}
	s := &StdioUpstream{o: o, closing: make(chan struct{}), done: make(chan struct{}), starting: true,
		ready: make(chan struct{}), sessions: map[string]*bridgeSession{}}
	go s.run()
	return s, nil
}

// URL is a placeholder URL for the upstream's requests: no request leaves the process.
func (s *StdioUpstream) URL() string { return "http://stdio.invalid/" + s.o.Name }

// PID is the process id of the running child; 0 while none runs.
func (s *StdioUpstream) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.cmd.Process == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Close stops the supervisor and the child: SIGTERM, then SIGKILL after Grace. It waits for the
// child to exit or ctx to end.
func (s *StdioUpstream) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	c := s.proc
	s.mu.Unlock()
	if c != nil {
		_ = signalGroup(c.cmd, syscall.SIGTERM)
		t := time.NewTimer(s.o.Grace)
		select {
		case <-c.exited:
			t.Stop()
		case <-t.C:
			s.o.Logger.Warn("stdio upstream ignored SIGTERM; killing it", "upstream", s.o.Name, "grace", s.o.Grace)
		case <-ctx.Done():
		}
		// What the child started goes too, whether or not the child itself is gone.
		_ = signalGroup(c.cmd, syscall.SIGKILL)
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watch sets the function told of every start (nil) and exit (the error); it is told the
// current state at once when that is known.
func (s *StdioUpstream) watch(f func(error)) {
	s.mu.Lock()
	s.onState = f
	up, down := s.child != nil, !s.starting && s.child == nil && s.down != nil
	err := s.down
	s.mu.Unlock()
	switch {
	case up:
		f(nil)
	case down:
		f(err)
	}
}

// run launches the child, waits for it to exit and launches it again after the backoff, until
// Close.
func (s *StdioUpstream) run() {
	defer close(s.done)
	backoff := minBackoff
	for {
		start := time.Now()
		err := s.runChild()
		if s.isClosed() {
			s.setDown(errors.New("closed"))
			return
		}
		s.setDown(err)
		if time.Since(start) >= maxBackoff {
			backoff = minBackoff
		}
		s.o.Logger.Warn("stdio upstream exited; restarting", "upstream", s.o.Name, "err", err, "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-s.closing:
			t.Stop()
			s.setDown(errors.New("closed"))
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
		s.setStarting()
	}
}

func (s *StdioUpstream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// runChild runs one child from launch to exit and returns why it ended.
func (s *StdioUpstream) runChild() error {
	cmd := exec.Command(s.o.Command, s.o.Args...)
	cmd.Env, cmd.Dir = s.o.Env, s.o.Dir
	cmd.Stderr = &stderrLog{log: s.o.Logger, name: s.o.Name}
	cmd.WaitDelay = time.Second // a grandchild holding stderr does not hold up Wait
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// An os.Pipe, not StdoutPipe: Wait may run while the reader is still reading, and closing
	// the read end after the exit unblocks a reader a grandchild would otherwise hold.
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = pw
	c := &stdioChild{cmd: cmd, stdin: stdin, exited: make(chan struct{}), calls: map[int64]*bridgeCall{},
		progress: map[string]*bridgeCall{}, byClient: map[string]int64{}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		pr.Close()
		pw.Close()
		return errors.New("closed")
	}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		s.mu.Unlock()
		pr.Close()
		return fmt.Errorf("start %s: %w", s.o.Command, err)
	}
	s.proc = c
	s.mu.Unlock()
	s.o.Logger.Info("stdio upstream started", "upstream", s.o.Name, "pid", cmd.Process.Pid)

	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(c.exited)
		time.AfterFunc(time.Second, func() { pr.Close() })
	}()
	readErr := make(chan error, 1)
	go func() { readErr <- s.read(c, pr) }()

	if err := s.initialize(c); err != nil {
		_ = signalGroup(cmd, syscall.SIGKILL)
		<-c.exited
		return fmt.Errorf("initialize: %w", err)
	}
	<-c.exited
	_ = signalGroup(cmd, syscall.SIGKILL) // what it started does not outlive it
	c.failAll()
	select {
	case err := <-readErr:
		if err != nil {
			return err
		}
	case <-time.After(time.Second):
	}
	if waitErr != nil {
		return waitErr
	}
	return errors.New("exited")
}

// initialize opens the child's one MCP session, as a client that declares no capabilities.
func (s *StdioUpstream) initialize(c *stdioChild) error {
	id := s.nextID.Add(1)
	call := &bridgeCall{events: make(chan []byte, 1), resp: make(chan []byte, 1)}
	c.mu.Lock()
	c.calls[id] = call
	c.mu.Unlock()
	params := map[string]any{"protocolVersion": protocolVersions[len(protocolVersions)-1], "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "palisade", "version": version.String()}}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params})
	if err := c.write(msg); err != nil {
		return err
	}
	t := time.NewTimer(s.o.StartTimeout)
	defer t.Stop()
	var b []byte
	select {
	case b = <-call.resp:
	case <-c.exited:
		return errors.New("exited before answering initialize")
	case <-t.C:
		return fmt.Errorf("no answer to initialize within %s", s.o.StartTimeout)
	case <-s.closing:
		return errors.New("closed")
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *mcp.Error      `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if r.Error != nil || len(r.Result) == 0 {
		return fmt.Errorf("initialize refused: %v", r.Error)
	}
	c.init = r.Result
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return err
	}
	s.mu.Lock()
	s.child = c
	s.starting = false
	s.down = nil
	close(s.ready)
	f := s.onState
	s.mu.Unlock()
	s.o.Logger.Info("stdio upstream ready", "upstream", s.o.Name, "pid", c.cmd.Process.Pid)
	if f != nil {
		f(nil)
	}
	return nil
}

func (s *StdioUpstream) setStarting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.starting {
		s.starting = true
		s.ready = make(chan struct{})
	}
}

func (s *StdioUpstream) setDown(err error) {
	s.mu.Lock()
	s.child, s.proc = nil, nil
	if s.starting {
		s.starting = false
		close(s.ready)
	}
	s.down = fmt.Errorf("%w: %s: %w", ErrStdioDown, s.o.Name, err)
	f, derr := s.onState, s.down
	s.mu.Unlock()
	if f != nil {
		f(derr)
	}
}

// current returns the ready child, waiting for a start under way (up to StartTimeout).
func (s *StdioUpstream) current(ctx context.Context) (*stdioChild, error) {
	for range 2 {
		s.mu.Lock()
		c, starting, ready, down := s.child, s.starting, s.ready, s.down
		s.mu.Unlock()
		if c != nil {
			return c, nil
		}
		if !starting {
			if down == nil {
				down = ErrStdioDown
			}
			return nil, down
		}
		t := time.NewTimer(s.o.StartTimeout)
		select {
		case <-ready:
			t.Stop()
		case <-t.C:
			return nil, fmt.Errorf("%w: %s: still starting after %s", ErrStdioDown, s.o.Name, s.o.StartTimeout)
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrStdioDown, s.o.Name)
}

func (c *stdioChild) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.stdin.Write(append(b[:len(b):len(b)], '\n')); err != nil {
		return fmt.Errorf("%w: write: %w", ErrStdioDown, err)
	}
	return nil
}

// failAll ends every call in flight: the child exited.
func (c *stdioChild) failAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.calls)
	clear(c.progress)
	clear(c.byClient)
}

func (c *stdioChild) unregister(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if call := c.calls[id]; call != nil {
		delete(c.progress, call.ptoken)
		delete(c.byClient, call.ckey)
	}
	delete(c.calls, id)
}

// read handles the child's stdout, one line at a time, until EOF.
func (s *StdioUpstream) read(c *stdioChild, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > s.o.MaxLineBytes {
				_ = signalGroup(c.cmd, syscall.SIGKILL)
				return fmt.Errorf("a line over %d bytes", s.o.MaxLineBytes)
			}
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			s.fromChild(c, bytes.Clone(bytes.TrimSpace(line))) // kept: broadcast and answers hold it
		}
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		}
	}
}

// fromChild routes one message from the child: an answer to the call that asked, progress to
// its call, other notifications to every session's GET stream; a request from the server is
// answered here.
func (s *StdioUpstream) fromChild(c *stdioChild, line []byte) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		s.o.Logger.Warn("stdio upstream wrote a line that is not a JSON-RPC message; dropped", "upstream", s.o.Name, "bytes", len(line))
		return
	}
	var method string
	_ = json.Unmarshal(m["method"], &method)
	id, hasID := m["id"]
	hasID = hasID && string(id) != "null"
	switch {
	case method != "" && hasID:
		var out []byte
		if method == "ping" {
			out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{}})
		} else {
			s.o.Logger.Debug("stdio upstream request refused", "upstream", s.o.Name, "method", method)
			out = mcp.ErrorResponse(id, mcp.NewError(-32601, "palisade relays no requests from a stdio upstream to its clients", nil))
		}
		_ = c.write(out)
	case method == "notifications/progress":
		var p map[string]json.RawMessage
		var tok string
		if json.Unmarshal(m["params"], &p) != nil || json.Unmarshal(p["progressToken"], &tok) != nil {
			return
		}
		c.mu.Lock()
		call := c.progress[tok]
		c.mu.Unlock()
		if call == nil {
			return
		}
		p["progressToken"] = call.token
		m["params"], _ = json.Marshal(p)
		b, _ := json.Marshal(m)
		select {
		case call.events <- b:
		default: // a client that does not read its progress loses some
		}
	case method != "":
		s.broadcast(line)
	case hasID:
		var n int64
		if json.Unmarshal(id, &n) != nil {
			return
		}
		c.mu.Lock()
		call := c.calls[n]
		c.mu.Unlock()
		if call == nil {
			return
		}
		if call.id != nil {
			m["id"] = call.id
			line, _ = json.Marshal(m)
		}
		select {
		case call.resp <- line:
		default:
		}
	}
}

func (s *StdioUpstream) broadcast(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range s.sessions {
		if !ss.get.Load() {
			continue
		}
		select {
		case ss.notes <- b:
		default:
		}
	}
}

func (s *StdioUpstream) newSession() (*bridgeSession, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	ss := &bridgeSession{id: hex.EncodeToString(r[:]), notes: make(chan []byte, 64), gone: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.sessions) >= maxBridgeSessions && len(s.order) > 0 {
		if old := s.sessions[s.order[0]]; old != nil {
			delete(s.sessions, old.id)
			close(old.gone)
		}
		s.order = s.order[1:]
	}
	if len(s.order) > 2*maxBridgeSessions { // drop ids DELETE already removed
		live := s.order[:0]
		for _, id := range s.order {
			if s.sessions[id] != nil {
				live = append(live, id)
			}
		}
		s.order = live
	}
	s.sessions[ss.id] = ss
	s.order = append(s.order, ss.id)
	return ss, nil
}

func (s *StdioUpstream) session(id string) *bridgeSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// RoundTrip serves one Streamable HTTP request of the proxy from the child.
func (s *StdioUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost:
		return s.post(req)
	case http.MethodGet:
		return s.get(req)
	case http.MethodDelete:
		sid := req.Header.Get(mcp.HeaderSessionID)
		s.mu.Lock()
		ss := s.sessions[sid]
		delete(s.sessions, sid)
		s.mu.Unlock()
		if ss == nil {
			return bridgeResponse(req, http.StatusNotFound, "", nil), nil
		}
		close(ss.gone)
		return bridgeResponse(req, http.StatusOK, "", nil), nil
	}
	return bridgeResponse(req, http.StatusMethodNotAllowed, "", nil), nil
}

func (s *StdioUpstream) post(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(req.Body, int64(s.o.MaxLineBytes)+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > s.o.MaxLineBytes {
		return bridgeJSON(req, http.StatusRequestEntityTooLarge, mcp.ErrorResponse(nil, mcp.NewError(-32600, "message too large", nil))), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return bridgeJSON(req, http.StatusBadRequest, mcp.ErrorResponse(nil, mcp.NewError(-32600, "one JSON-RPC message per POST", nil))), nil
	}
	var method string
	_ = json.Unmarshal(m["method"], &method)
	id, hasID := m["id"]
	hasID = hasID && string(id) != "null"
	ctx := req.Context()
	if method == "initialize" && hasID {
		c, err := s.current(ctx)
		if err != nil {
			return nil, err
		}
		ss, err := s.newSession()
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": id, "result": c.init})
		resp := bridgeJSON(req, http.StatusOK, b)
		resp.Header.Set(mcp.HeaderSessionID, ss.id)
		return resp, nil
	}
	sid := req.Header.Get(mcp.HeaderSessionID)
	if sid != "" && s.session(sid) == nil {
		return bridgeJSON(req, http.StatusNotFound, mcp.ErrorResponse(id, mcp.NewError(-32600, "session not found", nil))), nil
	}
	c, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case method == "": // an answer to a server request: none is relayed, so none is awaited
		return bridgeResponse(req, http.StatusAccepted, "", nil), nil
	case !hasID:
		switch method {
		case "notifications/initialized": // the child was initialized once, by the bridge
		case "notifications/cancelled":
			var p map[string]json.RawMessage
			if json.Unmarshal(m["params"], &p) == nil {
				c.mu.Lock()
				bid, ok := c.byClient[sid+"\x00"+string(p["requestId"])]
				c.mu.Unlock()
				if ok {
					p["requestId"] = json.RawMessage(strconv.FormatInt(bid, 10))
					m["params"], _ = json.Marshal(p)
					b, _ := json.Marshal(m)
					_ = c.write(b)
				}
			}
		default:
			if err := c.write(body); err != nil {
				return nil, err
			}
		}
		return bridgeResponse(req, http.StatusAccepted, "", nil), nil
	}

	bid := s.nextID.Add(1)
	call := &bridgeCall{id: id, ckey: sid + "\x00" + string(id), events: make(chan []byte, 64), resp: make(chan []byte, 1)}
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) == nil {
		var meta map[string]json.RawMessage
		if json.Unmarshal(params["_meta"], &meta) == nil && len(meta["progressToken"]) > 0 {
			call.token = meta["progressToken"]
			call.ptoken = "palisade-" + strconv.FormatInt(bid, 10)
			meta["progressToken"], _ = json.Marshal(call.ptoken)
			params["_meta"], _ = json.Marshal(meta)
			m["params"], _ = json.Marshal(params)
		}
	}
	m["id"] = json.RawMessage(strconv.FormatInt(bid, 10))
	b, _ := json.Marshal(m)
	c.mu.Lock()
	c.calls[bid] = call
	c.byClient[call.ckey] = bid
	if call.ptoken != "" {
		c.progress[call.ptoken] = call
	}
	c.mu.Unlock()
	if err := c.write(b); err != nil {
		c.unregister(bid)
		return nil, err
	}
	pr, pw := io.Pipe()
	go s.answer(ctx, c, bid, call, pw)
	return bridgeResponse(req, http.StatusOK, "text/event-stream", pr), nil
}

// answer streams one call's progress and then its answer as SSE, and ends the stream without an
// answer when the child exits.
func (s *StdioUpstream) answer(ctx context.Context, c *stdioChild, bid int64, call *bridgeCall, pw *io.PipeWriter) {
	defer c.unregister(bid)
	send := func(b []byte) error {
		_, err := fmt.Fprintf(pw, "event: message\ndata: %s\n\n", b)
		return err
	}
	for {
		select {
		case b := <-call.events:
			if send(b) != nil {
				return
			}
		case b := <-call.resp:
			for len(call.events) > 0 { // progress sent before the answer goes first
				if send(<-call.events) != nil {
					return
				}
			}
			if err := send(b); err != nil {
				return
			}
			pw.Close()
			return
		case <-c.exited:
			pw.CloseWithError(fmt.Errorf("%w: %s exited before answering", ErrStdioDown, s.o.Name))
			return
		case <-ctx.Done():
			n, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
				"params": map[string]any{"requestId": bid, "reason": "the client went away"}})
			_ = c.write(n)
			pw.CloseWithError(ctx.Err())
			return
		}
	}
}

func (s *StdioUpstream) get(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if _, err := s.current(ctx); err != nil {
		return nil, err
	}
	sid := req.Header.Get(mcp.HeaderSessionID)
	if sid == "" {
		return bridgeResponse(req, http.StatusMethodNotAllowed, "", nil), nil // the probe: the child is up
	}
	ss := s.session(sid)
	if ss == nil {
		return bridgeResponse(req, http.StatusNotFound, "", nil), nil
	}
	if !ss.get.CompareAndSwap(false, true) {
		return bridgeResponse(req, http.StatusConflict, "", nil), nil
	}
	pr, pw := io.Pipe()
	go func() {
		defer ss.get.Store(false)
		for {
			select {
			case b := <-ss.notes:
				if _, err := fmt.Fprintf(pw, "event: message\ndata: %s\n\n", b); err != nil {
					return
				}
			case <-ss.gone:
				pw.Close()
				return
			case <-s.closing:
				pw.Close()
				return
			case <-ctx.Done():
				pw.CloseWithError(ctx.Err())
				return
			}
		}
	}()
	return bridgeResponse(req, http.StatusOK, "text/event-stream", pr), nil
}

func bridgeResponse(req *http.Request, status int, contentType string, body io.ReadCloser) *http.Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	n := int64(-1)
	if body == nil {
		body, n = http.NoBody, 0
	}
	return &http.Response{Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Body: body, ContentLength: n, Request: req}
}

func bridgeJSON(req *http.Request, status int, b []byte) *http.Response {
	r := bridgeResponse(req, status, "application/json", io.NopCloser(bytes.NewReader(b)))
	r.ContentLength = int64(len(b))
	return r
}

// stderrLog logs each line the child writes to stderr, with the upstream's name.
type stderrLog struct {
	log  *slog.Logger
	name string
	buf  []byte
}

// maxStderrLine is where a stderr line without a newline is cut and logged.
const maxStderrLine = 8 << 10

func (w *stderrLog) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 && len(w.buf) < maxStderrLine {
			return len(p), nil
		}
		next := i + 1
		if i < 0 {
			i, next = maxStderrLine, maxStderrLine
		}
		line := bytes.TrimRight(w.buf[:i], "\r")
		if len(line) > 0 {
			w.log.Info("upstream stderr", "upstream", w.name, "line", string(line))
		}
		w.buf = w.buf[next:]
		if len(w.buf) == 0 {
			w.buf = nil
			return len(p), nil
		}
	}
}
