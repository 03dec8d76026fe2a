package auditsink_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/auditsink/pgtest"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// env is one test's NATS server, PostgreSQL cluster and signed publisher.
type env struct {
	t   testing.TB
	nc  *nats.Conn
	js  jetstream.JetStream
	pg  *pgtest.Cluster
	db  *pgxpool.Pool
	pub *audit.Publisher
	gw  *bus.Identity // the trusted signer (registered in the signers bucket)
}

func newEnv(t testing.TB) *env {
	t.Helper()
	s := testenv.StartNATS(t)
	nc, err := nats.Connect(s.ClientURL(), audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := bus.EnsureKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gw := ids[bus.RoleGateway]
	pub, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: gw, Gateway: "gw-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	pg := pgtest.Start(t)
	db, err := pgxpool.New(context.Background(), pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return &env{t: t, nc: nc, js: js, pg: pg, db: db, pub: pub, gw: gw}
}

// sink starts a sink and returns a stop function that waits for Run to return.
func (e *env) sink(o auditsink.Options) (*auditsink.Sink, func()) {
	e.t.Helper()
	o.DSN, o.Conn = e.pg.DSN(), e.nc
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(tWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if o.AckWait == 0 {
		o.AckWait = 2 * time.Second
	}
	s, err := auditsink.New(context.Background(), o)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("sink Run: %v", err)
			}
			s.Close()
		})
	}
	e.t.Cleanup(stop)
	return s, stop
}

// tWriter sends the sink's warnings to the test log (shown with -v or on failure).
type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// decision is the i-th test event: a deny by rule block-<i%3> on tool t<i%5> of server s<i%2>.
func decision(i int) audit.Event {
	act := abi.ActionAllow
	rule := ""
	if i%2 == 0 {
		act, rule = abi.ActionDeny, fmt.Sprintf("block-%d", i%3)
	}
	return audit.Event{
		ID: audit.NewID(), Time: time.Now().UTC(), Kind: audit.KindDecision, Method: "tools/call",
		Server: fmt.Sprintf("s%d", i%2), Tool: fmt.Sprintf("t%d", i%5), Session: "sess-1", Action: act, Rule: rule,
		Stage: "rules", Reason: "test", LatencyUS: 120, Bundle: &audit.Bundle{Name: "example", Version: "1.0.0"},
		Stages: []abi.StageResult{{Stage: "rules", Action: act, Rule: rule, LatencyUS: 40}, {Stage: "risk", Score: float64(i%10) / 10, LatencyUS: 70}},
	}
}

// count polls until audit_events holds want rows or the deadline passes, and returns count(*)
// and count(distinct audit_id).
func (e *env) waitCount(want int, deadline time.Duration) (rows, distinct int) {
	e.t.Helper()
	end := time.Now().Add(deadline)
	for {
		err := e.db.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT audit_id) FROM audit_events`).Scan(&rows, &distinct)
		if err == nil && rows >= want || time.Now().After(end) {
			return rows, distinct
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// publishConcurrently records n decisions from 8 goroutines and flushes.
func (e *env) publishConcurrently(n int) {
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				e.pub.Record(context.Background(), decision(i))
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.pub.Flush(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// TestSinkStoresEveryEventOnce: every event of a published batch lands once, verified, and a
// second copy of each (a replay after the de-duplication window) is not stored again.
func TestSinkStoresEveryEventOnce(t *testing.T) {
	e := newEnv(t)
	const n = 500
	var evs []audit.Event
	for i := range n {
		ev := decision(i)
		if i == 8 {
			ev.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736" // traced (host/telemetry)
		}
		evs = append(evs, ev)
		e.pub.Record(context.Background(), ev)
	}
	if err := e.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := e.sink(auditsink.Options{BatchSize: 64})
	if rows, distinct := e.waitCount(n, time.Minute); rows != n || distinct != n {
		t.Fatalf("stored %d rows, %d distinct ids; want %d", rows, distinct, n)
	}
	// Replay: the same signed bytes again, without Nats-Msg-Id, so JetStream stores them twice.
	st, err := e.js.Stream(context.Background(), audit.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 50; seq++ {
		m, err := st.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		h := nats.Header{}
		h.Set(audit.HeaderSigner, m.Header.Get(audit.HeaderSigner))
		h.Set(audit.HeaderSignature, m.Header.Get(audit.HeaderSignature))
		h.Set(audit.HeaderBatch, m.Header.Get(audit.HeaderBatch))
		if _, err := e.js.PublishMsg(context.Background(), &nats.Msg{Subject: m.Subject, Data: m.Data, Header: h}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for s.Stats().Duplicates < 50 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := s.Stats(); got.Duplicates != 50 || got.Stored != n || got.Unverified != 0 {
		t.Fatalf("stats after the replay: %+v; want %d stored, 50 duplicates", got, n)
	}
	var rows, verified int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE verified) FROM audit_events`).Scan(&rows, &verified); err != nil || rows != n || verified != n {
		t.Fatalf("rows %d verified %d (%v); want %d, all verified", rows, verified, err, n)
	}
	// The columns carry the event.
	var tool, action, rule, level, otel string
	var score float64
	var stages int
	err = e.db.QueryRow(context.Background(), `SELECT tool, action, rule, risk_score, risk_level, jsonb_array_length(stages), otel_trace_id FROM audit_events WHERE audit_id = $1`, evs[8].ID).
		Scan(&tool, &action, &rule, &score, &level, &stages, &otel)
	if err != nil || tool != "t3" || action != "deny" || rule != "block-2" || score != 0.8 || level != "high" || stages != 2 || otel != evs[8].TraceID {
		t.Fatalf("row of event 8: tool %q action %q rule %q risk %v %q stages %d otel trace %q (%v)", tool, action, rule, score, level, stages, otel, err)
	}
	var untraced int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE otel_trace_id IS NULL`).Scan(&untraced); err != nil || untraced != n-1 {
		t.Fatalf("untraced rows %d (%v); want %d", untraced, err, n-1)
	}
}

// TestSinkRestartMidLoad: a sink stopped in the middle of a load and started again loses and
// doubles nothing.
func TestSinkRestartMidLoad(t *testing.T) {
	e := newEnv(t)
	const n = 5000
	_, stop := e.sink(auditsink.Options{BatchSize: 200})
	published := make(chan struct{})
	go func() { defer close(published); e.publishConcurrently(n) }()
	e.waitCount(n/5, time.Minute)
	stop()
	var mid int
	_ = e.db.QueryRow(context.Background(), `SELECT count(*) FROM audit_events`).Scan(&mid)
	t.Logf("sink stopped after %d rows", mid)
	e.sink(auditsink.Options{BatchSize: 200})
	<-published
	if rows, distinct := e.waitCount(n, 2*time.Minute); rows != n || distinct != n {
		t.Fatalf("after a sink restart: %d rows, %d distinct ids; want %d", rows, distinct, n)
	}
}

// TestSinkPostgresRestartMidLoad: PostgreSQL restarted (pg_ctl restart, every connection cut)
// in the middle of a load: the sink retries the batch it could not commit, and nothing is
// lost or doubled.
func TestSinkPostgresRestartMidLoad(t *testing.T) {
	e := newEnv(t)
	const n = 5000
	e.sink(auditsink.Options{BatchSize: 200})
	published := make(chan struct{})
	go func() { defer close(published); e.publishConcurrently(n) }()
	before, _ := e.waitCount(n/5, time.Minute)
	e.pg.Restart()
	t.Logf("PostgreSQL restarted after %d rows", before)
	<-published
	if rows, distinct := e.waitCount(n, 2*time.Minute); rows != n || distinct != n {
		t.Fatalf("after a PostgreSQL restart: %d rows, %d distinct ids; want %d", rows, distinct, n)
	}
}

// signed publishes data with signature headers made by kp (nil = unsigned).
func signed(t *testing.T, js jetstream.JetStream, subject string, data []byte, kp audit.Signer, sigOver []byte) {
	t.Helper()
	h := nats.Header{}
	if kp != nil {
		pub := kp.PublicKey()
		sig, err := kp.Sign(sigOver)
		if err != nil {
			t.Fatal(err)
		}
		h.Set(audit.HeaderSigner, pub)
		h.Set(audit.HeaderSignature, base64.StdEncoding.EncodeToString(sig))
	}
	if _, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: subject, Data: data, Header: h}); err != nil {
		t.Fatal(err)
	}
}

// TestSinkUnverified: events that fail verification (unsigned, tampered, signed by an untrusted
// key) are stored with verified=false and the reason, never taking the audit id of a trusted
// event; a message that is not an event and one PostgreSQL refuses are kept in audit_rejects.
// Nothing is dropped, and queries leave the unverified rows out unless asked.
func TestSinkUnverified(t *testing.T) {
	e := newEnv(t)
	good := decision(0)
	e.pub.Record(context.Background(), good)
	if err := e.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	gwKP := e.gw
	kp, _ := nkeys.CreateUser()
	stranger := kpSigner{kp}
	mk := func(ev audit.Event) []byte { b, _ := json.Marshal(ev); return b }
	// 1. unsigned, and claiming the trusted event's id.
	forged := good
	forged.Action, forged.Rule = abi.ActionAllow, ""
	signed(t, e.js, forged.Subject(), mk(forged), nil, nil)
	// 2. tampered: the trusted key's signature over other bytes.
	tampered := decision(2)
	orig := mk(tampered)
	tampered.Action = abi.ActionAllow
	signed(t, e.js, tampered.Subject(), mk(tampered), gwKP, orig)
	// 3. signed by a key nobody registered.
	strange := decision(4)
	signed(t, e.js, strange.Subject(), mk(strange), stranger, mk(strange))
	// 4. not an event.
	signed(t, e.js, "palisade.audit.decision.deny._._", []byte("not json"), nil, nil)
	// 5. an event PostgreSQL's jsonb refuses (\u0000 in a string), trusted.
	nul := decision(6)
	nul.Reason = "nul \x00 byte"
	signed(t, e.js, nul.Subject(), mk(nul), gwKP, mk(nul))

	s, _ := e.sink(auditsink.Options{BatchSize: 16})
	deadline := time.Now().Add(time.Minute)
	for st := s.Stats(); st.Stored+st.Rejected < 6 && time.Now().Before(deadline); st = s.Stats() {
		time.Sleep(20 * time.Millisecond)
	}
	if st := s.Stats(); st.Stored != 4 || st.Unverified != 3 || st.Rejected != 2 {
		t.Fatalf("stats %+v; want 4 stored (3 unverified), 2 rejected", st)
	}
	for _, tc := range []struct {
		name     string
		id       string
		verified bool
		problem  string
		action   string
	}{
		{"trusted", good.ID, true, "", "deny"},
		{"unsigned with the trusted id", good.ID, false, audit.ProblemUnsigned, "allow"},
		{"tampered", tampered.ID, false, audit.ProblemBadSignature, "allow"},
		{"untrusted signer", strange.ID, false, audit.ProblemUntrusted, "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var action string
			var problem *string
			err := e.db.QueryRow(context.Background(), `SELECT action, verify_problem FROM audit_events WHERE audit_id = $1 AND verified = $2`, tc.id, tc.verified).Scan(&action, &problem)
			if err != nil {
				t.Fatalf("no row %s verified=%v: %v", tc.id, tc.verified, err)
			}
			if action != tc.action || (problem == nil) != (tc.problem == "") || problem != nil && *problem != tc.problem {
				t.Errorf("action %q problem %v; want %q %q", action, problem, tc.action, tc.problem)
			}
		})
	}
	var rejects []string
	rows, err := e.db.Query(context.Background(), `SELECT problem FROM audit_rejects ORDER BY stream_seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		_ = rows.Scan(&p)
		rejects = append(rejects, p)
	}
	if len(rejects) != 2 {
		t.Fatalf("audit_rejects: %q; want the non-event and the \\u0000 event", rejects)
	}
	st := auditsink.NewStore(e.db)
	if got, err := st.Events(context.Background(), auditsink.Query{}); err != nil || len(got) != 1 || got[0].AuditID != good.ID {
		t.Errorf("Events (verified only) = %+v, %v; want only the trusted event", got, err)
	}
	if got, err := st.Events(context.Background(), auditsink.Query{Unverified: true}); err != nil || len(got) != 4 {
		t.Errorf("Events (unverified too) = %d rows, %v; want 4", len(got), err)
	}
	if got, err := st.Story(context.Background(), good.ID); err != nil || len(got) != 2 || got[0].Verified == got[1].Verified {
		t.Errorf("Story(%s) = %+v, %v; want the trusted event and the forgery, flagged", good.ID, got, err)
	}
}

// kpSigner signs with a bare nkey.
type kpSigner struct{ kp nkeys.KeyPair }

func (k kpSigner) PublicKey() string             { p, _ := k.kp.PublicKey(); return p }
func (k kpSigner) Sign(b []byte) ([]byte, error) { return k.kp.Sign(b) }

// TestSinkConsumerDeleted: an operator deletes the durable consumer while the sink runs; the
// sink creates it again, re-reads the stream from its start, and stores nothing twice.
func TestSinkConsumerDeleted(t *testing.T) {
	e := newEnv(t)
	for i := range 100 {
		e.pub.Record(context.Background(), decision(i))
	}
	if err := e.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := e.sink(auditsink.Options{BatchWait: 50 * time.Millisecond})
	e.waitCount(100, time.Minute)
	if err := e.js.DeleteConsumer(context.Background(), audit.DefaultStream, auditsink.DefaultDurable); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		e.pub.Record(context.Background(), decision(i))
	}
	if err := e.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rows, distinct := e.waitCount(200, time.Minute); rows != 200 || distinct != 200 {
		t.Fatalf("after the consumer was deleted: %d rows, %d distinct; want 200 (stats %+v)", rows, distinct, s.Stats())
	}
	deadline := time.Now().Add(time.Minute)
	for s.Stats().Duplicates < 100 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := s.Stats(); st.Duplicates != 100 {
		t.Fatalf("stats %+v; want the first 100 read again as duplicates", st)
	}
}

// TestRebindAfterNoResponders: a pull request sent after the durable was deleted finds no one to
// answer it ("no responders", not "consumer deleted": no pull was pending when it went). The
// sink asks whether the consumer is there and creates it again; while it is there, the error
// changes nothing.
func TestRebindAfterNoResponders(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s, err := auditsink.New(ctx, auditsink.Options{DSN: e.pg.DSN(), Conn: e.nc})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := auditsink.Consumer(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := auditsink.Rebind(ctx, s, cons, nats.ErrNoResponders); got != cons {
		t.Fatal("no responders with the consumer in place: the sink replaced it")
	}
	if err := e.js.DeleteConsumer(ctx, audit.DefaultStream, auditsink.DefaultDurable); err != nil {
		t.Fatal(err)
	}
	got := auditsink.Rebind(ctx, s, cons, nats.ErrNoResponders)
	if got == cons {
		t.Fatal("no responders after the consumer was deleted: the sink kept the deleted consumer")
	}
	if _, err := e.js.Consumer(ctx, audit.DefaultStream, auditsink.DefaultDurable); err != nil {
		t.Fatalf("the durable was not created again: %v", err)
	}
}

// TestSinkNATSOutageMidLoad: the NATS server stopped and started again (same port and store)
// in the middle of a load: the sink's fetches fail and resume, acks lost in the outage become
// redeliveries, and every event is stored once.
func TestSinkNATSOutageMidLoad(t *testing.T) {
	ns := testenv.StartRestartableNATS(t)
	connect := func(extra ...nats.Option) *nats.Conn {
		nc, err := nats.Connect(ns.URL(), append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	pubConn, sinkConn := connect(audit.ConnOptions()...), connect()
	ids, err := bus.EnsureKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := audit.New(context.Background(), audit.Options{Conn: pubConn, SpoolDir: t.TempDir(), Signer: ids[bus.RoleGateway]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	pg := pgtest.Start(t)
	db, err := pgxpool.New(context.Background(), pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	js, _ := jetstream.New(sinkConn)
	e := &env{t: t, nc: sinkConn, js: js, pg: pg, db: db, pub: pub, gw: ids[bus.RoleGateway]}
	const n = 3000
	e.sink(auditsink.Options{BatchSize: 200})
	published := make(chan struct{})
	go func() { defer close(published); e.publishConcurrently(n) }()
	before, _ := e.waitCount(n/5, time.Minute)
	ns.Stop()
	time.Sleep(500 * time.Millisecond) // an outage, not a blip: fetches and acks fail meanwhile
	ns.Start()
	t.Logf("NATS stopped after %d rows", before)
	<-published
	if rows, distinct := e.waitCount(n, 2*time.Minute); rows != n || distinct != n {
		t.Fatalf("after a NATS outage: %d rows, %d distinct ids; want %d", rows, distinct, n)
	}
}
