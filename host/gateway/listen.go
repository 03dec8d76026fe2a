package gateway

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"github.com/added060/palisade/host/config"
)

// Listener limits and request guards: what every HTTP endpoint of the gateway passes through
// before echo routes it.

// limitListener holds at most n connections open at once; Accept waits for a slot.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// InUse is how many connections are open.
func (l *limitListener) InUse() int { return len(l.slots) }

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

// maxConnections lowers n to the process's open-file limit less 512 (for NATS, upstream
// connections, files), so the listener never runs the process out of descriptors.
func maxConnections(n int) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 1024 {
		if lim := int(rl.Cur) - 512; lim < n {
			return lim
		}
	}
	return n
}

// guard checks Host and Origin on every request and the client token on /mcp.
type guard struct {
	next    http.Handler
	hosts   map[string]bool // lower-case "name" (any port) or "name:port"
	origins map[string]bool // lower-case scheme://host[:port]
	token   []byte          // "" = none
}

func newGuard(next http.Handler, c config.HTTP) *guard {
	g := &guard{next: next, hosts: map[string]bool{}, origins: map[string]bool{}}
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
