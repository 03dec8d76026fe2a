package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// inlineTransport carries an upstream's plain-http requests on the calling goroutine: it takes
// a kept-alive connection (or dials one), writes the request with net/http's own Request.Write
// and reads the answer's head with http.ReadResponse, and the body is read by whoever reads
// resp.Body, from the same connection. net/http's Transport gives every connection a read loop
// and a write loop goroutine, so each exchange is two hand-offs each way between the caller and
// them; at one call at a time every hand-off wakes a sleeping thread (docs/DESIGN.md "What a
// call costs", "One c=1 call end to end": ~40 µs of the path and ~50 µs of CPU a call).
// Anything else (https, another host, a platform without idleCheck) goes to fallback, the
// http.Transport the gateway used before.
//
// What net/http's Transport does that this one does the same way: a connection is kept only
// when its answer's body was read to its end and neither side asked to close; a kept
// connection found closed by the server, or holding bytes nobody asked for, is dropped before
// a request is written on it (idleCheck: the read loop notices this on an idle connection); a
// request is never sent twice once written (a POST is not replayable); the answer's head must
// come within headerTimeout and fit in maxHeaderBytes; the request's context ends the exchange
// at any point (an expired deadline on the connection, set by context.AfterFunc, so no goroutine
// waits on it). Not done, and not needed by an MCP upstream: transparent gzip, proxies,
// Expect: 100-continue, HTTP/2.
type inlineTransport struct {
	dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	headerTimeout  time.Duration // 0 = none
	maxHeaderBytes int64
	idleTimeout    time.Duration
	maxIdle        int
	fallback       http.RoundTripper

	mu   sync.Mutex
	idle map[string][]*inlineConn // by host:port; the last put is taken first
}

// inlineConn is one kept-alive connection.
type inlineConn struct {
	c     net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	limit int64 // bytes the reader may still take from c; reset per answer head
	since time.Time
}

func (cc *inlineConn) Read(p []byte) (int, error) {
	if cc.limit <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > cc.limit {
		p = p[:cc.limit]
	}
	n, err := cc.c.Read(p)
	cc.limit -= int64(n)
	return n, err
}

var errHeaderTooLarge = errors.New("upstream answer's header exceeds the limit")

// expired is a deadline in the past: set on a connection, it ends any read or write on it.
var expired = time.Unix(1, 0)

func newInlineTransport(tr *http.Transport) *inlineTransport {
	return &inlineTransport{
		dial:           tr.DialContext,
		headerTimeout:  tr.ResponseHeaderTimeout,
		maxHeaderBytes: tr.MaxResponseHeaderBytes,
		idleTimeout:    tr.IdleConnTimeout,
		maxIdle:        tr.MaxIdleConnsPerHost,
		fallback:       tr,
		idle:           map[string][]*inlineConn{},
	}
}

// RoundTrip implements http.RoundTripper.
func (t *inlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || !idleCheckWorks {
		return t.fallback.RoundTrip(req)
	}
	ctx := req.Context()
	addr := canonicalAddr(req.URL.Host)
	cc, err := t.get(ctx, addr)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { cc.c.SetDeadline(expired) })
	fail := func(err error) (*http.Response, error) {
		stop()
		cc.c.Close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if err := req.Write(cc.bw); err != nil {
		return fail(err)
	}
	if err := cc.bw.Flush(); err != nil {
		return fail(err)
	}
	if t.headerTimeout > 0 {
		cc.c.SetReadDeadline(time.Now().Add(t.headerTimeout))
	}
	cc.limit = t.maxHeaderBytes
	resp, err := http.ReadResponse(cc.br, req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			err = fmt.Errorf("upstream: no answer within %s (timeout awaiting response headers)", t.headerTimeout)
		}
		return fail(err)
	}
	cc.limit = 1<<63 - 1
	if t.headerTimeout > 0 {
		cc.c.SetReadDeadline(time.Time{})
		if ctx.Err() != nil { // its AfterFunc may have run before the line above undid it
			cc.c.SetDeadline(expired)
		}
	}
	b := &inlineBody{rc: resp.Body, t: t, cc: cc, addr: addr, ctx: ctx, stop: stop,
		keep: !resp.Close && !req.Close}
	if resp.Body == http.NoBody { // nothing follows the head: the exchange is over
		b.finish(true)
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// closeBody closes a request's body that will not be written, as RoundTrip must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// canonicalAddr is host:port with http's default port.
func canonicalAddr(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(host, "80")
}

// get takes the kept connection to addr put last that is still open and unread, or dials one.
func (t *inlineTransport) get(ctx context.Context, addr string) (*inlineConn, error) {
	for {
		t.mu.Lock()
		list := t.idle[addr]
		if len(list) == 0 {
			t.mu.Unlock()
			break
		}
		cc := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[addr] = list[:len(list)-1]
		t.mu.Unlock()
		if (t.idleTimeout > 0 && time.Since(cc.since) > t.idleTimeout) || cc.br.Buffered() > 0 || !idleCheck(cc.c) {
			cc.c.Close()
			continue
		}
		return cc, nil
	}
	c, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cc := &inlineConn{c: c, bw: bufio.NewWriterSize(c, 4<<10)}
	cc.br = bufio.NewReaderSize(cc, 4<<10)
	return cc, nil
}

// put keeps cc for the next request to addr, or closes it when enough are kept.
func (t *inlineTransport) put(addr string, cc *inlineConn) {
	cc.since = time.Now()
	t.mu.Lock()
	if len(t.idle[addr]) < t.maxIdle {
		t.idle[addr] = append(t.idle[addr], cc)
		cc = nil
	}
	t.mu.Unlock()
	if cc != nil {
		cc.c.Close()
	}
}

// CloseIdleConnections closes the kept connections, and the fallback's.
func (t *inlineTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*inlineConn{}
	t.mu.Unlock()
	for _, list := range idle {
		for _, cc := range list {
			cc.c.Close()
		}
	}
	if c, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// inlineBody is an answer's body on its connection: read to its end, the connection is kept
// (when the answer allows it); closed before, or failed, the connection is closed.
type inlineBody struct {
	rc   io.ReadCloser
	t    *inlineTransport
	cc   *inlineConn
	addr string
	ctx  context.Context
	stop func() bool
	keep bool
	done atomic.Int32 // open, atEOF or closed
}

const (
	open int32 = iota
	atEOF
	closed
)

func (b *inlineBody) Read(p []byte) (int, error) {
	switch b.done.Load() {
	case atEOF:
		return 0, io.EOF
	case closed:
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.finish(true)
	case err != nil:
		b.finish(false)
		if b.ctx.Err() != nil {
			err = context.Cause(b.ctx)
		}
	}
	return n, err
}

var errBodyClosed = errors.New("read on a closed upstream answer body")

func (b *inlineBody) Close() error {
	b.finish(false)
	return nil
}

// finish ends the exchange once: the connection is kept only after a clean end of the body,
// when neither side asked to close and the context's AfterFunc had not run (it would have
// left an expired deadline on the connection).
func (b *inlineBody) finish(clean bool) {
	to := closed
	if clean {
		to = atEOF
	}
	if !b.done.CompareAndSwap(open, to) {
		return
	}
	stopped := b.stop()
	if clean && b.keep && stopped {
		b.t.put(b.addr, b.cc)
		return
	}
	b.cc.c.Close()
}
