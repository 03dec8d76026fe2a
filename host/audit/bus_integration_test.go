package audit_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The production wiring: an embedded bus, the publisher on a bus
// connection, and an external subscriber on the TCP port.
func TestThroughEmbeddedBus(t *testing.T) {
	ctx := context.Background()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bootstrap(t, b, nil)
	nc, err := b.Connect("palisade-audit", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ext, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleReader).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	sub, err := ext.SubscribeSync("palisade.audit.decision.allow.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Flush(); err != nil {
		t.Fatal(err)
	}
	ev := decision(1)
	ev.Action, ev.Stage = "allow", "risk"
	p.Record(ctx, ev)
	m, err := sub.NextMsg(waitLimit)
	if err != nil {
		t.Fatalf("external subscriber got nothing: %v", err)
	}
	var got audit.Event
	if err := json.Unmarshal(m.Data, &got); err != nil || got.Stage != "risk" || got.Action != "allow" || got.Tool != "read_file" {
		t.Fatalf("event %+v, err %v", got, err)
	}
	// Shutdown order: publisher first (flushes), then the bus.
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Pending != 0 || st.Published != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// bootstrap creates the audit stream, and registers signer when set, as the admin identity: the
// gateway does so for its embedded server, since the gateway identity may not.
func bootstrap(t *testing.T, b *bus.Bus, signer audit.Signer) {
	t.Helper()
	nc, err := b.ConnectAs(bus.RoleAdmin, "setup")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := audit.EnsureStream(ctx, js, audit.Options{}); err != nil {
		t.Fatal(err)
	}
	if signer != nil {
		if err := audit.RegisterSigner(ctx, js, "", signer, "gw-1"); err != nil {
			t.Fatal(err)
		}
	}
}

// A stream an admin made with a longer de-duplication window (an earlier release used 2h) is
// kept by a gateway, which may not update it: New does not fail, and events are stored.
func TestGatewayKeepsLongerWindow(t *testing.T) {
	ctx := context.Background()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	admin, err := b.ConnectAs(bus.RoleAdmin, "setup")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	js, _ := jetstream.New(admin)
	if err := audit.EnsureStream(ctx, js, audit.Options{Duplicates: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	nc, err := b.Connect("palisade-audit", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatalf("New on a stream with a longer window: %v", err)
	}
	p.Record(ctx, decision(1))
	flush(t, p)
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, audit.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.Config.Duplicates != 2*time.Hour || info.State.Msgs != 1 {
		t.Fatalf("stream window %v, %d messages; want 2h kept and 1", info.Config.Duplicates, info.State.Msgs)
	}
	// A shorter window than this identity wants is still refused: the gateway may not fix it.
	if err := audit.EnsureStream(ctx, js, audit.Options{Duplicates: time.Hour}); err != nil {
		t.Fatal(err)
	}
	js2, _ := jetstream.New(nc)
	if err := audit.EnsureStream(ctx, js2, audit.Options{Duplicates: 3 * time.Hour}); err == nil {
		t.Fatal("a gateway lengthened the admin's window, or accepted a shorter one than it wants")
	}
}
