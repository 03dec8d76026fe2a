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
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// drainBacklog is how many signed events BenchmarkSinkDrain publishes before the sink starts.
const drainBacklog = 50_000

// BenchmarkSinkDrain measures how fast a sink drains a backlog: drainBacklog signed events
// already in the stream, a new durable consumer, until every one is committed in PostgreSQL
// (verification, COPY, ON CONFLICT insert, ack). Reports events/s. Run it once:
// go test -run '^$' -bench SinkDrain -benchtime 1x ./host/auditsink/
func BenchmarkSinkDrain(b *testing.B) {
	e := newEnv(b)
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
