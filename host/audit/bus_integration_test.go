package audit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
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
