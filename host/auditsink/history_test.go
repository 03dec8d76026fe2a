package auditsink_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/sdk/go/abi"
)

func historyTools(evs []audit.HistoryEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Tool)
	}
	return out
}

func sameStrings(a, b []string) bool {
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

// TestHistory: the PostgreSQL source of the dashboard's history over the same set of events as
// host/audit's TestStreamHistorySearch: three decisions, a call held then decided, a call still
// held, a forged decision. Held records are not decisions for `audit query` (Counts, Events)
// but part of a call's story.
func TestHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	decided, waiting, heldDecided := audit.NewID(), audit.NewID(), audit.NewID()
	alice, bob := &abi.Principal{Issuer: "idp", Subject: "alice"}, &abi.Principal{Issuer: "idp", ClientID: "bob-cli"}
	stages := []abi.StageResult{{Stage: "rules", Phase: "request", Action: "ask", Score: 0.7, LatencyUS: 40}}
	for _, ev := range []audit.Event{
		{Time: at(0), Action: "allow", Server: "fs", Tool: "list", Stage: "rules"},
		{Time: at(1), Action: "deny", Server: "fs", Tool: "read_file", Rule: "no-secrets", Reason: "reads ~/.ssh", Principal: alice},
		{Time: at(2), Action: "deny", Server: "gh", Tool: "delete_repo", Rule: "no-delete", Reason: "destructive", Principal: bob},
		{ID: heldDecided, Time: at(3), Kind: audit.KindHeld, Action: "ask", Server: "gh", Tool: "merge", Rule: "review",
			Stages: stages, Approval: &audit.Approval{ID: decided, Decision: audit.ApprovalHeld}},
		{Time: at(4), Kind: audit.KindHeld, Action: "ask", Server: "gh", Tool: "push", Rule: "review", Stages: stages,
			Approval: &audit.Approval{ID: waiting, Decision: audit.ApprovalHeld}},
		{ID: decided, Time: at(3).Add(30 * time.Second), Action: "allow", RequestedAction: "ask", Server: "gh", Tool: "merge", Rule: "review",
			Stages: stages, Approval: &audit.Approval{ID: "ap-1", Decision: audit.ApprovalApproved, DecidedBy: "carol"},
			Shadow: &audit.Shadow{Action: "deny", Rule: "stricter", Disagrees: true}},
	} {
		if ev.Kind == "" {
			ev.Kind = audit.KindDecision
		}
		e.pub.Record(ctx, ev)
	}
	if err := e.pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	forged := audit.Event{ID: audit.NewID(), Time: at(5), Kind: audit.KindDecision, Action: "allow", Server: "fs", Tool: "forged"}
	data, _ := json.Marshal(forged)
	if _, err := e.js.Publish(ctx, forged.Subject(), data); err != nil {
		t.Fatal(err)
	}
	e.sink(auditsink.Options{})
	e.waitCount(7, time.Minute)
	st := auditsink.NewStore(e.db)
	h := auditsink.NewHistory(st)

	for _, tc := range []struct {
		name string
		q    audit.HistoryQuery
		want []string
	}{
		{"all, newest first; the decided call's held record left out", audit.HistoryQuery{}, []string{"push", "merge", "delete_repo", "read_file", "list"}},
		{"action", audit.HistoryQuery{Action: []string{"deny"}}, []string{"delete_repo", "read_file"}},
		{"held", audit.HistoryQuery{Action: []string{"held"}}, []string{"push"}},
		{"rule and server", audit.HistoryQuery{Rule: []string{"review"}, Server: []string{"gh"}}, []string{"push", "merge"}},
		{"principal subject", audit.HistoryQuery{Principal: []string{"alice"}}, []string{"read_file"}},
		{"principal client id", audit.HistoryQuery{Principal: []string{"bob-cli"}}, []string{"delete_repo"}},
		{"text in reason", audit.HistoryQuery{Text: "SSH"}, []string{"read_file"}},
		{"text in tool", audit.HistoryQuery{Text: "repo"}, []string{"delete_repo"}},
		{"time range", audit.HistoryQuery{From: at(1), To: at(3)}, []string{"delete_repo", "read_file"}},
		{"unverified included", audit.HistoryQuery{Unverified: true, Server: []string{"fs"}}, []string{"forged", "read_file", "list"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := h.Search(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := historyTools(page.Events); !sameStrings(got, tc.want) {
				t.Errorf("tools %v, want %v", got, tc.want)
			}
			for _, ev := range page.Events {
				if ev.Tool == "push" && (!ev.Held || ev.CallID() != waiting) {
					t.Errorf("push: held %v call %s", ev.Held, ev.CallID())
				}
				if (ev.Tool == "forged") == ev.Verified {
					t.Errorf("%s verified %v (%s)", ev.Tool, ev.Verified, ev.VerifyProblem)
				}
			}
		})
	}

	t.Run("paging", func(t *testing.T) {
		var got []string
		cursor := ""
		for range 5 {
			page, err := h.Search(ctx, audit.HistoryQuery{Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, historyTools(page.Events)...)
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if want := []string{"push", "merge", "delete_repo", "read_file", "list"}; !sameStrings(got, want) {
			t.Fatalf("pages %v, want %v", got, want)
		}
	})

	t.Run("drill-down", func(t *testing.T) {
		d, err := h.Event(ctx, decided)
		if err != nil {
			t.Fatal(err)
		}
		ev := d.Event
		if ev.ID != decided || ev.Held || !ev.Verified || ev.Shadow == nil || ev.Shadow.Action != "deny" ||
			len(ev.Stages) != 1 || ev.Stages[0].Score != 0.7 || ev.Approval == nil || ev.Approval.DecidedBy != "carol" {
			t.Fatalf("decided call: %+v", ev)
		}
		if len(d.Related) != 1 || d.Related[0].ID != heldDecided {
			t.Fatalf("related %+v, want its held record", d.Related)
		}
		d, err = h.Event(ctx, waiting)
		if err != nil || !d.Event.Held || d.Event.Tool != "push" {
			t.Fatalf("waiting call: %+v, %v", d.Event, err)
		}
		if _, err := h.Event(ctx, audit.NewID()); !errors.Is(err, audit.ErrHistoryNotFound) {
			t.Fatalf("unknown id: %v", err)
		}
	})

	t.Run("chart", func(t *testing.T) {
		c, err := h.Chart(ctx, audit.HistoryQuery{From: t0}, "action", 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		want := []map[string]int64{{"allow": 1, "deny": 1}, {"deny": 1, "allow": 1}, {"held": 1}}
		if len(c.Buckets) != len(want) {
			t.Fatalf("buckets %+v", c.Buckets)
		}
		for i, b := range c.Buckets {
			if !b.Start.Equal(t0.Add(time.Duration(i) * 2 * time.Minute)) {
				t.Errorf("bucket %d starts %s", i, b.Start)
			}
			for k, n := range want[i] {
				if b.Counts[k] != n || len(b.Counts) != len(want[i]) {
					t.Errorf("bucket %d counts %v, want %v", i, b.Counts, want[i])
				}
			}
		}
		if _, err := h.Chart(ctx, audit.HistoryQuery{}, "colour", time.Minute); err == nil {
			t.Fatal("group by an unknown field was accepted")
		}
	})

	t.Run("audit query leaves held records out", func(t *testing.T) {
		cs, err := st.Counts(ctx, auditsink.Query{}, "kind")
		if err != nil || len(cs) != 1 || cs[0].Value != "decision" || cs[0].Count != 4 {
			t.Fatalf("counts by kind %+v, %v; want decision 4 only", cs, err)
		}
		cs, err = st.Counts(ctx, auditsink.Query{Kind: []string{audit.KindHeld}}, "kind")
		if err != nil || len(cs) != 1 || cs[0].Count != 2 {
			t.Fatalf("held counts %+v, %v; want 2 when asked", cs, err)
		}
		story, err := st.Story(ctx, decided)
		if err != nil || len(story) != 2 || story[0].Kind != audit.KindHeld || story[1].AuditID != decided {
			t.Fatalf("story %+v, %v; want the held record then the decision", story, err)
		}
	})
}

// BenchmarkHistory measures the PostgreSQL source of the dashboard's history over 50 000
// stored decisions: the newest page, a filtered page (one tool), a text search (no index:
// every row's reason), a chart by action in hour buckets, and one call's drill-down.
// go test -run '^$' -bench History -benchtime 20x ./host/auditsink/
func BenchmarkHistory(b *testing.B) {
	const n = 50_000
	e := newEnv(b)
	ctx := context.Background()
	needle := ""
	for i := range n {
		ev := decision(i)
		ev.Time = time.Now().Add(-time.Duration(n-i) * time.Second).UTC()
		if i == n/2 {
			ev.Tool, ev.Reason, needle = "needle", "a rare reason", ev.ID
		}
		e.pub.Record(ctx, ev)
		if i%4096 == 4095 {
			if err := e.pub.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := e.pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	e.sink(auditsink.Options{})
	if rows, _ := e.waitCount(n, 5*time.Minute); rows < n {
		b.Fatalf("%d rows stored, want %d", rows, n)
	}
	// As autovacuum would soon after a bulk load: with fresh statistics the newest page is an
	// index scan backwards on time (an incremental sort by audit id), not a sort of every row.
	if _, err := e.db.Exec(ctx, "ANALYZE audit_events"); err != nil {
		b.Fatal(err)
	}
	h := auditsink.NewHistory(auditsink.NewStore(e.db))
	for _, bc := range []struct {
		name string
		run  func() error
	}{
		{"newest-100", func() error {
			p, err := h.Search(ctx, audit.HistoryQuery{})
			if err == nil && len(p.Events) != 100 {
				err = fmt.Errorf("%d events", len(p.Events))
			}
			return err
		}},
		{"tool", func() error {
			p, err := h.Search(ctx, audit.HistoryQuery{Tool: []string{"needle"}})
			if err == nil && len(p.Events) != 1 {
				err = fmt.Errorf("%d events", len(p.Events))
			}
			return err
		}},
		{"text", func() error {
			p, err := h.Search(ctx, audit.HistoryQuery{Text: "RARE"})
			if err == nil && len(p.Events) != 1 {
				err = fmt.Errorf("%d events", len(p.Events))
			}
			return err
		}},
		{"chart", func() error {
			c, err := h.Chart(ctx, audit.HistoryQuery{}, "action", time.Hour)
			if err == nil && len(c.Buckets) == 0 {
				err = errors.New("no buckets")
			}
			return err
		}},
		{"drill-down", func() error {
			_, err := h.Event(ctx, needle)
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
