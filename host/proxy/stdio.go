package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// StdioTransport is the transport name stdio envelopes and audit events carry.
const StdioTransport = "stdio"

// StdioOptions configure RunStdio.
type StdioOptions struct {
	Engine  *engine.Engine // required
	Command string         // the real MCP server; required
	Args    []string       // its arguments
	Env     []string       // its environment; nil = this process's
	Dir     string         // its working directory; "" = this process's
	// Server is the upstream name in envelopes and audit events; "" = the command's base name.
	Server string
	Stdin  io.Reader // from the MCP client; required
	Stdout io.Writer // to the MCP client; required
	Stderr io.Writer // the child's stderr; nil = discarded
	// Tools, if set, sees each tools/list result (tool pinning).
	Tools engine.ToolsObserver
	// Principal is who is calling, in every envelope: authn.LocalPrincipal when the proxy runs
	// as the user; nil over the engine socket, where the engine names the socket's caller.
	Principal *abi.Principal
	// Signals are forwarded to the child (SIGINT, SIGTERM, SIGHUP from the desktop client).
	Signals <-chan os.Signal
	// MaxLineBytes bounds one JSON-RPC line; 0 = 16 MiB. A longer client line is refused.
	MaxLineBytes int
	// MaxBatch is how many messages one batch line from the server may hold; a larger one is
	// not judged, and each waiting call it answers gets -32002 naming the limit. 0 = 100.
	// (A client's batch is refused whatever its size.)
	MaxBatch int
	// Grace is how long the child may take to exit after the client closes stdin or ctx ends,
	// before SIGTERM and then SIGKILL; 0 = 5s.
	Grace  time.Duration
	Logger *slog.Logger // nil = discard
}

func (o StdioOptions) withDefaults() StdioOptions {
	if o.Server == "" {
		o.Server = filepath.Base(o.Command)
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 16 << 20
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 100
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// maxAsked bounds the server→client requests remembered until the client answers them.
const maxAsked = 10000

// RunStdio starts the real server as a child and relays newline-delimited JSON-RPC between the
// client (Stdin/Stdout) and the child, judging client→server tools/call, resources/read and
// prompts/get and server→client sampling/createMessage and elicitation/create. A denied request
// is answered with the -32001 error and never reaches the other side. Every other message passes
// through (requests are logged at debug). It returns the child's exit code once the child has
// exited (128+signal when a signal ended it).
//
// # Notes
//
// Messages are written whole, one Write per line under a lock, so concurrent judgments never
// interleave bytes. A client line is judged on its exact keys (JSON's last-duplicate-wins, case
// sensitive, as JavaScript and Python servers read it), so a message cannot show the judge one
// method or tool and the server another. Client batches are refused.
func RunStdio(ctx context.Context, o StdioOptions) (int, error) {
	o = o.withDefaults()
	if o.Engine == nil || o.Command == "" || o.Stdin == nil || o.Stdout == nil {
		return 1, errors.New("stdio proxy: Engine, Command, Stdin and Stdout are required")
	}
	cmd := exec.Command(o.Command, o.Args...)
	cmd.Env, cmd.Dir, cmd.Stderr = o.Env, o.Dir, o.Stderr
	ownGroup(cmd) // signals and the stop reach what the server starts (npx → node)
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return 1, fmt.Errorf("stdio proxy: %w", err)
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		return 1, fmt.Errorf("stdio proxy: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("stdio proxy: start %s: %w", o.Command, err)
	}
	s := newStdio(o, childIn)
	o.Logger.Info("stdio proxy started", "upstream", o.Server, "pid", cmd.Process.Pid)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.fromClient(runCtx)
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		s.fromServer(runCtx, childOut)
	}()
	go s.supervise(runCtx, cmd)

	<-serverDone
	werr := cmd.Wait()
	_ = signalGroup(cmd, syscall.SIGKILL) // what the server started does not outlive it
	close(s.exited)
	cancel()
	s.judging.Wait()
	s.finishPending(ctx)
	code := exitCode(cmd, werr)
	o.Logger.Info("stdio proxy: upstream exited", "upstream", o.Server, "code", code)
	return code, nil
}

func newStdio(o StdioOptions, serverIn io.WriteCloser) *stdio {
	return &stdio{
		o:          o,
		toClient:   &lineWriter{w: o.Stdout},
		toServer:   &lineWriter{w: serverIn},
		childIn:    serverIn,
		pending:    map[string]*pendingCall{},
		session:    "stdio-" + audit.NewID(),
		exited:     make(chan struct{}),
		clientDone: make(chan struct{}),
	}
}

// RelayStdio is RunStdio for a server whose process another runs: the thin `palisade proxy`
// runs the child as the agent's user and carries its stdio and the client's over the engine
// socket, and the engine judges here. serverIn is the child's stdin (its Close is the stdio
// shutdown), serverOut its stdout; o.Command is unused and o.Server required. It returns when
// serverOut ends, with every call still waiting answered and recorded.
func RelayStdio(ctx context.Context, o StdioOptions, serverIn io.WriteCloser, serverOut io.Reader) error {
	if o.Server == "" {
		return errors.New("stdio relay: Server is required")
	}
	o = o.withDefaults()
	if o.Engine == nil || o.Stdin == nil || o.Stdout == nil {
		return errors.New("stdio relay: Engine, Stdin and Stdout are required")
	}
	s := newStdio(o, serverIn)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.fromClient(runCtx)
	s.fromServer(runCtx, serverOut)
	close(s.exited)
	cancel()
	s.judging.Wait()
	s.finishPending(ctx)
	return nil
}

func exitCode(cmd *exec.Cmd, werr error) int {
	st := cmd.ProcessState
	if st == nil {
		return 1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if c := st.ExitCode(); c >= 0 {
		return c
	}
	if werr != nil {
		return 1
	}
	return 0
}

type stdio struct {
	o        StdioOptions
	toClient *lineWriter
	toServer *lineWriter
	childIn  io.WriteCloser

	mu      sync.Mutex
	pending map[string]*pendingCall // client request id → what the answer needs
	client  *abi.Client
	proto   string
	caps    map[string]bool   // capabilities the client declared in initialize
	asked   map[string]string // server→client request id (idKey) → method, until the client answers
	session string            // one id per proxy run, so its audit events correlate

	judging       sync.WaitGroup // server→client judgments
	clientJudging sync.WaitGroup // client→server judgments (Add only from fromClient)
	exited        chan struct{}
	clientDone    chan struct{} // closed when the client's stdin ends
	stdinEOF      sync.Once
}

// pendingCall is a client request forwarded to the server, waiting for its response.
type pendingCall struct {
	id json.RawMessage // as the client wrote it
	x  *engine.Exchange
}

// lineWriter writes whole lines under a lock.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) writeLine(b []byte) error {
	buf := make([]byte, 0, len(b)+1)
	buf = append(buf, b...)
	buf = append(buf, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(buf)
	return err
}

// supervise forwards signals and, when ctx ends or the client closes stdin, gives the child
// Grace to exit before SIGTERM and SIGKILL.
func (s *stdio) supervise(ctx context.Context, cmd *exec.Cmd) {
	for {
		select {
		case sig, ok := <-s.o.Signals:
			if !ok {
				s.o.Signals = nil
				continue
			}
			s.o.Logger.Debug("forwarding signal", "signal", sig.String())
			if ss, ok := sig.(syscall.Signal); ok {
				_ = signalGroup(cmd, ss)
			} else {
				_ = cmd.Process.Signal(sig)
			}
		case <-s.exited:
			return
		case <-s.clientDone:
			s.stopChild(cmd) // the stdio shutdown: the child saw EOF on stdin; bound its exit
			return
		case <-ctx.Done():
			s.stopChild(cmd)
			return
		}
	}
}

// stopChild closes the child's stdin and gives it Grace to exit before SIGTERM, then Grace more
// before SIGKILL.
func (s *stdio) stopChild(cmd *exec.Cmd) {
	s.closeChildStdin()
	StopWithin(cmd, s.exited, s.o.Grace)
}

// StopWithin stops a started process that was asked to exit (its stdin closed, say): it waits
// grace for exited to close, then sends SIGTERM and waits grace more, then sends SIGKILL. It
// returns once exited has closed or SIGKILL is sent; exited must close when the process has
// been waited for. The signals reach the process group when cmd was started in one of its own
// (as the stdio proxy starts servers), else the process alone.
func StopWithin(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t := time.NewTimer(grace)
		select {
		case <-exited:
			t.Stop()
			return
		case <-t.C:
		}
		_ = signalGroup(cmd, sig)
	}
}

func (s *stdio) closeChildStdin() {
	s.stdinEOF.Do(func() { _ = s.childIn.Close() })
}

// readLines calls fn for each line of r (without the newline). A line over max is reported with
// tooLong=true and its bytes dropped.
func readLines(r io.Reader, max int, fn func(line []byte, tooLong bool)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var acc []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if !over {
				if len(acc)+len(chunk) > max+1 {
					over, acc = true, nil
				} else {
					acc = append(acc, chunk...)
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(acc) > 0 || over {
			line := bytes.TrimRight(acc, "\r\n")
			if over || len(bytes.TrimSpace(line)) > 0 {
				fn(bytes.Clone(line), over) // callers keep lines past the next read
			}
		}
		acc, over = acc[:0], false
		if err != nil {
			return
		}
	}
}

// fromClient reads the client's lines until EOF, then closes the child's stdin (the MCP stdio
// shutdown) and lets supervise bound the child's exit.
func (s *stdio) fromClient(ctx context.Context) {
	readLines(s.o.Stdin, s.o.MaxLineBytes, func(line []byte, tooLong bool) {
		select {
		case <-s.exited:
			return
		default:
		}
		if tooLong {
			s.o.Logger.Warn("client line over the limit, refused", "limit", s.o.MaxLineBytes)
			_ = s.toClient.writeLine(mcp.ErrorResponse(nil, mcp.NewError(mcp.CodeTooLarge, "message over the proxy's line limit", nil)))
			return
		}
		s.clientLine(ctx, line)
	})
	// Calls still being judged go out before the server sees EOF.
	s.clientJudging.Wait()
	s.closeChildStdin()
	close(s.clientDone)
}

func (s *stdio) clientLine(ctx context.Context, line []byte) {
	t := bytes.TrimSpace(line)
	if t[0] == '[' {
		s.o.Logger.Warn("client batch refused")
		_ = s.toClient.writeLine(mcp.ErrorResponse(nil, mcp.NewError(mcp.CodeInvalidRequest, "palisade proxy: JSON-RPC batches are not accepted; send one message per line", nil)))
		return
	}
	p, err := mcp.Parse(t, s.context())
	if err != nil {
		// Never forward what the judge could not read: the server might read it differently.
		s.o.Logger.Warn("client message refused", "err", err)
		_ = s.toClient.writeLine(mcp.ErrorResponse(idOf(t), mcp.NewError(mcp.CodeParseError, "palisade proxy: "+err.Error(), nil)))
		return
	}
	m := p.Message
	switch {
	case m.IsRequest():
		if m.Method == mcp.MethodInitialize {
			s.mu.Lock()
			s.client, s.proto, s.caps = p.Envelope.Client, p.Envelope.ProtocolVersion, mcp.Capabilities(m.Params)
			s.mu.Unlock()
		}
		// Every request goes through the engine, as over HTTP: a stage matching initialize or
		// tools/list is not skipped (methods outside JudgedMethods pass quietly otherwise).
		s.clientJudging.Add(1)
		go func() {
			defer s.clientJudging.Done()
			s.judgeClientRequest(ctx, p, line)
		}()
		return
	case m.IsNotification():
		if !s.o.Engine.JudgeMessage(ctx, p.Envelope) {
			s.o.Logger.Warn("client notification denied; dropped", "method", m.Method)
			return
		}
	default: // the client's answer to a server request
		s.mu.Lock()
		method := s.asked[idKey(m.ID)]
		delete(s.asked, idKey(m.ID))
		s.mu.Unlock()
		if !s.o.Engine.JudgeMessage(ctx, mcp.AnswerEnvelope(m, s.context(), method)) {
			s.o.Logger.Warn("client answer denied; the server gets the refusal", "method", method)
			line = mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeDenied, "palisade: the client's answer was denied by policy", nil))
		}
	}
	s.forwardToServer(line)
}

func (s *stdio) forwardToServer(line []byte) {
	if err := s.toServer.writeLine(line); err != nil {
		s.o.Logger.Debug("write to upstream failed", "err", err)
	}
}

func (s *stdio) track(m *mcp.Message, x *engine.Exchange) {
	s.mu.Lock()
	prev := s.pending[idKey(m.ID)]
	s.pending[idKey(m.ID)] = &pendingCall{id: m.ID, x: x}
	s.mu.Unlock()
	if prev != nil {
		// The client reused an id still in flight: the earlier call's answer can no longer be
		// told apart, so its decision is recorded now.
		prev.x.Outcome.Upstream = stdioUpstream(prev.x.Outcome, "request id reused before the answer")
		prev.x.Finish(context.Background())
	}
}

func (s *stdio) context() mcp.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mcp.Context{Transport: StdioTransport, Server: s.o.Server, Session: s.session, ProtocolVersion: s.proto, Client: s.client, Principal: s.o.Principal}
}

func (s *stdio) judgeClientRequest(ctx context.Context, p *mcp.Parsed, line []byte) {
	m := p.Message
	x, err := s.o.Engine.Begin(ctx, p, s.o.Tools)
	if err != nil {
		s.o.Logger.Warn("judge failed; denied", "method", m.Method, "err", err)
		_ = s.toClient.writeLine(mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeDenied, "denied: the gateway could not judge this call: "+err.Error(), nil)))
		return
	}
	switch step, params, changed := x.Forward(); step {
	case engine.StepDeny:
		_ = s.toClient.writeLine(x.Deny())
		x.Finish(ctx)
		return
	case engine.StepFallback:
		// The fallback tool the deciding stage named runs instead, under the same id (the
		// denied call never reached the server).
		nl, err := replaceParams(line, params)
		if err != nil {
			x.FallbackFailed()
			_ = s.toClient.writeLine(x.Deny())
			x.Finish(ctx)
			return
		}
		line = nl
	default:
		if changed {
			// Forward what was judged: arguments a stage rewrote, _meta entries hooks added.
			if nl, err := replaceParams(line, params); err == nil {
				line = nl
			}
		}
	}
	s.track(m, x)
	select {
	case <-s.exited:
		x.Outcome.Upstream = stdioUpstream(x.Outcome, "upstream exited")
		x.Finish(ctx)
		_ = s.toClient.writeLine(mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeUpstream, "upstream exited", nil)))
		return
	default:
	}
	s.forwardToServer(line)
}

// fromServer reads the child's stdout until EOF. Each line (a batch's elements one by one) is
// judged or refused: see serverMessage and unreadable.
func (s *stdio) fromServer(ctx context.Context, r io.Reader) {
	readLines(r, s.o.MaxLineBytes*4, func(line []byte, tooLong bool) {
		if tooLong {
			s.o.Logger.Warn("upstream line over the limit, dropped")
			return
		}
		ms, err := upstreamMessages(line, s.o.MaxBatch)
		if errors.Is(err, mcp.ErrBatchTooLarge) {
			s.batchTooLarge(ctx, line, err)
			return
		}
		if err != nil {
			s.unreadable(ctx, line, err)
			return
		}
		for _, um := range ms {
			if um.err != nil {
				s.unreadable(ctx, um.raw, um.err)
				continue
			}
			s.serverMessage(ctx, um.msg, um.raw)
		}
	})
}

// batchTooLarge refuses a server batch over MaxBatch unread: each waiting call it answers gets
// the error naming the limit; the rest is dropped.
func (s *stdio) batchTooLarge(ctx context.Context, line []byte, err error) {
	s.o.Logger.Warn("upstream batch over the limit; refused", "upstream", s.o.Server, "err", err)
	var els []struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	_ = json.Unmarshal(line, &els)
	for _, el := range els {
		if el.Method != nil || len(el.ID) == 0 {
			continue
		}
		if p := s.take(el.ID); p != nil {
			p.x.Outcome.Upstream = stdioUpstream(p.x.Outcome, err.Error())
			_ = s.toClient.writeLine(mcp.ErrorResponse(p.id, mcp.NewError(mcp.CodeUpstream, "palisade proxy: "+err.Error(), nil)))
			p.x.Finish(ctx)
		}
	}
}

// take removes and returns the pending call id answers (ids compared as JSON values).
func (s *stdio) take(id json.RawMessage) *pendingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[idKey(id)]
	delete(s.pending, idKey(id))
	return p
}

// unreadable handles an upstream message the proxy cannot judge: if it names the id of a
// waiting call, that call's answer is refused (ambiguous keys) or handled by the response
// stages' failure mode; otherwise it is dropped.
func (s *stdio) unreadable(ctx context.Context, raw []byte, err error) {
	var v struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	_ = json.Unmarshal(raw, &v)
	if v.Method != nil {
		// A request or notification from the server, not an answer: refused.
		s.o.Logger.Warn("upstream request refused", "upstream", s.o.Server, "err", err)
		if len(v.ID) > 0 && string(v.ID) != "null" {
			s.forwardToServer(mcp.ErrorResponse(v.ID, mcp.NewError(mcp.CodeInvalidRequest, "palisade proxy: "+err.Error(), nil)))
		}
		return
	}
	var p *pendingCall
	if len(v.ID) > 0 {
		p = s.take(v.ID)
	}
	if p == nil {
		s.o.Logger.Warn("unreadable upstream message answers no waiting call; dropped", "upstream", s.o.Server, "err", err)
		return
	}
	defer p.x.Finish(ctx)
	p.x.Outcome.Upstream = stdioUpstream(p.x.Outcome, "")
	_ = s.toClient.writeLine(p.x.Unjudgeable(raw, err))
}

func (s *stdio) serverMessage(ctx context.Context, m *mcp.Message, line []byte) {
	switch {
	case m.IsResponse():
		p := s.take(m.ID)
		if p == nil {
			s.o.Logger.Warn("upstream response answers no waiting call; dropped", "upstream", s.o.Server, "id", string(m.ID))
			return
		}
		line = s.response(ctx, p, m)
	case m.IsRequest():
		p, err := mcp.Parse(line, s.context())
		if err != nil {
			s.o.Logger.Warn("upstream request refused", "method", m.Method, "err", err)
			s.forwardToServer(mcp.ErrorResponse(m.ID, mcp.NewError(mcp.CodeInvalidRequest, "palisade proxy: "+err.Error(), nil)))
			return
		}
		if need := mcp.NeededCapability(m.Method); need != "" {
			s.mu.Lock()
			declared := s.caps[need]
			s.mu.Unlock()
			if !declared {
				s.forwardToServer(s.o.Engine.RefuseServerRequest(ctx, p.Envelope, need))
				return
			}
		}
		s.judging.Add(1)
		go func() {
			defer s.judging.Done()
			s.judgeServerRequest(ctx, p, line)
		}()
		return
	default: // a notification
		p, err := mcp.Parse(line, s.context())
		if err != nil || !s.o.Engine.JudgeMessage(ctx, p.Envelope) {
			s.o.Logger.Warn("upstream notification denied; dropped", "method", m.Method, "err", err)
			return
		}
	}
	_ = s.toClient.writeLine(line)
}

// response runs tool pinning (tools/list) and the response phase on the answer to a pending
// call, and returns the line to send the client.
func (s *stdio) response(ctx context.Context, p *pendingCall, m *mcp.Message) []byte {
	o := p.x.Outcome
	defer p.x.Finish(ctx)
	o.Upstream = stdioUpstream(o, "")
	if m.Error != nil {
		o.Upstream = stdioUpstream(o, m.Error.Message)
	}
	return p.x.Answer(ctx, m)
}

func (s *stdio) judgeServerRequest(ctx context.Context, p *mcp.Parsed, line []byte) {
	if deny := s.o.Engine.JudgeServerRequest(ctx, p); deny != nil {
		s.forwardToServer(deny)
		return
	}
	s.mu.Lock()
	if s.asked == nil || len(s.asked) >= maxAsked {
		s.asked = map[string]string{} // a client that never answers cannot grow it without bound
	}
	s.asked[idKey(p.Message.ID)] = p.Message.Method
	s.mu.Unlock()
	_ = s.toClient.writeLine(line)
}

// finishPending records the calls the child never answered.
func (s *stdio) finishPending(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, p := range s.pending {
		p.x.Outcome.Upstream = stdioUpstream(p.x.Outcome, "upstream exited before answering")
		p.x.Finish(ctx)
		delete(s.pending, k)
	}
}

func stdioUpstream(o *engine.Outcome, errText string) *audit.Upstream {
	return &audit.Upstream{LatencyUS: time.Since(o.Start).Microseconds(), Error: errText}
}

// idOf recovers the id of a message that failed validation, for the error response.
func idOf(b []byte) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v.ID
}

// StrictMessage parses one JSON-RPC message with mcp.Parse, the strict parse every client
// message goes through (duplicate and case-folded keys, miscased significant keys, nesting past
// mcp.MaxDepth are refused). Errors wrap mcp's parse errors or ErrAmbiguousKeys.
func StrictMessage(b []byte) (*mcp.Message, error) {
	p, err := mcp.Parse(b, mcp.Context{})
	if err != nil {
		return nil, err
	}
	return p.Message, nil
}

// parseExact validates a JSON-RPC message and reads jsonrpc, id, method, params, result and
// error by their exact, case-sensitive keys, the last duplicate winning: the way JavaScript's
// JSON.parse and Python's json read them (Go's encoding/json would match keys case-insensitively).
// It reads upstream messages; client messages go through mcp.Parse.
func parseExact(b []byte) (*mcp.Message, error) {
	if _, err := mcp.ParseMessage(b); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", mcp.ErrNotJSON, err)
	}
	if err := exactCase(raw, "jsonrpc", "id", "method", "params", "result", "error"); err != nil {
		return nil, err
	}
	if p := bytes.TrimSpace(raw["params"]); len(p) > 0 && p[0] == '{' {
		var params map[string]json.RawMessage
		if err := json.Unmarshal(p, &params); err != nil {
			return nil, fmt.Errorf("%w: params: %v", mcp.ErrNotJSON, err)
		}
		if err := exactCase(params, "name", "arguments", "uri"); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	m := &mcp.Message{ID: raw["id"], Params: raw["params"], Result: raw["result"]}
	if err := json.Unmarshal(raw["jsonrpc"], &m.JSONRPC); err != nil || m.JSONRPC != "2.0" {
		return nil, mcp.ErrBadVersion
	}
	if v, ok := raw["method"]; ok {
		if err := json.Unmarshal(v, &m.Method); err != nil {
			return nil, fmt.Errorf("%w: method is not a string", mcp.ErrNotJSON)
		}
	}
	if v, ok := raw["error"]; ok && string(v) != "null" {
		m.Error = &mcp.Error{}
		if err := json.Unmarshal(v, m.Error); err != nil {
			return nil, fmt.Errorf("%w: error is not an error object", mcp.ErrNotJSON)
		}
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return nil, mcp.ErrNoMethod
	}
	return m, nil
}

// exactCase refuses a key that matches one of names only when case is ignored ("Method",
// "pArAms"): Go's encoding/json would read it as that field, exact-key readers would not.
func exactCase(obj map[string]json.RawMessage, names ...string) error {
	for k := range obj {
		for _, n := range names {
			if k != n && strings.EqualFold(strings.ToLower(strings.ToUpper(k)), n) {
				return fmt.Errorf("%w: key %q is not spelled %q", ErrAmbiguousKeys, k, n)
			}
		}
	}
	return nil
}

// replaceParams replaces params of a client line (rewritten arguments, _meta, a fallback call).
func replaceParams(line []byte, params json.RawMessage) ([]byte, error) {
	if len(params) == 0 {
		return nil, errors.New("no params")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, err
	}
	raw["params"] = params
	return json.Marshal(raw)
}

// ErrAmbiguousKeys is mcp.ErrAmbiguousKeys, kept here for callers of StrictMessage and
// AmbiguousKeys.
var ErrAmbiguousKeys = mcp.ErrAmbiguousKeys

// AmbiguousKeys checks a whole JSON value with mcp.Check: it reports the first object holding a
// duplicate or case-folded duplicate key, invalid JSON, or nesting past mcp.MaxDepth.
func AmbiguousKeys(b []byte) error { return mcp.Check(b) }
