package approval

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
)

// events collects audit events (the Recorder the gateway passes is the audit publisher).
type events struct {
	mu sync.Mutex
	ev []audit.Event
}

func (e *events) Record(_ context.Context, ev audit.Event) {
	e.mu.Lock()
	e.ev = append(e.ev, ev)
	e.mu.Unlock()
}

func (e *events) all() []audit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]audit.Event(nil), e.ev...)
}

func held(id, session, tool, args string) engine.Held {
	return engine.Held{
		AuditID: id,
		Envelope: &abi.Envelope{ID: id, Method: "tools/call", Server: "fs", Session: session, Tool: tool,
			Arguments: json.RawMessage(args)},
		Decision: &chain.Decision{Action: abi.ActionAsk, Stage: "rules", Rule: "ask-write", Reason: "writes need a human",
			Stages: []abi.StageResult{{Stage: "rules", Action: abi.ActionAsk}}},
	}
}

type holdResult struct {
	res engine.Resolution
	err error
}

func startHold(ctx context.Context, m *Manager, h engine.Held) <-chan holdResult {
	ch := make(chan holdResult, 1)
	go func() {
		r, err := m.Hold(ctx, h)
		ch <- holdResult{r, err}
	}()
	return ch
}

// waitLimit bounds every wait for state the manager updates in the background.
const waitLimit = 20 * time.Second

func listed(m *Manager, id string) func() bool {
	return func() bool { _, ok := m.Get(id); return ok }
}

func result(t *testing.T, ch <-chan holdResult) engine.Resolution {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Hold: %v", r.err)
		}
		return r.res
	case <-time.After(20 * time.Second):
		t.Fatal("Hold did not return")
	}
	return engine.Resolution{}
}

func TestDecideReleasesHold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      Decision
		action string
		word   string
	}{
		{"approve", Decision{Action: "allow", By: "alice"}, "allow", audit.ApprovalApproved},
		{"deny with reason", Decision{Action: "deny", By: "bob", Reason: "not today"}, "deny", audit.ApprovalDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &events{}
			m, err := New(t.Context(), Options{Recorder: rec, Gateway: "gw1"})
			if err != nil {
				t.Fatal(err)
			}
			ch := startHold(t.Context(), m, held("A1", "s1", "write_file", `{"path":"/tmp/x"}`))
			testenv.Eventually(t, waitLimit, "held call listed", listed(m, "A1"))
			p, _ := m.Get("A1")
			if p.Tool != "write_file" || p.Rule != "ask-write" || p.Gateway != "gw1" || string(p.Arguments) != `{"path":"/tmp/x"}` {
				t.Errorf("pending = %+v", p)
			}
			if err := m.Decide(t.Context(), "A1", tc.d); err != nil {
				t.Fatal(err)
			}
			res := result(t, ch)
			if res.Action != tc.action || res.DecidedBy != tc.d.By || res.Reason != tc.d.Reason || res.ID != "A1" || res.Scope != ScopeOnce {
				t.Errorf("resolution = %+v", res)
			}
			if n := len(m.List()); n != 0 {
				t.Errorf("List has %d after decision, want 0", n)
			}
			ev := rec.all()
			if len(ev) != 1 || ev[0].Kind != audit.KindApproval || ev[0].Approval == nil ||
				ev[0].Approval.DecidedBy != tc.d.By || ev[0].Approval.Decision != tc.word || ev[0].Approval.ID != "A1" {
				t.Fatalf("audit events = %+v", ev)
			}
			if err := m.Decide(t.Context(), "A1", tc.d); !errors.Is(err, ErrNotFound) {
				t.Errorf("second Decide = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestTimeoutFollowsRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta string
		want string
	}{
		{"default deny", ``, abi.ActionDeny},
		{"rule allows on timeout", `{"timeout":"20ms","on_timeout":"allow"}`, abi.ActionAllow},
		{"rule denies on timeout", `{"timeout":"20ms","on_timeout":"deny"}`, abi.ActionDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &events{}
			m, err := New(t.Context(), Options{Recorder: rec, Timeout: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			h := held("T1", "s", "write_file", `{}`)
			if tc.meta != "" {
				h.Decision.Stages[0].Verdict = &abi.Verdict{Action: abi.ActionAsk, Metadata: json.RawMessage(tc.meta)}
			}
			res := result(t, startHold(t.Context(), m, h))
			if res.Action != tc.want || res.DecidedBy != ByTimeout {
				t.Errorf("resolution = %+v, want %s by timeout", res, tc.want)
			}
			ev := rec.all()
			if len(ev) != 1 || ev[0].Approval.Decision != audit.ApprovalTimeout {
				t.Errorf("audit = %+v", ev)
			}
		})
	}
}

func TestRuleTimeoutIsCapped(t *testing.T) {
	m, err := New(t.Context(), Options{MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	d := &chain.Decision{Stage: "rules", Stages: []abi.StageResult{{Stage: "rules",
		Verdict: &abi.Verdict{Metadata: json.RawMessage(`{"timeout":"5h"}`)}}}}
	if got, on := m.ruleTimeout(d); got != time.Minute || on != abi.ActionDeny {
		t.Errorf("ruleTimeout = %v %s, want 1m deny", got, on)
	}
}

func TestClientDisconnectReleasesAndAudits(t *testing.T) {
	rec := &events{}
	m, err := New(t.Context(), Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ch := startHold(ctx, m, held("D1", "s", "write_file", `{}`))
	testenv.Eventually(t, waitLimit, "held", listed(m, "D1"))
	cancel()
	res := result(t, ch)
	if res.Action != abi.ActionDeny || res.DecidedBy != ByDisconnect {
		t.Errorf("resolution = %+v", res)
	}
	if len(m.List()) != 0 {
		t.Error("held call leaked after disconnect")
	}
	ev := rec.all()
	if len(ev) != 1 || ev[0].Approval.DecidedBy != ByDisconnect || ev[0].Action != abi.ActionDeny {
		t.Errorf("audit = %+v", ev)
	}
}

func TestProgressWhileHeld(t *testing.T) {
	m, err := New(t.Context(), Options{ProgressEvery: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	var last atomic.Value
	h := held("P1", "s", "write_file", `{}`)
	h.Progress = func(msg string) { sent.Add(1); last.Store(msg) }
	ch := startHold(t.Context(), m, h)
	testenv.Eventually(t, waitLimit, "three progress notifications", func() bool { return sent.Load() >= 3 })
	if msg, _ := last.Load().(string); msg == "" {
		t.Error("empty progress message")
	}
	if err := m.Decide(t.Context(), "P1", Decision{Action: "allow"}); err != nil {
		t.Fatal(err)
	}
	if res := result(t, ch); res.Action != abi.ActionAllow || res.DecidedBy != "admin" {
		t.Errorf("resolution = %+v", res)
	}
}

func TestScopedGrants(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scope     string
		session   string // of the second call
		args      string // of the second call
		autoAllow bool
	}{
		{"once covers nothing", ScopeOnce, "s1", `{"a":1}`, false},
		{"session covers same session", ScopeSession, "s1", `{"a":1}`, true},
		{"session skips other session", ScopeSession, "s2", `{"a":1}`, false},
		{"session skips other arguments", ScopeSession, "s1", `{"a":2}`, false},
		{"minutes covers other session", ScopeMinutes, "s2", `{"a":1}`, true},
		{"minutes skips other arguments", ScopeMinutes, "s2", `{"a":2}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(t.Context(), Options{Timeout: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			first := startHold(t.Context(), m, held("G1", "s1", "write_file", `{"a":1}`))
			testenv.Eventually(t, waitLimit, "first held", listed(m, "G1"))
			if err := m.Decide(t.Context(), "G1", Decision{Action: "allow", By: "carol", Scope: tc.scope, Minutes: 5}); err != nil {
				t.Fatal(err)
			}
			result(t, first)
			var waited atomic.Int32
			h2 := held("G2", tc.session, "write_file", tc.args)
			h2.Waiting = func() { waited.Add(1) }
			second := startHold(t.Context(), m, h2)
			if tc.autoAllow {
				res := result(t, second)
				if res.Action != abi.ActionAllow || res.ID != "G1" || res.DecidedBy != "carol" || res.Scope != tc.scope {
					t.Errorf("granted resolution = %+v", res)
				}
				if waited.Load() != 0 {
					t.Error("a call a grant resolved was reported waiting (it would get a held record)")
				}
				return
			}
			testenv.Eventually(t, waitLimit, "second held", listed(m, "G2"))
			if waited.Load() != 1 { // Waiting runs before the call is queued
				t.Errorf("a held call was reported waiting %d times, want once", waited.Load())
			}
			if err := m.Decide(t.Context(), "G2", Decision{Action: "deny"}); err != nil {
				t.Fatal(err)
			}
			if res := result(t, second); res.Action != abi.ActionDeny {
				t.Errorf("second = %+v", res)
			}
		})
	}
}

func TestDecideRejects(t *testing.T) {
	m, err := New(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch := startHold(t.Context(), m, held("R1", "s", "t", `{}`))
	testenv.Eventually(t, waitLimit, "held", listed(m, "R1"))
	for _, tc := range []struct {
		name string
		id   string
		d    Decision
		want error
	}{
		{"unknown id", "nope", Decision{Action: "allow"}, ErrNotFound},
		{"bad action", "R1", Decision{Action: "ask"}, ErrBadDecision},
		{"bad scope", "R1", Decision{Action: "allow", Scope: "forever"}, ErrBadDecision},
		{"bad minutes", "R1", Decision{Action: "allow", Scope: ScopeMinutes, Minutes: -1}, ErrBadDecision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := m.Decide(t.Context(), tc.id, tc.d); !errors.Is(err, tc.want) {
				t.Errorf("Decide = %v, want %v", err, tc.want)
			}
		})
	}
	if err := m.Decide(t.Context(), "R1", Decision{Action: "deny"}); err != nil {
		t.Fatal(err)
	}
	result(t, ch)
}

// TestFleetTwoGateways runs two managers on one NATS server: a call held on one gateway is seen
// and decided on the other.
func TestFleetTwoGateways(t *testing.T) {
	s := testenv.StartNATS(t)
	connect := func() *nats.Conn {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	recA, recB := &events{}, &events{}
	keyA, keyB := approverKey(t), approverKey(t)
	approvers := map[string]string{keyA.PublicKey(): "op-a", keyB.PublicKey(): "op-b"}
	a, err := New(t.Context(), Options{Conn: connect(), Gateway: "gw-a", Recorder: recA, Timeout: time.Hour, Signer: keyA, Approvers: approvers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err := New(t.Context(), Options{Conn: connect(), Gateway: "gw-b", Recorder: recB, Timeout: time.Hour, Signer: keyB, Approvers: approvers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	changes, unsub := b.Subscribe()
	defer unsub()

	ch := startHold(t.Context(), a, held("F1", "s1", "write_file", `{"p":1}`))
	testenv.Eventually(t, waitLimit, "gateway b sees the call held on a", listed(b, "F1"))
	if p, _ := b.Get("F1"); p.Gateway != "gw-a" {
		t.Errorf("b lists gateway %q, want gw-a", p.Gateway)
	}
	select {
	case c := <-changes:
		if c.Type != "held" || c.ID != "F1" {
			t.Errorf("change = %+v", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no change event on b")
	}
	if err := b.Decide(t.Context(), "F1", Decision{Action: "allow", By: "dana", Scope: ScopeMinutes, Minutes: 10}); err != nil {
		t.Fatal(err)
	}
	res := result(t, ch)
	if res.Action != abi.ActionAllow || res.DecidedBy != "op-b:dana" || res.Scope != ScopeMinutes {
		t.Errorf("resolution on a = %+v", res)
	}
	if err := a.Decide(t.Context(), "F1", Decision{Action: "deny"}); err == nil {
		t.Error("deciding a resolved call succeeded")
	}
	testenv.Eventually(t, waitLimit, "b drops the resolved call", func() bool { return len(b.List()) == 0 })
	if ev := recA.all(); len(ev) != 1 || ev[0].Approval.DecidedBy != "op-b:dana" || ev[0].Approval.Signer != keyB.PublicKey() ||
		ev[0].Approval.ClaimedBy != "dana" || ev[0].Gateway != "gw-a" {
		t.Errorf("audit on a = %+v", ev)
	}
	if ev := recB.all(); len(ev) != 0 {
		t.Errorf("b recorded %d events for a call it did not hold", len(ev))
	}
	// The grant made on b covers the same call on b, and on a once a has seen it.
	testenv.Eventually(t, waitLimit, "grant shared with a", func() bool {
		p := Pending{Server: "fs", Tool: "write_file", ArgumentsSHA256: audit.ArgumentsHash([]byte(`{"p":1}`)), Session: "s9"}
		_, ok := a.findGrant(p, time.Now())
		return ok
	})
	if res := result(t, startHold(t.Context(), a, held("F2", "s9", "write_file", `{"p":1}`))); res.Action != abi.ActionAllow || res.ID != "F1" {
		t.Errorf("granted on a = %+v", res)
	}

	// A race between two deciders: exactly one wins.
	ch = startHold(t.Context(), a, held("F3", "s1", "rm", `{}`))
	testenv.Eventually(t, waitLimit, "b sees F3", listed(b, "F3"))
	errA := a.Decide(t.Context(), "F3", Decision{Action: "deny", By: "a-op"})
	errB := b.Decide(t.Context(), "F3", Decision{Action: "allow", By: "b-op"})
	if (errA == nil) == (errB == nil) {
		t.Fatalf("both or neither decided: a=%v b=%v", errA, errB)
	}
	if res := result(t, ch); res.DecidedBy != "op-a:a-op" || res.Action != abi.ActionDeny {
		t.Errorf("winner = %+v, want a-op deny", res)
	}
}

func TestReleaseAllAtShutdown(t *testing.T) {
	rec := &events{}
	m, err := New(t.Context(), Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	a := startHold(t.Context(), m, held("S1", "s", "t", `{"a":1}`))
	b := startHold(t.Context(), m, held("S2", "s", "t", `{"a":2}`))
	testenv.Eventually(t, waitLimit, "both held", func() bool { return len(m.List()) == 2 })
	m.ReleaseAll(t.Context(), "bye")
	for _, ch := range []<-chan holdResult{a, b} {
		if res := result(t, ch); res.Action != abi.ActionDeny || res.DecidedBy != ByShutdown || res.Reason != "bye" {
			t.Errorf("released = %+v", res)
		}
	}
	if n := len(rec.all()); n != 2 {
		t.Errorf("%d approval events, want 2", n)
	}
}

// TestDecideWhileNATSDown checks a call held here can still be decided here when NATS is gone.
func TestDecideWhileNATSDown(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	nc, err := nats.Connect(r.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m, err := New(t.Context(), Options{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ch := startHold(t.Context(), m, held("N1", "s", "t", `{}`))
	testenv.Eventually(t, waitLimit, "held", listed(m, "N1"))
	r.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := m.Decide(ctx, "N1", Decision{Action: "allow", By: "offline-op"}); err != nil {
		t.Fatalf("Decide with NATS down: %v", err)
	}
	if res := result(t, ch); res.Action != abi.ActionAllow || res.DecidedBy != "offline-op" {
		t.Errorf("resolution = %+v", res)
	}
	if err := m.Decide(ctx, "missing", Decision{Action: "allow"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Decide of an unknown id = %v", err)
	}
}

// approverKey is a fresh approver nkey, as the embedded bus generates it.
func approverKey(t *testing.T) *bus.Identity {
	t.Helper()
	ids, err := bus.EnsureKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ids[bus.RoleApprover]
}

// TestOwnDecisionEchoIsKept: the watch brings a gateway its own decision back after the call
// is released; that echo is neither a replay to audit as forged nor a refusal to drop, so the
// decision stays in the bucket and a second decider's create still fails. (Dropping the echo
// let a second decider "win" an already decided call on a loaded machine.)
func TestOwnDecisionEchoIsKept(t *testing.T) {
	s := testenv.StartNATS(t)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	rec := &events{}
	key := approverKey(t)
	a, err := New(t.Context(), Options{Conn: nc, Gateway: "gw-a", Recorder: rec, Timeout: time.Hour, Signer: key, Approvers: map[string]string{key.PublicKey(): "op"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ch := startHold(t.Context(), a, held("E1", "s1", "rm", `{}`))
	testenv.Eventually(t, waitLimit, "E1 held", listed(a, "E1"))
	if err := a.Decide(t.Context(), "E1", Decision{Action: "deny", By: "op"}); err != nil {
		t.Fatal(err)
	}
	if res := result(t, ch); res.Action != abi.ActionDeny {
		t.Fatalf("resolution %+v", res)
	}
	// The echo comes back within milliseconds; give it ample time, then look.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := a.kv.Get(t.Context(), keyDecision+"E1"); err != nil {
			t.Fatalf("the decision left the bucket: %v", err)
		}
		for _, ev := range rec.all() {
			if ev.Approval != nil && ev.Approval.Decision == audit.ApprovalForged {
				t.Fatalf("the gateway's own decision was audited as forged: %+v", ev.Approval)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
