package audit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// countingSigner counts the signatures a publisher makes.
type countingSigner struct {
	audit.Signer
	n atomic.Int64
}

func (c *countingSigner) Sign(b []byte) ([]byte, error) {
	c.n.Add(1)
	return c.Signer.Sign(b)
}

// A burst of events is signed per batch, not per event, and every event still verifies alone
// from its own bytes and headers. Moving an event's batch header onto another event, dropping
// it, emptying it, or changing the event's bytes is flagged bad-signature.
func TestBatchSignedEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	gwID := b.Identity(bus.RoleGateway)
	bootstrap(t, b, gwID)
	nc, err := b.Connect("gateway", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingSigner{Signer: gwID}
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: cs, Gateway: "gw-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	const n = 400
	for i := range n {
		p.Record(ctx, decision(i))
	}
	flush(t, p)
	if got := cs.n.Load(); got >= n || got < 1 {
		t.Fatalf("%d events took %d signatures; want fewer than one per event", n, got)
	}
	t.Logf("%d events, %d signatures", n, cs.n.Load())

	reader, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleReader).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	js, _ := jetstream.New(reader)
	st, err := js.Stream(ctx, audit.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	signers := audit.NewSigners(ctx, reader, "")
	var msgs []*jetstream.RawStreamMsg
	batched := 0
	for seq := uint64(1); seq <= n; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := signers.Verify(ctx, m.Header, m.Data); got != "" {
			t.Fatalf("event %d: Verify = %q, want good", seq, got)
		}
		if m.Header.Get(audit.HeaderBatch) == "" {
			t.Fatalf("event %d has no %s header", seq, audit.HeaderBatch)
		}
		if m.Header.Get(audit.HeaderBatch)[len(m.Header.Get(audit.HeaderBatch))-1] != '-' {
			batched++
		}
		msgs = append(msgs, m)
	}
	if batched == 0 {
		t.Fatal("no event was signed in a batch of more than one")
	}
	// A reader with a fresh memory, so each forgery is checked on its own.
	fresh := func() *audit.Signers { return audit.NewSigners(ctx, nil, "", gwID.PublicKey()) }
	var a, c *jetstream.RawStreamMsg // two events of one batch
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Header.Get(audit.HeaderSignature) == msgs[i-1].Header.Get(audit.HeaderSignature) {
			a, c = msgs[i-1], msgs[i]
			break
		}
	}
	if a == nil {
		t.Fatal("no two neighbouring events share a batch signature")
	}
	hdr := func(m *jetstream.RawStreamMsg, batch []string) nats.Header {
		h := nats.Header{}
		h.Set(audit.HeaderSigner, m.Header.Get(audit.HeaderSigner))
		h.Set(audit.HeaderSignature, m.Header.Get(audit.HeaderSignature))
		if batch != nil {
			h[audit.HeaderBatch] = batch
		}
		return h
	}
	tampered := append([]byte(nil), a.Data...)
	tampered[len(tampered)-2] ^= 1
	for name, tc := range map[string]struct {
		h    nats.Header
		data []byte
	}{
		"another event's place": {hdr(a, []string{c.Header.Get(audit.HeaderBatch)}), a.Data},
		"no place":              {hdr(a, nil), a.Data},
		"an empty place":        {hdr(a, []string{""}), a.Data},
		"changed bytes":         {hdr(a, []string{a.Header.Get(audit.HeaderBatch)}), tampered},
	} {
		if got := fresh().Verify(ctx, tc.h, tc.data); got != audit.ProblemBadSignature {
			t.Errorf("%s: Verify = %q, want %q", name, got, audit.ProblemBadSignature)
		}
	}
	// The same forgeries after the batch's signature was remembered as good.
	warm := fresh()
	if got := warm.Verify(ctx, c.Header, c.Data); got != "" {
		t.Fatalf("Verify = %q", got)
	}
	if got := warm.Verify(ctx, hdr(a, []string{c.Header.Get(audit.HeaderBatch)}), a.Data); got != audit.ProblemBadSignature {
		t.Errorf("after a good event of the batch, another event's place: Verify = %q", got)
	}
	// An exported line carries the place, and verifies offline.
	se := audit.SignedEvent{Signer: a.Header.Get(audit.HeaderSigner), Signature: a.Header.Get(audit.HeaderSignature), Batch: a.Header.Get(audit.HeaderBatch), Event: a.Data}
	if got := fresh().VerifyEvent(ctx, se); got != "" {
		t.Errorf("VerifyEvent = %q", got)
	}
	se.Batch = ""
	if got := fresh().VerifyEvent(ctx, se); got != audit.ProblemBadSignature {
		t.Errorf("VerifyEvent without its place = %q", got)
	}
}
