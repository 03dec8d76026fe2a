package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Defaults for Options.
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = 4222
	// RandomPort asks the embedded server for any free port (tests).
	RandomPort = -1
)

// ErrPortInUse is returned by Start when the embedded server's client port is
// taken. Choose another port in the config (nats.port) or point at the
// server already listening there with a URL.
var ErrPortInUse = errors.New("bus: nats client port in use")

// readyTimeout bounds how long Start waits for the embedded server.
const readyTimeout = 30 * time.Second

// Options configures Start. The zero value starts an embedded server on
// 127.0.0.1:4222 with JetStream in a temporary directory.
type Options struct {
	// DataDir holds the embedded server's JetStream store under DataDir/nats.
	// "" = a temporary directory, removed by Close. Ignored when URL is set.
	DataDir string
	// Host is the embedded server's client listen address; "" = 127.0.0.1.
	Host string
	// Port is the embedded server's client port; 0 = 4222, -1 = random free port.
	Port int
	// URL names an external NATS server or cluster (comma-separated URLs).
	// When set, no embedded server starts and Host, Port and DataDir are ignored.
	URL string
	// ServerName names the embedded server; "" = "palisade".
	ServerName string
	// Creds is the gateway's NATS creds file for an external server; "" = none (the external
	// server must then allow the connection without credentials). The embedded server always
	// requires the role keys it keeps in DataDir/nats-auth (see Identity).
	Creds string
	// ApproverCreds is an approver creds file for an external server: with it the gateway signs
	// decisions made through its admin API, so other gateways accept them. "" = none.
	ApproverCreds string
	// Names are the streams and buckets the embedded server's permissions name.
	Names Names
	// Logger receives the embedded server's log and reconnect events; nil = discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.ServerName == "" {
		o.ServerName = "palisade"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Bus is a running embedded server, or the address of an external one.
type Bus struct {
	o       Options
	url     string
	srv     *server.Server // nil when external
	tempDir string         // removed on Close when DataDir was ""
	ids     map[string]*Identity

	mu    sync.Mutex
	conns []*nats.Conn
	done  bool
}

// Start starts the embedded nats-server (JetStream enabled, store under
// DataDir/nats) and waits until it accepts clients, or, when o.URL is set,
// only records the external URL: an external server may be down at start and
// connections made by Connect keep trying.
//
// If the embedded server's port is taken, Start fails with an error wrapping
// ErrPortInUse that names the address.
func Start(ctx context.Context, o Options) (*Bus, error) {
	o = o.withDefaults()
	if o.URL != "" {
		if err := checkURLs(o.URL); err != nil {
			return nil, err
		}
		b := &Bus{o: o, url: o.URL, ids: map[string]*Identity{}}
		if o.Creds != "" {
			id, err := LoadIdentity("", RoleGateway, o.Creds)
			if err != nil {
				return nil, err
			}
			b.ids[RoleGateway] = id
		}
		if o.ApproverCreds != "" {
			id, err := LoadIdentity("", RoleApprover, o.ApproverCreds)
			if err != nil {
				return nil, err
			}
			b.ids[RoleApprover] = id
		}
		o.Logger.Info("nats external", "url", redactURL(o.URL), "authenticated", o.Creds != "")
		return b, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bus: start: %w", err)
	}
	b := &Bus{o: o}
	dataDir := o.DataDir
	if dataDir == "" {
		d, err := os.MkdirTemp("", "palisade-nats-")
		if err != nil {
			return nil, fmt.Errorf("bus: temp data dir: %w", err)
		}
		b.tempDir = d
		dataDir = d
	}
	storeDir := filepath.Join(dataDir, "nats")
	if err := os.MkdirAll(storeDir, 0o700); err != nil {
		b.removeTemp()
		return nil, fmt.Errorf("bus: store dir %s: %w", storeDir, err)
	}
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	if o.Port > 0 {
		// nats-server only logs a failed listen; probe first for a clear error.
		l, err := net.Listen("tcp", addr)
		if err != nil {
			b.removeTemp()
			return nil, fmt.Errorf("%w: %s (set another nats port, or a nats URL to use the server there): %w", ErrPortInUse, addr, err)
		}
		_ = l.Close()
	}
	ids, err := EnsureKeys(dataDir)
	if err != nil {
		b.removeTemp()
		return nil, err
	}
	b.ids = ids
	users, err := NkeyUsers(ids, o.Names)
	if err != nil {
		b.removeTemp()
		return nil, err
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: o.ServerName,
		Host:       o.Host,
		Port:       o.Port,
		NoSigs:     true,
		JetStream:  true,
		StoreDir:   storeDir,
		Nkeys:      users,
	})
	if err != nil {
		b.removeTemp()
		return nil, fmt.Errorf("bus: new nats-server: %w", err)
	}
	srv.SetLoggerV2(&slogAdapter{l: o.Logger.With("component", "nats-server")}, false, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		b.removeTemp()
		return nil, fmt.Errorf("%w: nats-server on %s not ready after %s", ErrPortInUse, addr, readyTimeout)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		b.removeTemp()
		return nil, fmt.Errorf("bus: nats-server on %s: jetstream did not start (store %s)", addr, storeDir)
	}
	b.srv = srv
	b.url = srv.ClientURL()
	o.Logger.Info("nats embedded", "url", b.url, "store_dir", storeDir, "auth_dir", AuthDir(dataDir))
	return b, nil
}

// ClientURL is the URL clients connect to: the embedded server's address, or
// the external URL as given.
func (b *Bus) ClientURL() string { return b.url }

// Embedded reports whether Start runs a nats-server in this process.
func (b *Bus) Embedded() bool { return b.srv != nil }

// Identity returns role's credentials: for the embedded server every role's key (from
// DataDir/nats-auth); for an external server the gateway's and approver's creds when
// configured. nil = none.
func (b *Bus) Identity(role string) *Identity { return b.ids[role] }

// AuthDir is the directory holding the embedded server's role keys; "" when external.
func (b *Bus) AuthDir() string {
	if b.srv == nil {
		return ""
	}
	if b.o.DataDir != "" {
		return AuthDir(b.o.DataDir)
	}
	return AuthDir(b.tempDir)
}

// Connect opens a client connection named name as the gateway identity; see ConnectAs.
func (b *Bus) Connect(name string, extra ...nats.Option) (*nats.Conn, error) {
	return b.ConnectAs(RoleGateway, name, extra...)
}

// ConnectAs opens a client connection named name (shown in the server's
// connection list) authenticated as role (when the bus has that identity). It reconnects forever with jittered exponential backoff
// (50ms doubling to 5s) and, for an external URL, keeps retrying when the
// server is down at connect time: the returned connection may be not yet
// connected. extra options are applied after these defaults. Close closes
// every connection made here.
func (b *Bus) ConnectAs(role, name string, extra ...nats.Option) (*nats.Conn, error) {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return nil, errors.New("bus: connect after close")
	}
	b.mu.Unlock()
	log := b.o.Logger.With("conn", name)
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.CustomReconnectDelay(backoff),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "url", redactURL(nc.ConnectedUrl()))
		}),
	}
	if id := b.ids[role]; id != nil {
		opts = append(opts, id.Options()...)
	} else if b.srv != nil {
		return nil, fmt.Errorf("%w: role %s", ErrNoIdentity, role)
	}
	opts = append(opts, extra...)
	if b.srv != nil {
		// The embedded server runs in this process: no TCP round trip to set up.
		opts = append([]nats.Option{nats.InProcessServer(b.srv)}, opts...)
	}
	nc, err := nats.Connect(b.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect %q to %s: %w", name, redactURL(b.url), err)
	}
	b.mu.Lock()
	b.conns = append(b.conns, nc)
	b.mu.Unlock()
	return nc, nil
}

// backoff is the reconnect delay: 50ms doubling per attempt to 5s, ±20% jitter.
func backoff(attempts int) time.Duration {
	d := 50 * time.Millisecond
	for i := 1; i < attempts && d < 5*time.Second; i++ {
		d *= 2
	}
	d = min(d, 5*time.Second)
	jitter := time.Duration(rand.Int64N(int64(d)/5 + 1))
	return d - d/10 + jitter
}

// Close drains the connections made by Connect, then shuts the embedded
// server down and waits for it. Calling Close twice does nothing.
func (b *Bus) Close() {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	conns := b.conns
	b.conns = nil
	b.mu.Unlock()
	for _, nc := range conns {
		if nc.IsClosed() {
			continue
		}
		if err := nc.Drain(); err != nil {
			nc.Close()
		}
	}
	for _, nc := range conns {
		waitClosed(nc, 5*time.Second)
	}
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		b.o.Logger.Info("nats embedded stopped")
	}
	b.removeTemp()
}

func waitClosed(nc *nats.Conn, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for !nc.IsClosed() {
		if time.Now().After(deadline) {
			nc.Close()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *Bus) removeTemp() {
	if b.tempDir != "" {
		_ = os.RemoveAll(b.tempDir)
		b.tempDir = ""
	}
}

func checkURLs(s string) error {
	for _, u := range strings.Split(s, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		if !strings.Contains(u, "://") {
			u = "nats://" + u
		}
		p, err := url.Parse(u)
		if err != nil {
			return fmt.Errorf("bus: nats url %q: %w", redactURL(u), err)
		}
		if p.Host == "" {
			return fmt.Errorf("bus: nats url %q: no host", redactURL(u))
		}
	}
	return nil
}

// redactURL hides a password in a URL before it is logged.
func redactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, u := range parts {
		if p, err := url.Parse(strings.TrimSpace(u)); err == nil && p.User != nil {
			parts[i] = p.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// slogAdapter is nats-server's Logger over slog.
type slogAdapter struct{ l *slog.Logger }

func (a *slogAdapter) Noticef(format string, v ...any) { a.l.Info(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.l.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  {}
