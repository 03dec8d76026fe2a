package approval

import (
	"testing"
	"time"

	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestGrantBoundToPrincipal: a grant given on A's held call (scope minutes) releases A's same
// call later from any session, and not B's, nor a call without a principal; the approval
// event names who made the call.
func TestGrantBoundToPrincipal(t *testing.T) {
	rec := &events{}
	m, err := New(t.Context(), Options{Timeout: time.Hour, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	a := &abi.Principal{Issuer: "https://idp", Subject: "a"}
	b := &abi.Principal{Issuer: "https://idp", Subject: "b"}
	as := func(id, session string, p *abi.Principal) engine.Held {
		h := held(id, session, "write_file", `{"a":1}`)
		h.Envelope.Principal = p
		return h
	}
	first := startHold(t.Context(), m, as("P1", "s1", a))
	testenv.Eventually(t, waitLimit, "first held", listed(m, "P1"))
	if p, _ := m.Get("P1"); PrincipalKey(p.Principal) != "https://idp#a" {
		t.Fatalf("queue entry principal = %+v", p.Principal)
	}
	if err := m.Decide(t.Context(), "P1", Decision{Action: "allow", By: "carol", Scope: ScopeMinutes, Minutes: 5}); err != nil {
		t.Fatal(err)
	}
	result(t, first)
	if res := result(t, startHold(t.Context(), m, as("P2", "s2", a))); res.Action != abi.ActionAllow || res.ID != "P1" {
		t.Fatalf("A's later call = %+v, want allow by the grant P1", res)
	}
	for _, tc := range []struct {
		id string
		p  *abi.Principal
	}{{"P3", b}, {"P4", nil}} {
		if _, ok := m.Granted(t.Context(), as(tc.id, "s2", tc.p)); ok {
			t.Errorf("%s (principal %+v) was granted A's grant", tc.id, tc.p)
		}
	}
	for _, ev := range rec.all() {
		if ev.Approval != nil && ev.Approval.ID == "P1" && PrincipalKey(ev.Principal) != "https://idp#a" {
			t.Errorf("approval event principal = %+v", ev.Principal)
		}
	}
}
