package bus_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func waitConnected(t *testing.T, nc *nats.Conn) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "a connection to "+nc.Opts.Url, nc.IsConnected)
}

func TestEmbeddedJetStreamStoresUnderDataDir(t *testing.T) {
	dir := t.TempDir()
	b, err := bus.Start(context.Background(), bus.Options{DataDir: dir, Port: bus.RandomPort})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer b.Close()
	if !b.Embedded() {
		t.Fatal("Embedded() = false for an embedded bus")
	}
	nc, err := b.ConnectAs(bus.RoleAdmin, "test") // only admin creates streams
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := js.Publish(ctx, "s.a", []byte("x")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nats", "jetstream")); err != nil {
		t.Fatalf("jetstream store not under DataDir/nats: %v", err)
	}
	// An external subscriber reaches the same server over TCP by ClientURL.
	ext, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleAdmin).Options()...)
	if err != nil {
		t.Fatalf("tcp connect to %s: %v", b.ClientURL(), err)
	}
	defer ext.Close()
	ejs, _ := jetstream.New(ext)
	s, err := ejs.Stream(ctx, "S")
	if err != nil {
		t.Fatalf("stream over tcp: %v", err)
	}
	if n := s.CachedInfo().State.Msgs; n != 1 {
		t.Fatalf("stream has %d msgs, want 1", n)
	}
	b.Close()
	if !nc.IsClosed() {
		t.Fatal("Close left a Connect connection open")
	}
}

func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = bus.Start(context.Background(), bus.Options{DataDir: t.TempDir(), Port: port})
	if !errors.Is(err, bus.ErrPortInUse) {
		t.Fatalf("Start on busy port: err = %v, want ErrPortInUse", err)
	}
	if want := strconv.Itoa(port); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name port %s", err, want)
	}
}

func TestExternalURLDownAtStartThenUp(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	r.Stop()
	b, err := bus.Start(context.Background(), bus.Options{URL: r.URL()})
	if err != nil {
		t.Fatalf("Start external: %v", err)
	}
	defer b.Close()
	if b.Embedded() || b.ClientURL() != r.URL() {
		t.Fatalf("external bus: Embedded=%v ClientURL=%q", b.Embedded(), b.ClientURL())
	}
	nc, err := b.Connect("late")
	if err != nil {
		t.Fatalf("Connect while server down: %v", err)
	}
	if nc.IsConnected() {
		t.Fatal("connected while the server is stopped")
	}
	r.Start()
	waitConnected(t, nc)
}

func TestExternalURLInvalid(t *testing.T) {
	if _, err := bus.Start(context.Background(), bus.Options{URL: "nats://"}); err == nil {
		t.Fatal("Start accepted a URL with no host")
	}
}

func TestConnectReconnectsAfterRestart(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	b, err := bus.Start(context.Background(), bus.Options{URL: r.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	nc, err := b.Connect("r")
	if err != nil {
		t.Fatal(err)
	}
	waitConnected(t, nc)
	r.Stop()
	r.Start()
	waitConnected(t, nc)
	if nc.Stats().Reconnects < 1 {
		t.Fatalf("reconnects = %d, want >= 1", nc.Stats().Reconnects)
	}
}
