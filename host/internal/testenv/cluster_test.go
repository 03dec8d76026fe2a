package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestCluster: three servers, the bus's role identities and permissions (the gateway may not
// create a stream, the admin may), an R3 stream whose leader can be found, stopped (another
// takes over and the stream keeps accepting) and restarted.
func TestCluster(t *testing.T) {
	c := testenv.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dial := func(role string) jetstream.JetStream {
		t.Helper()
		id, err := bus.LoadIdentity(c.DataDir(), role, "")
		if err != nil {
			t.Fatal(err)
		}
		nc, err := bus.Dial(c.URLs(), id, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	if nc, err := nats.Connect(c.URLs(), nats.Timeout(2*time.Second)); err == nil {
		nc.Close()
		t.Fatal("connected without a key")
	}
	cfg := jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3}
	gw := dial(bus.RoleGateway)
	sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
	if _, err := gw.CreateStream(sctx, cfg); err == nil {
		t.Fatal("the gateway identity created a stream")
	}
	scancel()
	admin := dial(bus.RoleAdmin)
	if _, err := admin.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	old := c.WaitStreamLeader("R3")
	c.Stop(old)
	testenv.Eventually(t, 30*time.Second, "a new leader", func() bool {
		i := c.StreamLeader("R3")
		return i >= 0 && i != old
	})
	testenv.Eventually(t, 30*time.Second, "a publish after failover", func() bool {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		defer pcancel()
		_, err := gw.Publish(pctx, "r3.x", []byte("after"))
		return err == nil
	})
	c.Restart(old)
	if c.Server(old) == nil {
		t.Fatal("restarted server is nil")
	}
}
