package auditsink_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/auditsink/pgtest"
)

func openStore(t *testing.T, pg *pgtest.Cluster) *auditsink.Store {
	t.Helper()
	st, err := auditsink.Open(context.Background(), pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// TestMigrateIdempotent: the first Migrate applies every migration, each recorded once; a
// second, and three at once, apply nothing and fail nothing.
func TestMigrateIdempotent(t *testing.T) {
	pg := pgtest.Start(t)
	st := openStore(t, pg)
	ms, err := auditsink.Migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("Migrations() = %v, %v", ms, err)
	}
	applied, err := st.Migrate(context.Background())
	if err != nil || len(applied) != len(ms) {
		t.Fatalf("first Migrate applied %v, %v; want all %d", applied, err, len(ms))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 3 {
		wg.Go(func() {
			other, err := auditsink.Open(context.Background(), pg.DSN())
			if err != nil {
				errs <- err
				return
			}
			defer other.Close()
			if again, err := other.Migrate(context.Background()); err != nil || len(again) != 0 {
				errs <- err
				t.Errorf("Migrate again applied %v, %v; want none", again, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n, top int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &top); err != nil || n != len(ms) || top != auditsink.SchemaVersion() {
		t.Fatalf("schema_migrations: %d rows, newest %d (%v); want %d, %d", n, top, err, len(ms), auditsink.SchemaVersion())
	}
	// A database newer than this build is refused, not written with an older schema.
	if _, err := st.Pool().Exec(context.Background(), `INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(context.Background()); err == nil {
		t.Fatal("Migrate on a database at version 9999 succeeded")
	}
}

// TestRetention: the sink deletes events older than its retention at start and keeps the rest;
// Prune deletes by time.
func TestRetention(t *testing.T) {
	e := newEnv(t)
	old, recent := decision(0), decision(1)
	old.Time = time.Now().Add(-40 * 24 * time.Hour).UTC()
	e.pub.Record(context.Background(), old)
	e.pub.Record(context.Background(), recent)
	if err := e.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, stop := e.sink(auditsink.Options{})
	e.waitCount(2, time.Minute)
	stop()
	// A sink with retention 720h deletes the 40-day-old event at start.
	s, _ := e.sink(auditsink.Options{Retention: 720 * time.Hour, RetentionEvery: 50 * time.Millisecond})
	deadline := time.Now().Add(time.Minute)
	for s.Stats().Pruned < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var ids []string
	rows, err := e.db.Query(context.Background(), `SELECT audit_id FROM audit_events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	if len(ids) != 1 || ids[0] != recent.ID {
		t.Fatalf("after retention: %v; want only %s (the old %s deleted)", ids, recent.ID, old.ID)
	}
	st := auditsink.NewStore(e.db)
	if n, err := st.Prune(context.Background(), time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("Prune(now+1h) = %d, %v; want 1", n, err)
	}
}

// TestQuery answers the common questions over a known set of events.
func TestQuery(t *testing.T) {
	e := newEnv(t)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	var held audit.Event
	var shadowed string
	for i := range 20 {
		ev := decision(i)
		ev.Time = base.Add(time.Duration(i) * time.Minute)
		if i == 3 {
			ev.Action, ev.RequestedAction, ev.Rule = "ask", "ask", "ask-first"
			held = ev
		}
		if i == 5 { // judged by a shadow bundle too: its verdict fills the shadow_* columns
			ev.Shadow = &audit.Shadow{Bundle: &audit.Bundle{Name: "next"}, Action: "deny", Rule: "next-rule", Stage: "rules", Disagrees: true}
			shadowed = ev.ID
		}
		e.pub.Record(context.Background(), ev)
	}
	appr := audit.Event{ID: audit.NewID(), Time: base.Add(4 * time.Minute), Kind: audit.KindApproval, Tool: held.Tool, Server: held.Server,
		Action: "allow", Approval: &audit.Approval{ID: held.ID, Decision: audit.ApprovalApproved, DecidedBy: "approver:alice", DecisionID: "dec-1"}}
	e.pub.Record(context.Background(), appr)
	if err := e.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.sink(auditsink.Options{})
	e.waitCount(21, time.Minute)
	st := auditsink.NewStore(e.db)
	ctx := context.Background()

	deny := auditsink.Query{Action: []string{"deny"}}
	rows, err := st.Events(ctx, deny)
	if err != nil || len(rows) != 10 { // even i: 0, 2, ... 18
		t.Fatalf("denials: %d, %v; want 10", len(rows), err)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Time.After(rows[i-1].Time) {
			t.Fatal("Events not newest first")
		}
	}
	for _, tc := range []struct {
		name string
		q    auditsink.Query
		by   string
		want map[string]int64
	}{
		{"denials by rule", deny, "rule", map[string]int64{"block-0": 4, "block-1": 3, "block-2": 3}},
		{"denials by server", deny, "server", map[string]int64{"s0": 10}},
		{"all by action", auditsink.Query{}, "action", map[string]int64{"deny": 10, "allow": 10, "ask": 1}},
		{"rule block-0 by tool", auditsink.Query{Rule: []string{"block-0"}}, "tool", map[string]int64{"t0": 1, "t1": 1, "t2": 1, "t3": 1}},
		{"time range by kind", auditsink.Query{Since: base.Add(3 * time.Minute), Until: base.Add(5 * time.Minute)}, "kind", map[string]int64{"decision": 2, "approval": 1}},
		{"tool and server", auditsink.Query{Tool: []string{"t0"}, Server: []string{"s0"}}, "tool", map[string]int64{"t0": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := st.Counts(ctx, tc.q, tc.by)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, c := range cs {
				got[c.Value] = c.Count
			}
			if len(got) != len(tc.want) {
				t.Fatalf("counts %v; want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("counts %v; want %v", got, tc.want)
				}
			}
		})
	}
	if story, err := st.Story(ctx, shadowed); err != nil || len(story) != 1 || story[0].ShadowAction != "deny" {
		t.Errorf("Story(%s) = %+v, %v; want shadow_action deny from the shadow bundle's verdict", shadowed, story, err)
	}
	if _, err := st.Counts(ctx, auditsink.Query{}, "colour"); err == nil {
		t.Error("Counts by an unknown field succeeded")
	}
	for _, id := range []string{held.ID, appr.ID, "dec-1"} {
		story, err := st.Story(ctx, id)
		if err != nil || len(story) != 2 || story[0].AuditID != held.ID || story[1].AuditID != appr.ID || story[1].Approval != "approved" {
			t.Errorf("Story(%s) = %+v, %v; want the ask then its approval", id, story, err)
		}
	}
}
