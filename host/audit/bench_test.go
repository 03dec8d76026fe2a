package audit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
)

// BenchmarkRecordToJetStream measures end-to-end throughput: Record events
// into the publisher and wait until JetStream (embedded, file store) has
// acked them all. Reports events/s and the mean Record call cost.
func BenchmarkRecordToJetStream(b *testing.B) {
	s := testenv.StartNATS(b)
	nc := connect(b, s.ClientURL())
	p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	ev := decision(0)
	ctx := context.Background()
	b.ReportAllocs()
	start := time.Now()
	var recordTime time.Duration
	lat := make([]time.Duration, 0, 1<<16)
	n := 0
	for b.Loop() {
		t0 := time.Now()
		p.Record(ctx, ev)
		d := time.Since(t0)
		recordTime += d
		lat = append(lat, d)
		n++
	}
	if err := p.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(recordTime.Nanoseconds())/float64(n), "record-ns/op")
	testenv.Latencies(lat).Report(b, "record-", "-ns", time.Nanosecond)
	st := p.Stats()
	b.ReportMetric(float64(st.Spooled), "spooled")
	if st.Published < int64(n) {
		b.Fatalf("published %d of %d", st.Published, n)
	}
}

// BenchmarkPublishBursts records bursts that fit the memory queue and
// flushes after each, so nothing spools: the JetStream publish rate alone.
func BenchmarkPublishBursts(b *testing.B) { benchBursts(b, nil) }

// BenchmarkPublishBurstsSigned is BenchmarkPublishBursts with each event
// signed (ed25519, the gateway's nkey) as the gateway publishes them.
func BenchmarkPublishBurstsSigned(b *testing.B) {
	ids, err := bus.EnsureKeys(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	benchBursts(b, ids[bus.RoleGateway])
}

func benchBursts(b *testing.B, signer audit.Signer) {
	s := testenv.StartNATS(b)
	nc := connect(b, s.ClientURL())
	o := audit.Options{Conn: nc, SpoolDir: b.TempDir()}
	if signer != nil {
		o.Signer = signer
	}
	p, err := audit.New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	ev := decision(0)
	ctx := context.Background()
	const burst = 1024
	b.ReportAllocs()
	start := time.Now()
	n := 0
	for b.Loop() {
		for range burst {
			p.Record(ctx, ev)
		}
		if err := p.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		n += burst
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
	if st := p.Stats(); st.Spooled != 0 {
		b.Logf("spooled %d (queue overflowed)", st.Spooled)
	}
}

// BenchmarkPublishReplicas is BenchmarkPublishBurstsSigned on a three-server JetStream cluster
// (testenv.StartCluster), with the audit stream kept by one server (R1) and by all three (R3):
// what replication costs the publisher. Reports events/s.
// go test -run '^$' -bench PublishReplicas -benchtime 20x ./host/audit/
func BenchmarkPublishReplicas(b *testing.B) {
	for _, r := range []int{1, 3} {
		b.Run(fmt.Sprintf("R%d", r), func(b *testing.B) {
			c := testenv.StartCluster(b, 3)
			id, err := bus.LoadIdentity(c.DataDir(), bus.RoleAdmin, "")
			if err != nil {
				b.Fatal(err)
			}
			signer, err := bus.LoadIdentity(c.DataDir(), bus.RoleGateway, "")
			if err != nil {
				b.Fatal(err)
			}
			nc, err := bus.Dial(c.URLs(), id, audit.ConnOptions()...)
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: b.TempDir(), Replicas: r, Signer: signer})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background())
			ev := decision(0)
			ctx := context.Background()
			const burst = 1024
			start := time.Now()
			n := 0
			for b.Loop() {
				for range burst {
					p.Record(ctx, ev)
				}
				if err := p.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				n += burst
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkPacedSigned records signed events one at a time at a served call's pace (one per
// 700 µs, as one connection gets through the full chain) and reports the process's CPU per
// event (user+system, getrusage): what audit adds to each call when nothing else fills a batch.
// Over TCP to the server, and in-process (net.Pipe) as the gateway's embedded bus connects.
func BenchmarkPacedSigned(b *testing.B) {
	ids, err := bus.EnsureKeys(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ticker-alone", func(b *testing.B) { // the pace's own cost, to subtract
		tick := time.NewTicker(700 * time.Microsecond)
		defer tick.Stop()
		cpu0, n := testenv.ProcessCPU(), 0
		for b.Loop() {
			<-tick.C
			n++
		}
		b.ReportMetric(float64((testenv.ProcessCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/event")
	})
	for _, tc := range []struct {
		inproc bool
		linger time.Duration
	}{{false, 0}, {true, 0}, {true, 10 * time.Millisecond}, {true, 25 * time.Millisecond}} {
		inproc := tc.inproc
		name := "tcp"
		if inproc {
			name = "in-process"
		}
		if tc.linger != 0 {
			name += "/linger=" + tc.linger.String()
		}
		b.Run(name, func(b *testing.B) {
			s := testenv.StartNATS(b)
			opts := audit.ConnOptions()
			if inproc {
				opts = append(opts, nats.InProcessServer(s))
			}
			nc, err := nats.Connect(s.ClientURL(), opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: b.TempDir(), Signer: ids[bus.RoleGateway], Linger: tc.linger})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background())
			ev, ctx := decision(0), context.Background()
			tick := time.NewTicker(700 * time.Microsecond)
			defer tick.Stop()
			cpu0 := testenv.ProcessCPU()
			n := 0
			for b.Loop() {
				<-tick.C
				p.Record(ctx, ev)
				n++
			}
			if err := p.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((testenv.ProcessCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/event")
		})
	}
}
