package testenv

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsReadyTimeout bounds how long StartNATS waits for the server to accept
// clients. It is a deadline for a failure message, not a timed assertion.
const natsReadyTimeout = 30 * time.Second

// StartNATS runs an in-process nats-server with JetStream on a random
// loopback port, storing its files under t.TempDir(). It waits until the
// server accepts connections and shuts it down when the test ends.
//
// Use s.ClientURL() to connect:
//
//	s := testenv.StartNATS(t)
//	nc, err := nats.Connect(s.ClientURL())
func StartNATS(t testing.TB) *server.Server {
	t.Helper()
	s, err := startNATS(natsOptions(-1, t.TempDir()))
	if err != nil {
		t.Fatalf("testenv: start nats: %v", err)
	}
	t.Cleanup(func() { shutdownNATS(s) })
	return s
}

// RestartableNATS is an in-process nats-server that can be stopped and
// started again on the same port and store directory, for outage tests
// (a client configured to reconnect forever finds it again).
type RestartableNATS struct {
	t        testing.TB
	port     int
	storeDir string

	mu   sync.Mutex
	s    *server.Server
	hold net.Listener // while stopped: keeps the port from other tests' servers
}

// StartRestartableNATS starts a RestartableNATS on a free loopback port with
// JetStream stored under t.TempDir(). The server is shut down when the test
// ends, whatever state it is in.
func StartRestartableNATS(t testing.TB) *RestartableNATS {
	t.Helper()
	r := &RestartableNATS{t: t, storeDir: t.TempDir()}
	s, err := startNATS(natsOptions(-1, r.storeDir))
	if err != nil {
		t.Fatalf("testenv: start nats: %v", err)
	}
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		shutdownNATS(s)
		t.Fatalf("testenv: nats listens on %v, not TCP", s.Addr())
	}
	r.port = addr.Port
	r.s = s
	t.Cleanup(r.close)
	return r
}

// close shuts everything down for good (test cleanup).
func (r *RestartableNATS) close() {
	r.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		r.hold.Close()
		r.hold = nil
	}
}

// URL is the client URL; it stays the same across Stop and Start.
func (r *RestartableNATS) URL() string {
	return "nats://127.0.0.1:" + strconv.Itoa(r.port)
}

// Port is the fixed client port.
func (r *RestartableNATS) Port() int { return r.port }

// StoreDir is the JetStream store directory shared by every start.
func (r *RestartableNATS) StoreDir() string { return r.storeDir }

// Server returns the running server, or nil while stopped.
func (r *RestartableNATS) Server() *server.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

// Stop shuts the server down and waits until it has stopped. While stopped,
// the port is held by a listener that closes every connection at once, so a
// server started by another test binary cannot take the port and answer in
// this one's place; clients see a server that is down. Stopping a stopped
// server does nothing.
func (r *RestartableNATS) Stop() {
	r.mu.Lock()
	s := r.s
	r.s = nil
	r.mu.Unlock()
	if s == nil {
		return
	}
	shutdownNATS(s)
	deadline := time.Now().Add(natsReadyTimeout)
	for {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.port))
		if err == nil {
			r.mu.Lock()
			r.hold = l
			r.mu.Unlock()
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
			return
		}
		if time.Now().After(deadline) {
			r.t.Errorf("testenv: hold nats port %d while stopped: %v", r.port, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Start starts the server again on the same port and store directory. It
// retries while the port is still held by the previous listener.
func (r *RestartableNATS) Start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s != nil {
		return
	}
	if r.hold != nil {
		r.hold.Close()
		r.hold = nil
	}
	deadline := time.Now().Add(natsReadyTimeout)
	for {
		s, err := startNATS(natsOptions(r.port, r.storeDir))
		if err == nil {
			r.s = s
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("testenv: restart nats on port %d: %v", r.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func natsOptions(port int, storeDir string) *server.Options {
	return &server.Options{
		Host:      "127.0.0.1",
		Port:      port,
		NoLog:     true,
		NoSigs:    true,
		JetStream: true,
		StoreDir:  storeDir,
		// Small limits keep many parallel test servers cheap.
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  1 << 30,
	}
}

func startNATS(opts *server.Options) (*server.Server, error) {
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(natsReadyTimeout) {
		shutdownNATS(s)
		return nil, fmt.Errorf("nats-server on port %d not ready after %s", opts.Port, natsReadyTimeout)
	}
	if !s.JetStreamEnabled() {
		shutdownNATS(s)
		return nil, fmt.Errorf("nats-server on port %d: jetstream not enabled", opts.Port)
	}
	return s, nil
}

func shutdownNATS(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}
