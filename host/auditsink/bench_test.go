package auditsink_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/auditsink/pgtest"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// drainBacklog is how many signed events BenchmarkSinkDrain publishes before the sink starts.
const drainBacklog = 50_000

// BenchmarkSinkDrain measures how fast a sink drains a backlog: drainBacklog signed events
// already in the stream, a new durable consumer, until every one is committed in PostgreSQL
// (verification, COPY, ON CONFLICT insert, ack). Reports events/s. Run it once:
// go test -run '^$' -bench SinkDrain -benchtime 1x ./host/auditsink/
func BenchmarkSinkDrain(b *testing.B) { benchDrain(b, newEnv(b)) }

// BenchmarkSinkDrainR3 is BenchmarkSinkDrain from an audit stream kept by all three servers of
// a JetStream cluster (testenv.StartCluster; `palisade nats setup --replicas 3`): the durable
// consumer is R3 too, so each ack is replicated. Reports events/s.
// go test -run '^$' -bench SinkDrainR3 -benchtime 1x ./host/auditsink/
func BenchmarkSinkDrainR3(b *testing.B) { benchDrain(b, newClusterEnv(b, 3)) }

// newClusterEnv is newEnv on a three-server cluster, with the audit stream and signers bucket
// created with replicas copies (as the admin identity, which the env's connection is).
func newClusterEnv(t testing.TB, replicas int) *env {
	t.Helper()
	c := testenv.StartCluster(t, 3)
	admin, err := bus.LoadIdentity(c.DataDir(), bus.RoleAdmin, "")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := bus.LoadIdentity(c.DataDir(), bus.RoleGateway, "")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := bus.Dial(c.URLs(), admin, audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := audit.EnsureStream(ctx, js, audit.Options{Replicas: replicas}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, audit.SignersBucketConfig("", replicas)); err != nil {
		t.Fatal(err)
	}
	pub, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: gw, Gateway: "gw-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	pg := pgtest.Start(t)
	db, err := pgxpool.New(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return &env{t: t, nc: nc, js: js, pg: pg, db: db, pub: pub, gw: gw}
}

func benchDrain(b *testing.B, e *env) {
	ctx := context.Background()
	// Publish the backlog signed, as the gateway's publisher does, but straight to JetStream:
	// the publisher's own pace is not what is measured.
	var futures []jetstream.PubAckFuture
	for i := range drainBacklog {
		ev := decision(i)
		data, _ := json.Marshal(ev)
		sig, _ := e.gw.Sign(data)
		h := nats.Header{}
		h.Set(audit.HeaderMsgID, ev.ID)
		h.Set(audit.HeaderSigner, e.gw.PublicKey())
		h.Set(audit.HeaderSignature, base64.StdEncoding.EncodeToString(sig))
		f, err := e.js.PublishMsgAsync(&nats.Msg{Subject: ev.Subject(), Data: data, Header: h})
		if err != nil {
			b.Fatal(err)
		}
		futures = append(futures, f)
		if len(futures) >= 4096 {
			<-e.js.PublishAsyncComplete()
			futures = futures[:0]
		}
	}
	<-e.js.PublishAsyncComplete()
	for _, f := range futures {
		select {
		case err := <-f.Err():
			b.Fatal(err)
		default:
		}
	}
	st := auditsink.NewStore(e.db)
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	round := 0
	var total time.Duration
	for b.Loop() {
		round++
		if _, err := e.db.Exec(ctx, `TRUNCATE audit_events`); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		s, stop := e.sink(auditsink.Options{Durable: "bench-" + strconv.Itoa(round)})
		deadline := time.Now().Add(5 * time.Minute)
		for s.Stats().Stored < drainBacklog && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		total += time.Since(start)
		stop()
		if rows, distinct := e.waitCount(drainBacklog, time.Second); rows != drainBacklog || distinct != drainBacklog {
			b.Fatalf("drained %d rows, %d distinct ids; want %d", rows, distinct, drainBacklog)
		}
	}
	b.ReportMetric(float64(drainBacklog*round)/total.Seconds(), "events/s")
}
