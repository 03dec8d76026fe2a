package gateway

import (
	"bufio"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
)

// Listener limits and request guards: what every HTTP endpoint of the gateway passes through
// before echo routes it.

// LimitListener holds at most max connections open at once (http.max_connections). Past the
// limit it refuses fast rather than letting connections wait: a waiting connection sits in the
// kernel's accept queue, where no timeout of ours applies, the client cannot tell a full
// gateway from a dead one, and a health probe times out so an orchestrator restarts a gateway
// that is only busy. So every connection is accepted at once; one over the limit is answered
// by the listener itself and closed: GET or HEAD health (e.g. "/healthz"; "" = none) with 200
// and {"status":"ok"}, anything else with 503 and Retry-After: 1. At most 256 refusals are
// answered at a time, each within 2 s; past that a connection is closed unanswered. log (nil =
// discard) gets one warning per 10 s while connections are refused.
func LimitListener(l net.Listener, max int, health string, log *slog.Logger) net.Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, max), refusing: make(chan struct{}, maxRefusing), health: health, log: log}
}

// maxRefusing is how many refusals LimitListener answers at once (goroutines and descriptors
// past the limit; max_connections leaves 512 descriptors spare).
const maxRefusing = 256

type limitListener struct {
	net.Listener
	slots    chan struct{} // one per open connection
	refusing chan struct{} // one per refusal being answered
	health   string
	log      *slog.Logger
	refused  atomic.Int64
	warned   atomic.Int64 // unix nanoseconds of the last warning
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		l.refuse(c)
	}
}

// refuse answers a connection over the limit (see LimitListener) without holding a slot.
func (l *limitListener) refuse(c net.Conn) {
	n := l.refused.Add(1)
	if now, last := time.Now().UnixNano(), l.warned.Load(); now-last > int64(10*time.Second) && l.warned.CompareAndSwap(last, now) {
		l.log.Warn("connection limit reached; refusing new connections", "max_connections", cap(l.slots), "refused", n)
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		status, ctype, body, extra := "503 Service Unavailable", "text/plain; charset=utf-8",
			"palisade: connection limit reached (http.max_connections); retry later\n", "Retry-After: 1\r\n"
		req, err := http.ReadRequest(bufio.NewReaderSize(io.LimitReader(c, 8<<10), 4<<10))
		if err == nil && l.health != "" && req.URL.Path == l.health && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
			status, ctype, body, extra = "200 OK", "application/json", `{"status":"ok"}`+"\n", ""
		}
		if req != nil && req.Method == http.MethodHead {
			body = ""
		}
		if _, err := fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n%s", status, ctype, len(body), extra, body); err != nil {
			return
		}
		// Half-close and read what the client still sends until it closes, so the answer is
		// not lost to a reset.
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// SendTimeout gives every write next makes to a client its own deadline d
// (http.send_timeout), set with http.ResponseController.SetWriteDeadline before each write of
// at most 64 KiB and each flush: an answer or SSE stream may last as long as it likes, but a
// client that stops reading is cut after d, and the handler's next write fails, so the stream
// ends and releases what it holds. d <= 0 returns next unchanged.
//
// # Notes
//
// net/http keeps a deadline set by a handler for the connection's next request; SendTimeout
// clears it when a request starts and sets a fresh one when the handler returns, for the
// end of the answer net/http writes itself.
func SendTimeout(next http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
		dw := &deadlineWriter{ResponseWriter: w, rc: rc, d: d}
		next.ServeHTTP(dw, r)
		dw.arm()
	})
}

// sendChunk is the most one write deadline covers.
const sendChunk = 64 << 10

type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), sendChunk)
		w.arm()
		m, err := w.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// FlushError is what http.ResponseController.Flush (and echo's Flush) call.
func (w *deadlineWriter) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the connection (Hijack, EnableFullDuplex).
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// MaxConnections lowers n to the process's open-file limit less 512 (for NATS, upstream
// connections, files), so the listener never runs the process out of descriptors.
func MaxConnections(n int) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 1024 {
		if lim := int(rl.Cur) - 512; lim < n {
			return lim
		}
	}
	return n
}

// guard checks Host and Origin on every request and, on /mcp, the access token (authn:) or
// else the client token.
type guard struct {
	next    http.Handler
	hosts   map[string]bool // lower-case "name" (any port) or "name:port"
	origins map[string]bool // lower-case scheme://host[:port]
	token   []byte          // "" = none
	authn   *authn.Verifier // nil = none; when set, token is not used on /mcp
}

func newGuard(next http.Handler, c config.HTTP, v *authn.Verifier) *guard {
	g := &guard{next: next, hosts: map[string]bool{}, origins: map[string]bool{}, authn: v}
	for _, h := range c.AllowedHosts {
		g.hosts[strings.ToLower(h)] = true
	}
	for _, o := range c.AllowedOrigins {
		g.origins[strings.TrimSuffix(strings.ToLower(o), "/")] = true
	}
	if c.ClientToken != "" {
		g.token = []byte(c.ClientToken)
	}
	return g
}

// hostAllowed: a loopback name, or one the config lists (with or without its port).
func (g *guard) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if host == "" {
		return false
	}
	if config.LoopbackHost(host) {
		return true
	}
	if g.hosts[host] {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	return g.hosts[name] || g.hosts["["+name+"]"]
}

// originAllowed: no Origin (not a browser, or a same-origin GET), a loopback origin, the
// gateway's own origin (its host is the request's allowed Host), or one the config lists.
func (g *guard) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		// A browser's no-cors request (img, form GET) carries no Origin but says where it
		// comes from.
		return r.Header.Get("Sec-Fetch-Site") != "cross-site"
	}
	o = strings.ToLower(o)
	if g.origins[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // includes "null": sandboxed frames, file: pages
	}
	return config.LoopbackHost(u.Host) || strings.EqualFold(u.Host, r.Host)
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		g.next.ServeHTTP(w, r) // probes come with whatever Host the platform uses
		return
	}
	if !g.hostAllowed(r.Host) {
		http.Error(w, "palisade: Host "+quote(r.Host)+" is not allowed (loopback names or http.allowed_hosts)", http.StatusForbidden)
		return
	}
	if !g.originAllowed(r) {
		http.Error(w, "palisade: Origin "+quote(r.Header.Get("Origin"))+" is not allowed (loopback origins or http.allowed_origins)", http.StatusForbidden)
		return
	}
	if g.authn != nil && (r.URL.Path == "/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/") || r.URL.Path == SelfMCPPath) {
		// The resource server: a verified access token, its principal in the context for the
		// transport (authn.FromContext), or the 401/403 with the challenge host/authn writes.
		p, err := g.authn.Authenticate(r)
		if err != nil {
			g.authn.Challenge(w, r, err)
			return
		}
		tok := authn.BearerToken(r) // kept in the context for an upstream's token exchange only
		authn.StripToken(r)         // the proxy strips it again from every upstream request
		g.next.ServeHTTP(w, r.WithContext(authn.WithToken(authn.WithPrincipal(r.Context(), p), tok)))
		return
	}
	if g.token != nil && (r.URL.Path == "/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/")) {
		if !bearer(r, g.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="palisade"`)
			http.Error(w, "palisade: missing or wrong client token", http.StatusUnauthorized)
			return
		}
		// The gateway's token is not the upstream's: never forward it (upstreams[].headers
		// carries the upstream's credentials).
		r.Header.Del("Authorization")
	}
	g.next.ServeHTTP(w, r)
}

func quote(s string) string { return "\"" + strings.ReplaceAll(s, "\"", "'") + "\"" }

// bearer reports whether r carries "Authorization: Bearer <token>", compared in constant time.
func bearer(r *http.Request, token []byte) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), token) == 1
}
