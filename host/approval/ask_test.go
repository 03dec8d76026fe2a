package approval

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
)

// TestAskInClient checks a held call put to the person at the client (Held.Ask) on a manager
// sharing the queue over NATS: an answer decides the call as elicitation:<who> with
// detail.via; a question with no answer leaves the call to the queue's timeout, and its
// context ends when the hold does; a question that fails leaves the call to the queue, where a
// person decides it.
func TestAskInClient(t *testing.T) {
	ns := testenv.StartNATS(t)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rec := &events{}
	m, err := New(t.Context(), Options{Conn: nc, Gateway: "gw-1", Timeout: 300 * time.Millisecond, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	approvalEvent := func(id string) audit.Event {
		var found audit.Event
		testenv.Eventually(t, waitLimit, "the approval event of "+id, func() bool {
			for _, ev := range rec.all() {
				if ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.ID == id {
					found = ev
					return true
				}
			}
			return false
		})
		return found
	}

	t.Run("answered", func(t *testing.T) {
		h := held("ask-1", "s1", "write", `{"path":"a"}`)
		h.Ask = func(ctx context.Context, q engine.Held) (engine.Answer, error) {
			if q.AuditID != "ask-1" || q.Envelope.Tool != "write" {
				t.Errorf("asked about %+v", q)
			}
			return engine.Answer{Action: abi.ActionAllow, By: "alice", Via: "elicitation"}, nil
		}
		res := result(t, startHold(t.Context(), m, h))
		if res.Action != abi.ActionAllow || res.DecidedBy != "elicitation:alice" || res.Via != "elicitation" || res.Scope != ScopeOnce {
			t.Errorf("resolution = %+v", res)
		}
		ev := approvalEvent("ask-1")
		var d struct{ Via string }
		_ = json.Unmarshal(ev.Detail, &d)
		if ev.Approval.DecidedBy != "elicitation:alice" || d.Via != "elicitation" || ev.Approval.Decision != audit.ApprovalApproved {
			t.Errorf("approval event = %+v detail %s", ev.Approval, ev.Detail)
		}
	})

	t.Run("no answer times out", func(t *testing.T) {
		ended := make(chan struct{})
		h := held("ask-2", "s1", "write", `{"path":"b"}`)
		h.Ask = func(ctx context.Context, _ engine.Held) (engine.Answer, error) {
			<-ctx.Done()
			close(ended)
			return engine.Answer{}, ctx.Err()
		}
		res := result(t, startHold(t.Context(), m, h))
		if res.Action != abi.ActionDeny || res.DecidedBy != ByTimeout || res.Via != "" {
			t.Errorf("resolution = %+v", res)
		}
		select {
		case <-ended:
		case <-time.After(waitLimit):
			t.Fatal("the question outlived the hold")
		}
	})

	t.Run("failed question leaves the queue", func(t *testing.T) {
		h := held("ask-3", "s1", "write", `{"path":"c"}`)
		h.Decision.Rule = "ask-write-long"
		m2, err := New(t.Context(), Options{Conn: nc, Gateway: "gw-1", Timeout: time.Minute, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		defer m2.Close()
		h.Ask = func(context.Context, engine.Held) (engine.Answer, error) {
			return engine.Answer{}, errors.New("client does not support elicitation")
		}
		ch := startHold(t.Context(), m2, h)
		testenv.Eventually(t, waitLimit, "the held call in the queue", listed(m2, "ask-3"))
		if err := m2.Decide(t.Context(), "ask-3", Decision{Action: abi.ActionAllow, By: "erin"}); err != nil {
			t.Fatal(err)
		}
		res := result(t, ch)
		if res.Action != abi.ActionAllow || res.Via != "" || res.DecidedBy == "" {
			t.Errorf("resolution = %+v", res)
		}
	})
}
