package testenv

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is an in-process JetStream cluster: n nats-servers joined by routes on loopback, each
// with its own store directory, admitting the role identities of host/bus with the
// permissions the embedded bus gives them (bus.NkeyUsers). Servers can be stopped and started
// again on the same ports and store directories, to take a stream's leader away.
type Cluster struct {
	t       testing.TB
	dataDir string // holds nats-auth/<role>.nk
	users   []*server.NkeyUser
	name    string
	routes  string

	mu    sync.Mutex
	nodes []*clusterNode
}

type clusterNode struct {
	name     string
	port     int
	route    int
	storeDir string
	s        *server.Server // nil while stopped
}

// StartCluster starts an n-server JetStream cluster and waits until it has a meta leader. The
// role keys are generated under DataDir() (bus.KeyPath(c.DataDir(), role) is each role's seed
// file, usable as nats.creds). Every server is shut down when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, dataDir: t.TempDir(), name: "palisade-test"}
	ids, err := bus.EnsureKeys(c.dataDir)
	if err != nil {
		t.Fatalf("testenv: cluster keys: %v", err)
	}
	if c.users, err = bus.NkeyUsers(ids, bus.Names{}); err != nil {
		t.Fatalf("testenv: cluster users: %v", err)
	}
	var routes []string
	for i := range n {
		nd := &clusterNode{name: fmt.Sprintf("n%d", i+1), port: freePort(t), route: freePort(t),
			storeDir: filepath.Join(t.TempDir(), "store")}
		c.nodes = append(c.nodes, nd)
		routes = append(routes, "nats-route://127.0.0.1:"+strconv.Itoa(nd.route))
	}
	c.routes = strings.Join(routes, ",")
	t.Cleanup(func() {
		for i := range c.nodes {
			c.Stop(i)
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range c.nodes {
		// Together: a JetStream cluster server waits for its peers before it is ready.
		wg.Go(func() { errs[i] = c.start(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("testenv: cluster server %d: %v", i+1, err)
		}
	}
	c.waitMetaLeader()
	c.waitPlacement(ids[bus.RoleAdmin], n)
	return c
}

// waitPlacement waits until the cluster can place a stream on all n servers: a meta leader is
// elected before it has heard from every peer, and a stream created then fails with "no
// suitable peers for placement". It creates and deletes a probe stream as the admin identity.
func (c *Cluster) waitPlacement(admin *bus.Identity, n int) {
	c.t.Helper()
	nc, err := bus.Dial(c.URLs(), admin, nats.Name("testenv cluster probe"))
	if err != nil {
		c.t.Fatalf("testenv: cluster probe connect: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatalf("testenv: cluster probe: %v", err)
	}
	// The meta leader sees every other server current and online (peers are marked offline
	// until their first statistics arrive), several polls in a row.
	steady := 0
	Eventually(c.t, natsReadyTimeout, fmt.Sprintf("%d JetStream peers online", n), func() bool {
		if c.peersOnline(n) {
			steady++
		} else {
			steady = 0
		}
		return steady >= 10
	})
	cfg := jetstream.StreamConfig{Name: "TESTENV_PROBE", Subjects: []string{"testenv.probe"}, Replicas: n, Storage: jetstream.FileStorage}
	Eventually(c.t, natsReadyTimeout, fmt.Sprintf("room for an R%d stream", n), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.CreateStream(ctx, cfg)
		return err == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), natsReadyTimeout)
	defer cancel()
	if err := js.DeleteStream(ctx, cfg.Name); err != nil {
		c.t.Fatalf("testenv: delete the probe stream: %v", err)
	}
}

// DataDir holds the role keys (nats-auth/) the cluster's servers admit.
func (c *Cluster) DataDir() string { return c.dataDir }

// URLs is the client URL of every server, comma-separated (the form nats.url takes).
func (c *Cluster) URLs() string {
	var u []string
	for _, nd := range c.nodes {
		u = append(u, "nats://127.0.0.1:"+strconv.Itoa(nd.port))
	}
	return strings.Join(u, ",")
}

// Server returns server i (0-based), or nil while it is stopped.
func (c *Cluster) Server(i int) *server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].s
}

// StreamLeader returns the index of the server leading stream (in the global account, where the
// role users live), or -1 when no running server leads it.
func (c *Cluster) StreamLeader(stream string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, nd := range c.nodes {
		if nd.s != nil && nd.s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return i
		}
	}
	return -1
}

// WaitStreamLeader waits until a running server leads stream and returns its index.
func (c *Cluster) WaitStreamLeader(stream string) int {
	c.t.Helper()
	i := -1
	Eventually(c.t, natsReadyTimeout, "a leader for stream "+stream, func() bool {
		i = c.StreamLeader(stream)
		return i >= 0
	})
	return i
}

// LeadOn moves the leadership of stream to server i: it asks the current leader to step down
// until server i is elected. A test uses it to put several streams' leaders on the server it
// will stop.
func (c *Cluster) LeadOn(stream string, i int) {
	c.t.Helper()
	Eventually(c.t, natsReadyTimeout, fmt.Sprintf("server %d leading %s", i+1, stream), func() bool {
		l := c.StreamLeader(stream)
		if l == i {
			return true
		}
		if s := c.Server(max(l, 0)); l >= 0 && s != nil {
			_ = s.JetStreamStepdownStream(server.DEFAULT_GLOBAL_ACCOUNT, stream)
			// Let the election finish before asking again.
			deadline := time.Now().Add(5 * time.Second)
			for c.StreamLeader(stream) == l && time.Now().Before(deadline) {
				time.Sleep(PollInterval)
			}
		}
		return c.StreamLeader(stream) == i
	})
}

// Stop shuts server i down and waits until it has stopped; stopping a stopped server does
// nothing.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	s := c.nodes[i].s
	c.nodes[i].s = nil
	c.mu.Unlock()
	if s != nil {
		shutdownNATS(s)
	}
}

// Restart starts a stopped server i again on its ports and store directory, and waits until it
// accepts clients. It retries while the ports are still being released.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	deadline := time.Now().Add(natsReadyTimeout)
	for {
		err := c.start(i)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("testenv: restart cluster server %d: %v", i+1, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) start(i int) error {
	c.mu.Lock()
	nd := c.nodes[i]
	running := nd.s != nil
	c.mu.Unlock()
	if running {
		return nil
	}
	opts := &server.Options{
		ServerName: nd.name,
		Host:       "127.0.0.1",
		Port:       nd.port,
		NoLog:      true,
		NoSigs:     true,
		JetStream:  true,
		StoreDir:   nd.storeDir,
		Nkeys:      c.users,
		Cluster: server.ClusterOpts{
			Name: c.name,
			Host: "127.0.0.1",
			Port: nd.route,
		},
		Routes:             server.RoutesFromStr(c.routes),
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  1 << 30,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("new server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(natsReadyTimeout) {
		shutdownNATS(s)
		return fmt.Errorf("server %s on port %d not ready after %s", nd.name, nd.port, natsReadyTimeout)
	}
	c.mu.Lock()
	nd.s = s
	c.mu.Unlock()
	return nil
}

// waitMetaLeader waits until the cluster has elected a JetStream meta leader (before it, no
// stream can be created).
func (c *Cluster) waitMetaLeader() {
	c.t.Helper()
	Eventually(c.t, natsReadyTimeout, "a JetStream meta leader", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, nd := range c.nodes {
			if nd.s != nil && nd.s.JetStreamIsLeader() {
				return true
			}
		}
		return false
	})
}

// peersOnline reports whether a running server leads the meta group and sees the other n-1
// servers current and online.
func (c *Cluster) peersOnline(n int) bool {
	c.mu.Lock()
	var servers []*server.Server
	for _, nd := range c.nodes {
		if nd.s != nil {
			servers = append(servers, nd.s)
		}
	}
	c.mu.Unlock()
	for _, s := range servers {
		if !s.JetStreamIsLeader() {
			continue
		}
		jsz, err := s.Jsz(&server.JSzOptions{})
		if err != nil || jsz.Meta == nil || len(jsz.Meta.Replicas) != n-1 {
			return false
		}
		for _, p := range jsz.Meta.Replicas {
			if !p.Current || p.Offline {
				return false
			}
		}
		return true
	}
	return false
}

// freePort returns a loopback port free at the time of the call.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
