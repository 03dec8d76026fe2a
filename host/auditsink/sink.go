package auditsink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults for Options.
const (
	DefaultDurable        = "palisade-sink-postgres"
	DefaultBatchSize      = 1000
	DefaultBatchWait      = 250 * time.Millisecond
	DefaultAckWait        = 30 * time.Second
	DefaultRetentionEvery = time.Hour
)

// ErrNoConn is New's error without Options.Conn.
var ErrNoConn = errors.New("auditsink: no NATS connection")

// Options configures New. The zero value of each field but DSN and Conn is usable.
type Options struct {
	// DSN is the PostgreSQL connection string (libpq keywords or a postgres:// URL); required.
	DSN string
	// Conn reads the audit stream; required. On an authenticated bus it needs the sink role
	// (durable consumers and acks).
	Conn *nats.Conn
	// Stream is the audit stream; "" = PALISADE_AUDIT.
	Stream string
	// Durable names the JetStream consumer; "" = palisade-sink-postgres. Two sinks with the
	// same name share the work; with different names each writes everything.
	Durable string
	// Signers are the trusted keys; nil = the signers bucket (SignersBucket) plus TrustedKeys.
	Signers *audit.Signers
	// TrustedKeys are signer public keys trusted besides the signers bucket.
	TrustedKeys []string
	// SignersBucket is the KV bucket of trusted keys; "" = PALISADE_AUDIT_SIGNERS.
	SignersBucket string
	// BatchSize is the most events written per transaction; 0 = 1000.
	BatchSize int
	// BatchWait is how long a fetch waits to fill a batch; 0 = 250ms.
	BatchWait time.Duration
	// AckWait is how long JetStream waits for an ack before it redelivers; 0 = 30s.
	AckWait time.Duration
	// Retention deletes events older than this; 0 = keep everything.
	Retention time.Duration
	// RetentionEvery is how often the delete runs; 0 = hourly (and once at start).
	RetentionEvery time.Duration
	// Logger; nil = discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Stream == "" {
		o.Stream = audit.DefaultStream
	}
	if o.Durable == "" {
		o.Durable = DefaultDurable
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchWait <= 0 {
		o.BatchWait = DefaultBatchWait
	}
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.RetentionEvery <= 0 {
		o.RetentionEvery = DefaultRetentionEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Stats are the sink's counters.
type Stats struct {
	Stored     int64 // rows written to audit_events
	Unverified int64 // of Stored, events that failed verification (verified = false)
	Duplicates int64 // events already stored (a redelivery or a replay), not written again
	Rejected   int64 // messages that are not events, written to audit_rejects
	Batches    int64 // committed transactions
	Pruned     int64 // rows deleted by retention
}

// Sink copies the audit stream into PostgreSQL: see the package doc.
type Sink struct {
	o     Options
	store *Store

	stored, unverified, duplicates, rejected, batches, pruned atomic.Int64
}

// New checks o and opens the store. It connects to nothing yet: Run does, and retries.
func New(ctx context.Context, o Options) (*Sink, error) {
	o = o.withDefaults()
	if o.Conn == nil {
		return nil, ErrNoConn
	}
	if o.Retention < 0 {
		return nil, errors.New("auditsink: retention must not be negative")
	}
	st, err := Open(ctx, o.DSN)
	if err != nil {
		return nil, err
	}
	return &Sink{o: o, store: st}, nil
}

// Store is the sink's store.
func (s *Sink) Store() *Store { return s.store }

// Stats returns the counters so far.
func (s *Sink) Stats() Stats {
	return Stats{Stored: s.stored.Load(), Unverified: s.unverified.Load(), Duplicates: s.duplicates.Load(),
		Rejected: s.rejected.Load(), Batches: s.batches.Load(), Pruned: s.pruned.Load()}
}

// Close closes the store; call it after Run returned.
func (s *Sink) Close() { s.store.Close() }

// Run migrates the schema, binds the durable consumer and writes batches until ctx ends (it
// then returns nil). A database or NATS outage is logged and retried, never skipped: a batch
// is acknowledged only after its transaction committed, so what was not committed is
// delivered again.
func (s *Sink) Run(ctx context.Context) error {
	log := s.o.Logger
	if err := s.retry(ctx, "migrate", func() error {
		applied, err := s.store.Migrate(ctx)
		if len(applied) > 0 {
			log.Info("audit sink schema migrated", "versions", applied)
		}
		return err
	}); err != nil {
		return nil
	}
	var cons jetstream.Consumer
	if err := s.retry(ctx, "consumer", func() (err error) {
		cons, err = s.consumer(ctx)
		return err
	}); err != nil {
		return nil
	}
	signers := s.o.Signers
	if signers == nil {
		signers = audit.NewSigners(ctx, s.o.Conn, s.o.SignersBucket, s.o.TrustedKeys...)
	}
	log.Info("audit sink running", "stream", s.o.Stream, "durable", s.o.Durable, "retention", s.o.Retention)
	var wg sync.WaitGroup
	defer wg.Wait()
	if s.o.Retention > 0 {
		wg.Go(func() { s.retain(ctx) })
	}
	// The reader fetches and verifies the next batch while the writer commits this one.
	ready := make(chan fetched, 1)
	wg.Go(func() { s.read(ctx, cons, signers, ready) })
	for b := range ready {
		if err := s.retry(ctx, "write", func() error { return s.write(ctx, b.recs) }); err != nil {
			// Stopped before the batch was committed: hand it, and what was read after it,
			// back for the next run at once.
			nak(b.msgs)
			for rest := range ready {
				nak(rest.msgs)
			}
			return nil
		}
		for _, m := range b.msgs {
			if err := m.Ack(); err != nil {
				// Committed; a redelivery is a duplicate the insert ignores.
				log.Debug("audit sink ack", "err", err)
			}
		}
	}
	return nil
}

// fetched is one batch read and verified.
type fetched struct {
	msgs []jetstream.Msg
	recs []*record
}

// read fetches batches and prepares them until ctx ends, then closes out.
func (s *Sink) read(ctx context.Context, cons jetstream.Consumer, signers *audit.Signers, out chan<- fetched) {
	defer close(out)
	log := s.o.Logger
	for ctx.Err() == nil {
		batch, err := cons.Fetch(s.o.BatchSize, jetstream.FetchMaxWait(s.o.BatchWait))
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("audit sink fetch", "err", err)
				cons = s.rebind(ctx, cons, err)
				sleep(ctx, time.Second)
			}
			continue
		}
		var msgs []jetstream.Msg
		for m := range batch.Messages() {
			msgs = append(msgs, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			log.Warn("audit sink fetch", "err", err)
			if next := s.rebind(ctx, cons, err); next != cons {
				cons = next
			} else if len(msgs) == 0 {
				sleep(ctx, time.Second) // not a burst of warnings while it lasts
			}
		}
		if len(msgs) == 0 {
			continue
		}
		b := fetched{msgs: msgs, recs: s.prepare(ctx, signers, msgs)}
		select {
		case out <- b:
		case <-ctx.Done():
			nak(msgs)
			return
		}
	}
}

// rebind creates the consumer again when err says it is gone (deleted by an operator, the
// stream recreated): it resumes where a new durable starts, the first stored event, and the
// unique index makes the replay a run of duplicates. Other errors keep cons.
func (s *Sink) rebind(ctx context.Context, cons jetstream.Consumer, err error) jetstream.Consumer {
	gone := errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted)
	if !gone && errors.Is(err, nats.ErrNoResponders) {
		// A pull request to a consumer deleted before it arrived has no one to answer it (a
		// loaded machine showed this, not ErrConsumerDeleted, and the sink never recovered):
		// ask whether the consumer is still there.
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, ierr := cons.Info(ictx)
		cancel()
		gone = errors.Is(ierr, jetstream.ErrConsumerNotFound)
	}
	if !gone {
		return cons
	}
	if errors.Is(err, jetstream.ErrConsumerDeleted) {
		waitRemoved(ctx, cons)
	}
	c, cerr := s.consumer(ctx)
	if cerr != nil {
		s.o.Logger.Warn("audit sink: consumer gone; creating it again failed", "err", cerr)
		return cons
	}
	s.o.Logger.Warn("audit sink: consumer was gone; created it again", "durable", s.o.Durable)
	return c
}

// waitRemoved waits until the server no longer knows cons, then a little longer. nats-server
// (2.15) answers pending pulls "409 Consumer Deleted" before it takes the consumer out of the
// stream, and deletes the consumer's stored state only after that: a durable created in
// between is the closing one updated, or a new one that reads the old state file and resumes
// after the last acknowledged event instead of replaying from the first (nothing is lost
// either way, but the replay the sink promises does not happen).
func waitRemoved(ctx context.Context, cons jetstream.Consumer) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ictx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := cons.Info(ictx)
		cancel()
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			break
		}
		sleep(ctx, 25*time.Millisecond)
	}
	sleep(ctx, 250*time.Millisecond) // the stored state goes after the consumer
}

func nak(msgs []jetstream.Msg) {
	for _, m := range msgs {
		_ = m.Nak()
	}
}

// consumer creates or updates the durable pull consumer.
func (s *Sink) consumer(ctx context.Context) (jetstream.Consumer, error) {
	js, err := jetstream.New(s.o.Conn)
	if err != nil {
		return nil, err
	}
	return js.CreateOrUpdateConsumer(ctx, s.o.Stream, jetstream.ConsumerConfig{
		Durable:       s.o.Durable,
		Description:   "Palisade audit sink: PostgreSQL",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.o.AckWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 4 * s.o.BatchSize,
		MaxDeliver:    -1,
	})
}

// prepare parses and verifies msgs, in parallel; the signature covers the data exactly as
// stored in the stream.
func (s *Sink) prepare(ctx context.Context, signers *audit.Signers, msgs []jetstream.Msg) []*record {
	recs := make([]*record, len(msgs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(msgs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(msgs) {
					return
				}
				m := msgs[i]
				r := &record{subject: m.Subject(), raw: m.Data()}
				if md, err := m.Metadata(); err == nil {
					r.seq = md.Sequence.Stream
				}
				h := m.Headers()
				if err := r.parse(); err != nil {
					r.reject, r.headers = err.Error(), h
				} else {
					r.problem = signers.Verify(ctx, h, r.raw)
					r.signer = h.Get(audit.HeaderSigner)
				}
				recs[i] = r
			}
		})
	}
	wg.Wait()
	return recs
}

// write stores recs in one transaction. Rows PostgreSQL refuses as data (which no retry would
// cure) are written one by one, and the ones it still refuses go to audit_rejects with its
// reason: kept, never dropped.
func (s *Sink) write(ctx context.Context, recs []*record) error {
	n, err := s.store.insert(ctx, recs)
	if err != nil && dataError(err) {
		n = inserted{}
		for _, r := range recs {
			one, err := s.store.insert(ctx, []*record{r})
			if err != nil && dataError(err) && r.reject == "" {
				s.o.Logger.Warn("audit sink: event refused by PostgreSQL, kept in audit_rejects", "audit_id", r.ev.ID, "err", err)
				r.reject, r.headers = "refused by PostgreSQL: "+err.Error(), nil
				one, err = s.store.insert(ctx, []*record{r})
			}
			if err != nil {
				return err
			}
			n.stored += one.stored
			n.duplicates += one.duplicates
			n.rejected += one.rejected
		}
	} else if err != nil {
		return err
	}
	unverified := 0
	for _, r := range recs {
		if r.reject == "" && r.problem != "" {
			unverified++
			s.o.Logger.Warn("audit sink: event failed verification, stored with verified=false", "audit_id", r.ev.ID, "problem", r.problem, "stream_seq", r.seq)
		}
		if r.reject != "" {
			s.o.Logger.Warn("audit sink: message is not an audit event, kept in audit_rejects", "stream_seq", r.seq, "subject", r.subject, "why", r.reject)
		}
	}
	s.stored.Add(int64(n.stored))
	s.unverified.Add(int64(unverified))
	s.duplicates.Add(int64(n.duplicates))
	s.rejected.Add(int64(n.rejected))
	s.batches.Add(1)
	return nil
}

// retain deletes rows older than Retention at start and every RetentionEvery.
func (s *Sink) retain(ctx context.Context) {
	t := time.NewTicker(s.o.RetentionEvery)
	defer t.Stop()
	for {
		n, err := s.store.Prune(ctx, time.Now().Add(-s.o.Retention))
		switch {
		case err != nil && ctx.Err() == nil:
			s.o.Logger.Warn("audit sink retention", "err", err)
		case n > 0:
			s.pruned.Add(n)
			s.o.Logger.Info("audit sink retention: deleted old rows", "rows", n, "retention", s.o.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// retry runs f until it succeeds or ctx ends (then it returns ctx's error), logging each
// failure and backing off from 100ms to 5s.
func (s *Sink) retry(ctx context.Context, what string, f func() error) error {
	wait := 100 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.o.Logger.Warn("audit sink: "+what+" failed; retrying", "err", err, "in", wait)
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// String names the sink in logs.
func (s *Sink) String() string {
	return fmt.Sprintf("postgres sink %s on %s", s.o.Durable, s.o.Stream)
}
