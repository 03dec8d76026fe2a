package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
)

// historyFixture is what the history tests store: three decisions, a call held then decided, a
// call still held, and a forged decision; times one minute apart from t0.
type historyFixture struct {
	t0          time.Time
	decided     string // the call held then allowed
	waiting     string // the call still held
	heldDecided string // the held record of decided
}

func seedHistory(t *testing.T, ctx context.Context, p *audit.Publisher, forger *nats.Conn) historyFixture {
	t.Helper()
	f := historyFixture{t0: time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute), decided: audit.NewID(), waiting: audit.NewID()}
	at := func(m int) time.Time { return f.t0.Add(time.Duration(m) * time.Minute) }
	alice, bob := &abi.Principal{Issuer: "idp", Subject: "alice"}, &abi.Principal{Issuer: "idp", ClientID: "bob-cli"}
	stages := []abi.StageResult{{Stage: "rules", Phase: "request", Action: "ask", Score: 0.7, LatencyUS: 40}}
	f.heldDecided = audit.NewID()
	for _, ev := range []audit.Event{
		{Time: at(0), Action: "allow", Server: "fs", Tool: "list", Stage: "rules"},
		{Time: at(1), Action: "deny", Server: "fs", Tool: "read_file", Rule: "no-secrets", Reason: "reads ~/.ssh", Principal: alice},
		{Time: at(2), Action: "deny", Server: "gh", Tool: "delete_repo", Rule: "no-delete", Reason: "destructive", Principal: bob},
		{ID: f.heldDecided, Time: at(3), Kind: audit.KindHeld, Action: "ask", Server: "gh", Tool: "merge", Rule: "review",
			Stages: stages, Approval: &audit.Approval{ID: f.decided, Decision: audit.ApprovalHeld}},
		{Time: at(4), Kind: audit.KindHeld, Action: "ask", Server: "gh", Tool: "push", Rule: "review", Stages: stages,
			Approval: &audit.Approval{ID: f.waiting, Decision: audit.ApprovalHeld}},
		{ID: f.decided, Time: at(3), Action: "allow", RequestedAction: "ask", Server: "gh", Tool: "merge", Rule: "review",
			Stages: stages, Approval: &audit.Approval{ID: "ap-1", Decision: audit.ApprovalApproved, DecidedBy: "carol"},
			Shadow: &audit.Shadow{Action: "deny", Rule: "stricter", Disagrees: true}},
		{Kind: audit.KindBundleActivated, Bundle: &audit.Bundle{Name: "base"}},
	} {
		if ev.Kind == "" {
			ev.Kind = audit.KindDecision
		}
		p.Record(ctx, ev)
	}
	flush(t, p)
	// A forged decision: unsigned, straight onto the subject.
	forged := audit.Event{ID: audit.NewID(), Time: at(5), Kind: audit.KindDecision, Action: "allow", Server: "fs", Tool: "forged"}
	data, _ := json.Marshal(forged)
	if _, err := forger.Request(forged.Subject(), data, 5*time.Second); err != nil {
		t.Fatalf("publish forged: %v", err)
	}
	return f
}

func startHistory(t *testing.T, maxScan int) (*audit.StreamHistory, historyFixture) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	gw := b.Identity(bus.RoleGateway)
	bootstrap(t, b, gw)
	nc, err := b.Connect("gateway", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: gw, Gateway: "gw-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	forger, err := nats.Connect(b.ClientURL(), gw.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(forger.Close)
	f := seedHistory(t, ctx, p, forger)
	// Read as the reader identity, the least a history needs.
	rd, err := b.ConnectAs(bus.RoleReader, "history")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rd.Close)
	return audit.NewStreamHistory(ctx, audit.StreamHistoryOptions{Conn: rd, MaxScan: maxScan}), f
}

func tools(evs []audit.HistoryEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Tool)
	}
	return out
}

func TestStreamHistorySearch(t *testing.T) {
	h, f := startHistory(t, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		q    audit.HistoryQuery
		want []string
	}{
		// Newest stored first: a decision is stored when its call ends, so the decided held
		// call (stored last) comes before the call still held.
		{"all, newest first; the decided call's held record left out", audit.HistoryQuery{}, []string{"merge", "push", "delete_repo", "read_file", "list"}},
		{"action", audit.HistoryQuery{Action: []string{"deny"}}, []string{"delete_repo", "read_file"}},
		{"held", audit.HistoryQuery{Action: []string{"held"}}, []string{"push"}},
		{"rule and server", audit.HistoryQuery{Rule: []string{"review"}, Server: []string{"gh"}}, []string{"merge", "push"}},
		{"tool", audit.HistoryQuery{Tool: []string{"list", "merge"}}, []string{"merge", "list"}},
		{"principal subject", audit.HistoryQuery{Principal: []string{"alice"}}, []string{"read_file"}},
		{"principal client id", audit.HistoryQuery{Principal: []string{"bob-cli"}}, []string{"delete_repo"}},
		{"text in reason", audit.HistoryQuery{Text: "SSH"}, []string{"read_file"}},
		{"text in tool", audit.HistoryQuery{Text: "repo"}, []string{"delete_repo"}},
		{"time range", audit.HistoryQuery{From: f.t0.Add(time.Minute), To: f.t0.Add(3 * time.Minute)}, []string{"delete_repo", "read_file"}},
		{"unverified included", audit.HistoryQuery{Unverified: true, Server: []string{"fs"}}, []string{"forged", "read_file", "list"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := h.Search(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := tools(page.Events); !equal(got, tc.want) {
				t.Errorf("tools %v, want %v", got, tc.want)
			}
			if page.Source != "jetstream" || page.Truncated {
				t.Errorf("source %q truncated %v", page.Source, page.Truncated)
			}
			for _, e := range page.Events {
				if e.Tool == "forged" && (e.Verified || e.VerifyProblem != audit.ProblemUnsigned) {
					t.Errorf("forged event verified %v problem %q", e.Verified, e.VerifyProblem)
				}
				if e.Tool != "forged" && !e.Verified {
					t.Errorf("%s not verified: %s", e.Tool, e.VerifyProblem)
				}
				if e.Tool == "push" && (!e.Held || e.CallID() != f.waiting) {
					t.Errorf("push: held %v call %s, want held call %s", e.Held, e.CallID(), f.waiting)
				}
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestStreamHistoryPaging(t *testing.T) {
	h, _ := startHistory(t, 0)
	ctx := context.Background()
	var got []string
	cursor := ""
	for range 5 {
		page, err := h.Search(ctx, audit.HistoryQuery{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tools(page.Events)...)
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if want := []string{"merge", "push", "delete_repo", "read_file", "list"}; !equal(got, want) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	if _, err := h.Search(ctx, audit.HistoryQuery{Cursor: "x"}); err == nil {
		t.Fatal("a bad cursor was accepted")
	}
}

// With a scan bound smaller than the stream, a page says truncated and its cursor reads on.
func TestStreamHistoryTruncated(t *testing.T) {
	h, _ := startHistory(t, 3)
	ctx := context.Background()
	page, err := h.Search(ctx, audit.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Truncated || page.Next == "" {
		t.Fatalf("truncated %v next %q, want both", page.Truncated, page.Next)
	}
	seen := tools(page.Events)
	for cursor := page.Next; cursor != ""; {
		p, err := h.Search(ctx, audit.HistoryQuery{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, tools(p.Events)...)
		cursor = p.Next
	}
	// The held record of the decided call is read in another window than its decision, so
	// it shows as held there: a documented limit of the bounded scan.
	for _, want := range []string{"push", "merge", "delete_repo", "read_file", "list"} {
		found := false
		for _, s := range seen {
			found = found || s == want
		}
		if !found {
			t.Errorf("%s never seen across truncated pages %v", want, seen)
		}
	}
}

func TestStreamHistoryEvent(t *testing.T) {
	h, f := startHistory(t, 0)
	ctx := context.Background()
	d, err := h.Event(ctx, f.decided)
	if err != nil {
		t.Fatal(err)
	}
	ev := d.Event
	if ev.ID != f.decided || ev.Held || !ev.Verified || ev.Action != "allow" || ev.Shadow == nil || ev.Shadow.Action != "deny" ||
		len(ev.Stages) != 1 || ev.Stages[0].Score != 0.7 || ev.Approval == nil || ev.Approval.DecidedBy != "carol" {
		t.Fatalf("decided call: %+v", ev)
	}
	if len(d.Related) != 1 || d.Related[0].ID != f.heldDecided || d.Related[0].Kind != audit.KindHeld {
		t.Fatalf("related %+v, want its held record", d.Related)
	}
	d, err = h.Event(ctx, f.waiting)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Event.Held || d.Event.Tool != "push" || d.Event.CallID() != f.waiting {
		t.Fatalf("waiting call: %+v", d.Event)
	}
	if _, err := h.Event(ctx, audit.NewID()); !errors.Is(err, audit.ErrHistoryNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := h.Event(ctx, "not-an-id"); !errors.Is(err, audit.ErrHistoryNotFound) {
		t.Fatalf("bad id: %v", err)
	}
}

func TestStreamHistoryChart(t *testing.T) {
	h, f := startHistory(t, 0)
	c, err := h.Chart(context.Background(), audit.HistoryQuery{From: f.t0}, "action", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Buckets from t0: [0,2) list allow, read_file deny; [2,4) delete_repo deny, merge allow;
	// [4,6) push held.
	want := []map[string]int64{{"allow": 1, "deny": 1}, {"deny": 1, "allow": 1}, {"held": 1}}
	if len(c.Buckets) != len(want) {
		t.Fatalf("buckets %+v", c.Buckets)
	}
	for i, b := range c.Buckets {
		if !b.Start.Equal(f.t0.Add(time.Duration(i) * 2 * time.Minute)) {
			t.Errorf("bucket %d starts %s", i, b.Start)
		}
		if len(b.Counts) != len(want[i]) {
			t.Errorf("bucket %d counts %v, want %v", i, b.Counts, want[i])
		}
		for k, n := range want[i] {
			if b.Counts[k] != n {
				t.Errorf("bucket %d counts %v, want %v", i, b.Counts, want[i])
			}
		}
	}
	if _, err := h.Chart(context.Background(), audit.HistoryQuery{}, "colour", time.Minute); err == nil {
		t.Fatal("group by an unknown field was accepted")
	}
}

// BenchmarkStreamHistory measures the stream source at its scan bound: 50 000 signed events,
// read whole by each question. "needle" matches one event, "newest-100" every event (a page
// of 100), "chart" counts every event by action (each verified). Reports events scanned per
// second.
func BenchmarkStreamHistory(b *testing.B) {
	const n = 50000
	s := testenv.StartNATS(b)
	nc := connect(b, s.ClientURL())
	ids, err := bus.EnsureKeys(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	gw := ids[bus.RoleGateway]
	ctx := context.Background()
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: b.TempDir(), Signer: gw, QueueSize: 8192})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	for i := range n {
		ev := decision(i)
		if i == n/2 {
			ev.Tool = "needle"
		}
		p.Record(ctx, ev)
		if i%4096 == 4095 {
			flush(b, p)
		}
	}
	flush(b, p)
	h := audit.NewStreamHistory(ctx, audit.StreamHistoryOptions{Conn: nc, Signers: audit.NewSigners(ctx, nil, "", gw.PublicKey()), Timeout: time.Minute})
	for _, bc := range []struct {
		name string
		run  func() error
	}{
		{"needle", func() error {
			page, err := h.Search(ctx, audit.HistoryQuery{Tool: []string{"needle"}})
			if err == nil && (len(page.Events) != 1 || !page.Events[0].Verified) {
				err = fmt.Errorf("%d events", len(page.Events))
			}
			return err
		}},
		{"newest-100", func() error {
			page, err := h.Search(ctx, audit.HistoryQuery{})
			if err == nil && len(page.Events) != 100 {
				err = fmt.Errorf("%d events", len(page.Events))
			}
			return err
		}},
		{"chart", func() error {
			c, err := h.Chart(ctx, audit.HistoryQuery{}, "action", time.Hour)
			if err == nil && (len(c.Buckets) == 0 || c.Buckets[0].Counts["deny"] == 0) {
				err = fmt.Errorf("chart %+v", c)
			}
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			runs := 0
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
				runs++
			}
			b.ReportMetric(float64(n*runs)/time.Since(start).Seconds(), "events-scanned/s")
		})
	}
}
