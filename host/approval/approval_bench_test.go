package approval

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
)

// benchRoundTrip measures hold → listed on the decider → decided → hold returns.
func benchRoundTrip(b *testing.B, holder, decider *Manager) {
	changes, stop := decider.Subscribe()
	defer stop()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("B%08d", i)
		i++
		start := time.Now()
		ch := make(chan error, 1)
		go func() { _, err := holder.Hold(b.Context(), held(id, "s", "t", `{}`)); ch <- err }()
		for c := range changes {
			if c.Type == "held" && c.ID == id {
				break
			}
		}
		if err := decider.Decide(b.Context(), id, Decision{Action: "allow"}); err != nil {
			b.Fatal(err)
		}
		if err := <-ch; err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	testenv.Latencies(lat).Report(b, "", "_us", time.Microsecond)
}

// BenchmarkRoundTripLocal: one gateway, no NATS.
func BenchmarkRoundTripLocal(b *testing.B) {
	m, err := New(b.Context(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchRoundTrip(b, m, m)
}

// BenchmarkRoundTripFleet: held on one gateway, decided on another through NATS KV; the
// decision is signed with the approver key and verified by the holder.
func BenchmarkRoundTripFleet(b *testing.B) {
	s := testenv.StartNATS(b)
	ids, err := bus.EnsureKeys(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	key := ids[bus.RoleApprover]
	mk := func() *Manager {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		m, err := New(b.Context(), Options{Conn: nc, Signer: key})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close() })
		return m
	}
	benchRoundTrip(b, mk(), mk())
}

// BenchmarkGrantedHold: a call covered by a scoped grant resolves without waiting.
func BenchmarkGrantedHold(b *testing.B) {
	m, err := New(b.Context(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ch := make(chan struct{})
	go func() { m.Hold(b.Context(), held("G0", "s", "t", `{"a":1}`)); close(ch) }()
	for {
		if _, ok := m.Get("G0"); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := m.Decide(b.Context(), "G0", Decision{Action: "allow", Scope: ScopeMinutes, Minutes: 60}); err != nil {
		b.Fatal(err)
	}
	<-ch
	h := held("G1", "s2", "t", `{"a":1}`)
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.Hold(b.Context(), h); r.ID != "G0" {
			b.Fatalf("not granted: %+v", r)
		}
	}
}
