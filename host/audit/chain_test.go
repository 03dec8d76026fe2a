package audit_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestVerifyChain records ten events through an embedded bus and verifies the history as the
// reader; then, holding the admin credential as an attacker would, it deletes the stream and
// republishes the history minus one event, with one event altered, and with two swapped: each
// is reported as a gap, a rewrite or a reorder at the first bad stream sequence.
func TestVerifyChain(t *testing.T) {
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
	for i := range 10 {
		p.Record(ctx, decision(i))
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	reader, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleReader).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	rep, err := audit.VerifyChain(ctx, reader, "", false)
	if err != nil || rep.Events != 10 || rep.Publishers != 1 {
		t.Fatalf("clean history: %+v, %v", rep, err)
	}

	admin, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleAdmin).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	js, _ := jetstream.New(admin)
	st, err := js.Stream(ctx, audit.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	var orig []*nats.Msg
	for seq := uint64(1); seq <= 10; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		orig = append(orig, &nats.Msg{Subject: m.Subject, Data: m.Data, Header: m.Header})
	}
	// rewrite replaces the stream's history with msgs, as an admin can (deny_delete holds for
	// messages, not for the stream).
	rewrite := func(msgs []*nats.Msg) {
		t.Helper()
		// Delete and recreate until the new stream starts empty: on a loaded machine the server
		// can hand the old store back to a stream recreated right after the delete.
		for deadline := time.Now().Add(30 * time.Second); ; {
			if err := js.DeleteStream(ctx, audit.DefaultStream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				t.Fatal(err)
			}
			for { // poll until it is gone
				if _, err := js.Stream(ctx, audit.DefaultStream); errors.Is(err, jetstream.ErrStreamNotFound) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the stream is still there")
				}
			}
			s2, err := js.CreateStream(ctx, info.Config)
			if err != nil {
				// Under load the deleted stream's store can still be going away ("error
				// creating store for stream"): try again until the deadline.
				if time.Now().After(deadline) {
					t.Fatal(err)
				}
				continue
			}
			if si, err := s2.Info(ctx); err == nil && si.State.Msgs == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a recreated stream never started empty")
			}
		}
		for _, m := range msgs {
			if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: m.Subject, Data: m.Data}); err != nil {
				t.Fatal(err)
			}
		}
		// Poll (never sleep) until the new stream holds exactly msgs.
		for deadline := time.Now().Add(10 * time.Second); ; {
			s2, err := js.Stream(ctx, audit.DefaultStream)
			if err == nil {
				if si, err := s2.Info(ctx); err == nil && si.State.Msgs == uint64(len(msgs)) && si.State.LastSeq == uint64(len(msgs)) {
					return
				}
			}
			if time.Now().After(deadline) {
				si, _ := s2.Info(ctx)
				t.Fatalf("the rewritten stream never settled: %+v", si.State)
			}
		}
	}
	altered := *orig[3]
	altered.Data = bytes.Replace(altered.Data, []byte(`"action":"deny"`), []byte(`"action":"allow"`), 1)
	if bytes.Equal(altered.Data, orig[3].Data) {
		t.Fatalf("event 4 has no deny to alter: %s", orig[3].Data)
	}
	for _, tc := range []struct {
		name    string
		msgs    []*nats.Msg
		problem string
		seq     uint64
	}{
		{"replayed whole", orig, "", 0},
		{"event 5 deleted", append(append([]*nats.Msg{}, orig[:4]...), orig[5:]...), audit.ChainGap, 5},
		{"first event deleted", orig[1:], audit.ChainGap, 1},
		{"event 4 altered", append(append(append([]*nats.Msg{}, orig[:3]...), &altered), orig[4:]...), audit.ChainRewrite, 4},
		{"events 3 and 4 swapped", append(append([]*nats.Msg{}, orig[:2]...), append([]*nats.Msg{orig[3], orig[2]}, orig[4:]...)...), audit.ChainReorder, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rewrite(tc.msgs)
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_, err := audit.VerifyChain(ctx, reader, "", false)
			if tc.problem == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *audit.ChainError
			if !errors.As(err, &ce) || !errors.Is(err, audit.ErrChainBroken) {
				t.Fatalf("not detected: %v", err)
			}
			if ce.Problem != tc.problem || ce.Seq != tc.seq {
				t.Fatalf("got %s at %d (%v), want %s at %d", ce.Problem, ce.Seq, err, tc.problem, tc.seq)
			}
		})
	}
}
