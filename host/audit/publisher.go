package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults for Options.
const (
	DefaultStream         = "PALISADE_AUDIT"
	DefaultQueueSize      = 4096
	DefaultBatchSize      = 256
	DefaultLinger         = 2 * time.Millisecond
	DefaultPublishTimeout = 5 * time.Second
	DefaultDuplicates     = time.Minute
	// MinDuplicates is the shortest de-duplication window New accepts. A
	// retry within the window is dropped by the stream; a later one is
	// checked by the publisher first (recheck).
	MinDuplicates = time.Minute
)

// minDuplicates is MinDuplicates; tests shorten it.
var minDuplicates = MinDuplicates

// ErrClosed is returned by Flush after Close.
var ErrClosed = errors.New("audit: publisher closed")

// ErrConnBuffers is returned by New when Options.Conn keeps a reconnect
// buffer: messages held there are sent after a reconnect, ahead of the
// retries of earlier messages lost with the old connection, which would
// reorder the stream. Make the connection with ConnOptions().
var ErrConnBuffers = errors.New("audit: connection must be made with nats.ReconnectBufSize(-1) (audit.ConnOptions())")

// ConnOptions are the options the publisher's connection needs, to pass to
// bus.Connect or nats.Connect: no reconnect buffer, so a publish during a
// reconnect fails at once and the publisher spools it, in order.
func ConnOptions() []nats.Option {
	return []nats.Option{nats.ReconnectBufSize(-1)}
}

// errStopped ends a publish wait when Close stops the worker.
var errStopped = errors.New("audit: stopping")

// errDisconnected ends a publish wait when the connection drops.
var errDisconnected = errors.New("audit: nats disconnected")

// Options configures New.
type Options struct {
	// Conn is the NATS connection; required. Make it with ConnOptions()
	// (bus.Connect("palisade-audit", audit.ConnOptions()...)): New refuses a
	// connection with a reconnect buffer. It should reconnect forever: the
	// publisher waits for it and spools meanwhile.
	Conn *nats.Conn
	// Stream is the JetStream stream bound to palisade.audit.>; "" = PALISADE_AUDIT.
	Stream string
	// SpoolDir holds the disk spool (audit.spool); required. Events left
	// there by an earlier run are replayed first.
	SpoolDir string
	// Logger; nil = discard.
	Logger *slog.Logger
	// QueueSize bounds the in-memory queue; 0 = 4096. When it is full,
	// events go to the disk spool.
	QueueSize int
	// BatchSize is how many events are in flight per publish round; 0 = 256.
	BatchSize int
	// PublishTimeout is how long to wait for JetStream's ack; 0 = 5s.
	PublishTimeout time.Duration
	// Duplicates is the stream's de-duplication window; 0 = 1m; less than
	// MinDuplicates is raised to it. The NATS server keeps every id it stored
	// for this long (about 100 bytes each); a retry after it is checked
	// against the stream by the publisher instead (recheck.go). An existing
	// stream with a longer window that this identity may not change keeps it.
	Duplicates time.Duration
	// MaxAge bounds how long the stream keeps events; 0 = forever.
	MaxAge time.Duration
	// Replicas for the stream (clustered servers); 0 = 1 when the stream is created, and an
	// existing stream keeps its count (EnsureStream changes it only when Replicas is set).
	Replicas int
	// Signer signs every event (headers Palisade-Signer, Palisade-Signature) and registers
	// its public key in SignersBucket; nil = events go unsigned (audit tail flags them).
	Signer Signer
	// SignersBucket is the KV bucket of trusted signer keys; "" = PALISADE_AUDIT_SIGNERS.
	SignersBucket string
	// Gateway names this publisher in the signers bucket.
	Gateway string
	// Linger is how long the publish worker waits for more events before it signs a batch
	// smaller than BatchSize (one signature per batch: at 2 000 calls/s, 2ms gathers about four
	// events a signature); 0 = 2ms, negative = none. Only with a Signer.
	Linger time.Duration
	// MaxEventBytes caps an encoded event; a larger one loses its arguments
	// and detail (then more), noted in detail. 0 = 512 KiB (NATS's default
	// max payload is 1 MiB).
	MaxEventBytes int
}

func (o Options) withDefaults() Options {
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.SignersBucket == "" {
		o.SignersBucket = DefaultSignersBucket
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = DefaultPublishTimeout
	}
	if o.Duplicates == 0 {
		o.Duplicates = DefaultDuplicates
	}
	o.Duplicates = max(o.Duplicates, minDuplicates)
	o.Replicas = max(o.Replicas, 0) // 0 stays 0: EnsureStream then keeps an existing stream's count
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = 512 << 10
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	return o
}

// StreamConfig is the stream New creates or updates. Messages cannot be deleted nor the
// stream purged, by any identity (deny_delete, deny_purge: JetStream refuses to turn them off).
func (o Options) StreamConfig() jetstream.StreamConfig {
	o = o.withDefaults()
	return jetstream.StreamConfig{
		Name:        o.Stream,
		Description: "Palisade audit events",
		Subjects:    []string{SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  o.Duplicates,
		MaxAge:      o.MaxAge,
		Replicas:    max(o.Replicas, 1),
		DenyDelete:  true,
		DenyPurge:   true,
	}
}

// Stats are the publisher's counters, for metrics.
type Stats struct {
	Published  int64 // acked by JetStream, spool replays included
	Duplicates int64 // retries of a stored event: acks JetStream marked duplicate, and events a recheck found stored
	Rechecks   int64 // reads of the stream for events sent without an ack before its de-duplication window
	// RecheckFailed counts rechecks that could not read the stream while connected: the events
	// were sent anyway, and one the stream had stored may be stored twice.
	RecheckFailed int64
	Spooled       int64 // written to the disk spool
	Replayed      int64 // published from the spool
	Pending       int64 // recorded, not yet acked (memory and spool)
	Dropped       int64 // lost: disk spool write failed, or Record after Close
	Corrupt       int64 // corrupt spool regions skipped
	Spooling      bool  // new events go to disk now (NATS down, queue full, or replay running)
}

// Publisher delivers audit events to JetStream off the request path.
//
// Order: events are published in Record order. Events in memory are older
// than events in the spool (once anything is spooled, newer events go to
// the spool too until it has been replayed), so the stream sees them in
// order. A retry after a lost ack resends with the same Nats-Msg-Id, which
// JetStream drops as a duplicate within the window; a retry after the
// window first looks for the events in the stream (recheck.go).
//
// # Notes
//
// The spool is written without fsync per event: a machine crash can lose
// the last events the kernel had not written; a process crash cannot.
// Events still in memory when the process is killed (not Closed) are lost;
// Close writes them to the spool.
type Publisher struct {
	o   Options
	nc  *nats.Conn
	js  jetstream.JetStream
	log *slog.Logger

	queue chan record
	wake  chan struct{} // cap 1: spool grew, or state changed
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the worker returns

	mu       sync.Mutex // guards spooling, sp, closed, chain
	chain    chainer
	spooling bool
	closed   bool
	sp       *spool

	queued      atomic.Int64 // records that went to the queue and are not yet acked
	streamReady atomic.Bool
	leftover    []record                 // worker's unacked batch at exit (read after done)
	lingerT     *time.Timer              // the worker's linger timer, reused
	pubTick     *time.Ticker             // the worker's connection check while awaiting acks (publish), reused
	futs        []jetstream.PubAckFuture // the worker's: publish's futures, emptied after each batch
	msgs        []*pubMsg                // the worker's: the last wholly acknowledged batch's messages
	doubt       doubt                    // worker's: when events without an ack were sent (recheck.go)
	window      atomic.Int64             // the stream's de-duplication window, ns
	noRecheck   atomic.Bool              // tests: the control without rechecks
	sentOnDisk  bool                     // worker's: audit.spool.sent may hold a span to clear

	closeOnce sync.Once
	closeErr  error

	progressMu sync.Mutex
	progress   chan struct{} // closed and replaced whenever work completes

	published, duplicates, spooled, replayed, dropped, corrupt atomic.Int64
	rechecks, recheckFailed                                    atomic.Int64
}

// New opens the spool, creates or updates the stream (file storage,
// subjects palisade.audit.>, Duplicates >= 1m) and starts the publishing
// goroutine. If the connection is down, the stream is created once it is
// up, and events spool meanwhile; if it is up and the stream cannot be
// created, New fails.
func New(ctx context.Context, o Options) (*Publisher, error) {
	o = o.withDefaults()
	if o.Conn == nil {
		return nil, errors.New("audit: Options.Conn is required")
	}
	if o.SpoolDir == "" {
		return nil, errors.New("audit: Options.SpoolDir is required")
	}
	if o.Conn.Opts.ReconnectBufSize != -1 {
		return nil, ErrConnBuffers
	}
	js, err := jetstream.New(o.Conn,
		jetstream.WithPublishAsyncTimeout(o.PublishTimeout),
		// Acks abandoned at a disconnect stay pending until PublishTimeout:
		// leave room so they do not stall the replay after a reconnect.
		jetstream.WithPublishAsyncMaxPending(max(4096, 4*o.BatchSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("audit: jetstream: %w", err)
	}
	sp, corrupt, err := openSpool(o.SpoolDir)
	if err != nil {
		return nil, err
	}
	p := &Publisher{
		chain:    chainer{id: NewID()},
		o:        o,
		nc:       o.Conn,
		js:       js,
		log:      o.Logger.With("component", "audit", "stream", o.Stream),
		queue:    make(chan record, o.QueueSize),
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		sp:       sp,
		progress: make(chan struct{}),
	}
	p.window.Store(int64(o.Duplicates))
	if sp.count > 0 {
		d, err := sp.sent, sp.sentErr
		if err != nil {
			// Which of the events were sent is unknown: check from the first one's time.
			d = doubt{from: sp.firstTime(), to: time.Now()}
			if d.from.IsZero() {
				d.from = time.Unix(1, 0)
			}
			p.log.Warn("audit spool: send span unreadable; the replay rechecks from the first event's time", "err", err, "from", d.from)
		}
		p.doubt, p.sentOnDisk = d, true
	}
	p.corrupt.Add(int64(corrupt))
	if corrupt > 0 {
		p.log.Warn("audit spool had corrupt regions, skipped", "regions", corrupt)
	}
	if sp.count > 0 {
		p.spooling = true // replay what an earlier run left before anything new
		p.log.Info("audit spool to replay", "events", sp.count)
	}
	if o.Conn.IsConnected() {
		if err := p.ensureStream(ctx); err != nil {
			_ = sp.close()
			return nil, err
		}
	} else {
		p.spooling = true
		p.log.Warn("nats not connected; audit events spool until it is")
	}
	go p.run()
	return p, nil
}

func (p *Publisher) ensureStream(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.o.PublishTimeout)
	defer cancel()
	w, err := ensureStream(ctx, p.js, p.o)
	if err != nil {
		return err
	}
	p.window.Store(int64(w))
	if p.o.Signer != nil {
		if err := RegisterSigner(ctx, p.js, p.o.SignersBucket, p.o.Signer, p.o.Gateway); err != nil {
			return err
		}
	}
	p.streamReady.Store(true)
	return nil
}

// EnsureStream creates the audit stream o names, or updates one that differs from
// o.StreamConfig(). An identity that may not update the stream (the gateway) gets an error only
// when an update is needed: an admin identity makes it (the gateway does so for its embedded
// server before it starts publishing).
//
// # Notes
//
// With o.Replicas 0 an existing stream keeps its replica count: a gateway (Replicas 0) never
// asks to shrink the R3 stream `palisade nats setup --replicas 3` made. A de-duplication window
// longer than o's is kept when the update is refused (a gateway against a stream an earlier
// release made with 2h).
func EnsureStream(ctx context.Context, js jetstream.JetStream, o Options) error {
	_, err := ensureStream(ctx, js, o)
	return err
}

// ensureStream is EnsureStream; it returns the stream's de-duplication window. A stream whose
// window is longer than o's, and which this identity may not update, keeps its window.
func ensureStream(ctx context.Context, js jetstream.JetStream, o Options) (time.Duration, error) {
	want := o.StreamConfig()
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err = js.CreateStream(ctx, want); err == nil || !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			if err != nil {
				return 0, fmt.Errorf("audit: create stream %s: %w", want.Name, err)
			}
			return want.Duplicates, nil
		}
		s, err = js.Stream(ctx, want.Name)
	}
	if err != nil {
		return 0, fmt.Errorf("audit: stream %s: %w", want.Name, err)
	}
	have := s.CachedInfo().Config
	rest := have.DenyDelete && have.DenyPurge && have.MaxAge == want.MaxAge &&
		slices.Equal(have.Subjects, want.Subjects) && (o.Replicas <= 0 || have.Replicas == want.Replicas)
	if rest && have.Duplicates == want.Duplicates {
		return have.Duplicates, nil
	}
	if o.Replicas <= 0 {
		want.Replicas = have.Replicas
	}
	if _, err := js.UpdateStream(ctx, want); err != nil {
		if rest && have.Duplicates > want.Duplicates {
			// A window set longer by whoever may configure the stream (an earlier release
			// made it 2h): keep it; it only costs the server memory.
			return have.Duplicates, nil
		}
		return 0, fmt.Errorf("audit: update stream %s (deny_delete, deny_purge, limits): %w", want.Name, err)
	}
	return want.Duplicates, nil
}

// Record queues ev for publishing and returns at once: it fills the event's
// defaults (Event.FillDefaults), encodes the event, and
// either queues it in memory or, when the queue is full or NATS is down,
// appends it to the disk spool. It never waits for NATS. ctx is not used
// for waiting; it is accepted for tracing and symmetry.
func (p *Publisher) Record(ctx context.Context, ev Event) {
	_ = ctx
	ev.FillDefaults()
	ev.Chain = nil // Record links the event below, under the lock
	// Encoded by hand into a pooled buffer (appendEvent: json.Marshal's bytes): link copies it
	// into the record's own, so the buffer goes back to the pool when Record returns. What the
	// hand encoder does not vouch for takes json.Marshal's path, as every event did before.
	buf := eventBufs.Get().(*[]byte)
	defer putEventBuf(buf)
	data, ok := appendEvent((*buf)[:0], &ev)
	var err error
	if ok {
		*buf = data
	} else if data, err = json.Marshal(&ev); err != nil {
		// A malformed raw JSON field: keep the event, say what was wrong.
		p.log.Warn("audit event has invalid raw JSON; stored as strings", "audit_id", ev.ID, "err", err)
		ev.Arguments = quoteRaw(ev.Arguments)
		ev.Detail = quoteRaw(ev.Detail)
		ev.RequestID = quoteRaw(ev.RequestID)
		if data, err = json.Marshal(&ev); err != nil {
			p.dropped.Add(1)
			p.log.Error("audit event cannot be encoded; dropped", "audit_id", ev.ID, "err", err)
			return
		}
	}
	if len(data) > p.o.MaxEventBytes {
		data = p.shrink(ev, len(data))
	}
	r := record{id: ev.ID, subject: ev.Subject(), data: data}

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.dropped.Add(1)
		p.log.Error("audit Record after Close; dropped", "audit_id", r.id)
		return
	}
	r.data = p.chain.link(r.data) // in Record order, the order the stream keeps
	if !p.spooling && !p.nc.IsConnected() {
		// NATS is down: straight to disk, where a crash cannot lose it.
		p.spooling = true
		p.log.Warn("audit spooling to disk", "why", "nats disconnected")
	}
	if !p.spooling {
		select {
		case p.queue <- r:
			p.queued.Add(1)
			p.mu.Unlock()
			return
		default:
			p.spooling = true
			p.log.Warn("audit queue full; spooling to disk", "queue_size", p.o.QueueSize)
		}
	}
	err = p.sp.append(r)
	p.mu.Unlock()
	if err != nil {
		p.dropped.Add(1)
		p.log.Error("audit spool write failed; event dropped", "audit_id", r.id, "err", err)
		return
	}
	p.spooled.Add(1)
	p.signal()
}

// eventBufs holds the buffers Record encodes events into before link copies them.
var eventBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// maxPooledEvent is the largest buffer put back in eventBufs: a rare huge event's buffer is
// left to the collector rather than kept for every later one.
const maxPooledEvent = 64 << 10

func putEventBuf(b *[]byte) {
	if cap(*b) <= maxPooledEvent {
		*b = (*b)[:0]
		eventBufs.Put(b)
	}
}

// shrink re-encodes an event too large for NATS: first without arguments
// and detail, then with only the identifying fields. Detail records why.
func (p *Publisher) shrink(ev Event, size int) []byte {
	p.log.Warn("audit event too large; trimmed", "audit_id", ev.ID, "bytes", size, "max_bytes", p.o.MaxEventBytes)
	note, _ := json.Marshal(map[string]any{"truncated": true, "original_bytes": size})
	ev.Arguments, ev.Detail = nil, note
	if data, err := json.Marshal(&ev); err == nil && len(data) <= p.o.MaxEventBytes {
		return data
	}
	core := Event{
		ID: ev.ID, Time: ev.Time, Kind: ev.Kind, Gateway: ev.Gateway, Bundle: ev.Bundle,
		Transport: ev.Transport, Method: ev.Method, Server: ev.Server, Tool: ev.Tool,
		ArgumentsSHA256: ev.ArgumentsSHA256, Action: ev.Action, RequestedAction: ev.RequestedAction,
		Rule: ev.Rule, Stage: ev.Stage, LatencyUS: ev.LatencyUS, Detail: note,
	}
	if len(core.Rule) > 256 {
		core.Rule = core.Rule[:256]
	}
	data, _ := json.Marshal(&core)
	return data
}

func quoteRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil || json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

func (p *Publisher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Publisher) notifyProgress() {
	p.progressMu.Lock()
	close(p.progress)
	p.progress = make(chan struct{})
	p.progressMu.Unlock()
}

func (p *Publisher) progressCh() <-chan struct{} {
	p.progressMu.Lock()
	defer p.progressMu.Unlock()
	return p.progress
}

// Stats returns the counters.
func (p *Publisher) Stats() Stats {
	p.mu.Lock()
	spoolCount, spooling := p.sp.count, p.spooling
	p.mu.Unlock()
	return Stats{
		Published:     p.published.Load(),
		Duplicates:    p.duplicates.Load(),
		Rechecks:      p.rechecks.Load(),
		RecheckFailed: p.recheckFailed.Load(),
		Spooled:       p.spooled.Load(),
		Replayed:      p.replayed.Load(),
		Pending:       p.queued.Load() + spoolCount,
		Dropped:       p.dropped.Load(),
		Corrupt:       p.corrupt.Load(),
		Spooling:      spooling,
	}
}

// Flush waits until every event recorded so far has been acked by
// JetStream, or ctx ends (then it returns ctx's error: the events are still
// queued or spooled, not lost).
func (p *Publisher) Flush(ctx context.Context) error {
	for {
		ch := p.progressCh()
		if p.Stats().Pending == 0 {
			return nil
		}
		select {
		case <-p.done:
			if p.Stats().Pending == 0 {
				return nil
			}
			return ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("audit: flush: %d events pending: %w", p.Stats().Pending, ctx.Err())
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// flushWhileConnected is Flush that also gives up when the connection is
// down, so Close does not wait for an outage to end.
func (p *Publisher) flushWhileConnected(ctx context.Context) error {
	for {
		ch := p.progressCh()
		if p.Stats().Pending == 0 {
			return nil
		}
		if !p.nc.IsConnected() {
			return errDisconnected
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close publishes what it can until ctx ends or the connection is down,
// then stops the worker and writes events still in memory to the front of
// the spool, so nothing recorded is lost: the next New replays them.
// Records after Close are dropped (and counted). Close returns an error
// only if the spool could not be written. Later calls return the first
// call's result.
func (p *Publisher) Close(ctx context.Context) error {
	p.closeOnce.Do(func() { p.closeErr = p.close(ctx) })
	return p.closeErr
}

func (p *Publisher) close(ctx context.Context) error {
	flushErr := p.flushWhileConnected(ctx)

	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done

	p.mu.Lock()
	defer p.mu.Unlock()
	var mem []record
	for _, r := range p.leftover {
		if r.end == 0 { // from the queue; spool records are still in the spool
			mem = append(mem, r)
		}
	}
drain:
	for {
		select {
		case r := <-p.queue:
			mem = append(mem, r)
		default:
			break drain
		}
	}
	var err error
	if len(mem) > 0 {
		if err = p.sp.prepend(mem); err != nil {
			p.dropped.Add(int64(len(mem)))
			p.log.Error("audit spool write at close failed; events dropped", "events", len(mem), "err", err)
		} else {
			p.spooled.Add(int64(len(mem)))
		}
		p.queued.Add(-int64(len(mem)))
	}
	if p.sp.count > 0 {
		p.log.Warn("audit events left in spool for the next start", "events", p.sp.count, "flush_err", flushErr)
		if !p.doubt.none() {
			// Some of them were sent without an ack: the next start rechecks that span.
			if werr := p.sp.writeSent(p.doubt); werr != nil {
				p.log.Warn("audit spool: cannot save the send span; the next start may not recheck it", "err", werr)
			}
		}
	}
	if cerr := p.sp.close(); err == nil {
		err = cerr
	}
	p.notifyProgress()
	return err
}

// run is the publishing goroutine.
func (p *Publisher) run() {
	defer close(p.done)
	var batch []record
	delay := time.Duration(0)
	for {
		if len(batch) == 0 {
			var ok bool
			batch, ok = p.nextBatch()
			if !ok {
				return
			}
			if len(batch) == 0 {
				continue
			}
		}
		if !p.nc.IsConnected() {
			p.enterSpooling("nats disconnected")
			if !p.sleep(25 * time.Millisecond) {
				p.leftover = batch
				return
			}
			continue
		}
		if !p.streamReady.Load() {
			if err := p.ensureStream(context.Background()); err != nil {
				p.log.Warn("audit stream not ready", "err", err)
				delay = nextDelay(delay)
				if !p.sleep(delay) {
					p.leftover = batch
					return
				}
				continue
			}
		}
		now := time.Now()
		if p.recheckDue(now) {
			if err := p.recheck(batch); err != nil {
				if !p.nc.IsConnected() {
					continue
				}
				p.recheckFailed.Add(1)
				p.log.Warn("audit recheck failed; sending anyway (an event stored before may be stored twice)", "err", err)
			}
		}
		p.markSending(batch, now)
		n, err := p.publish(batch)
		if n == len(batch) {
			p.settle()
		}
		if n > 0 {
			p.account(batch[:n])
			batch = batch[n:]
		}
		if err != nil {
			if errors.Is(err, errStopped) {
				p.leftover = batch
				return
			}
			if errors.Is(err, nats.ErrMaxPayload) && len(batch) > 0 {
				// The server's limit is below MaxEventBytes: this event can
				// never be sent. Drop it rather than block all after it.
				p.discard(batch[0], err)
				batch = batch[1:]
				continue
			}
			p.enterSpooling(err.Error())
			if p.nc.IsConnected() && !errors.Is(err, errDisconnected) {
				// Connected but refused (stream gone, server restarted
				// empty): recreate the stream before the retry.
				p.streamReady.Store(false)
				p.log.Warn("audit publish failed; retrying", "err", err, "pending", len(batch))
				delay = nextDelay(delay)
				if !p.sleep(delay) {
					p.leftover = batch
					return
				}
			}
			continue
		}
		delay = 0
	}
}

func nextDelay(d time.Duration) time.Duration {
	if d == 0 {
		return 50 * time.Millisecond
	}
	return min(2*d, 2*time.Second)
}

// sleep waits d, or returns false when Close stops the worker.
func (p *Publisher) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.stop:
		return false
	case <-t.C:
		return true
	}
}

func (p *Publisher) enterSpooling(why string) {
	p.mu.Lock()
	if !p.spooling {
		p.spooling = true
		p.log.Warn("audit spooling to disk", "why", why)
	}
	p.mu.Unlock()
}

// account counts published records and moves the spool's replay offset.
func (p *Publisher) account(done []record) {
	var fromSpool int
	var end int64
	for _, r := range done {
		if r.end > 0 {
			fromSpool++
			end = r.end
		}
	}
	p.published.Add(int64(len(done)))
	p.queued.Add(-int64(len(done) - fromSpool))
	if fromSpool > 0 {
		p.replayed.Add(int64(fromSpool))
		p.mu.Lock()
		err := p.sp.commit(end, fromSpool)
		p.mu.Unlock()
		if err != nil {
			p.log.Warn("audit spool commit failed; events may replay again (deduplicated)", "err", err)
		}
	}
	p.notifyProgress()
}

// discard gives up on one record that can never be published.
func (p *Publisher) discard(r record, why error) {
	p.dropped.Add(1)
	p.log.Error("audit event refused by nats; dropped", "audit_id", r.id, "bytes", len(r.data), "err", why)
	if r.end == 0 {
		p.queued.Add(-1)
	} else {
		p.mu.Lock()
		err := p.sp.commit(r.end, 1)
		p.mu.Unlock()
		if err != nil {
			p.log.Warn("audit spool commit failed", "err", err)
		}
	}
	p.notifyProgress()
}

// nextBatch returns the oldest events not yet published: first the memory
// queue, then (when spooling) the spool. When the spool is fully replayed it
// switches back to the memory queue. It blocks while there is nothing to do
// and returns ok=false when Close stops the worker.
func (p *Publisher) nextBatch() (batch []record, ok bool) {
	batch = p.drainQueue(nil)
	if len(batch) > 0 {
		return p.linger(batch), true
	}
	p.mu.Lock()
	if p.spooling {
		if p.sp.count == 0 && p.sp.off >= p.sp.size {
			// Replay done: newer events may use memory again. The queue is
			// empty: nothing enters it while spooling.
			if p.sp.size > 0 {
				if err := p.sp.reset(); err != nil {
					p.log.Warn("audit spool reset failed", "err", err)
				}
			}
			p.spooling = false
			p.log.Info("audit spool replayed; publishing from memory")
			p.mu.Unlock()
			p.notifyProgress()
			return nil, true
		}
		off, size := p.sp.off, p.sp.size
		p.mu.Unlock()
		recs, _, scanned, skipped, err := p.sp.readAt(off, size, p.o.BatchSize)
		if err != nil {
			p.log.Error("audit spool read failed", "err", err)
			return nil, p.sleep(time.Second)
		}
		if skipped > 0 {
			p.corrupt.Add(int64(skipped))
			p.log.Warn("audit spool corrupt region skipped", "regions", skipped)
		}
		if len(recs) == 0 {
			// Only garbage up to here: move past it.
			p.mu.Lock()
			if err := p.sp.commit(off+int64(scanned), 0); err != nil {
				p.log.Warn("audit spool commit failed", "err", err)
			}
			if scanned == 0 && p.sp.count > 0 {
				p.sp.count = 0 // nothing readable left: the count was wrong
			}
			p.mu.Unlock()
			return nil, true
		}
		return recs, true
	}
	p.mu.Unlock()
	select {
	case r := <-p.queue:
		return p.linger(p.drainQueue([]record{r})), true
	case <-p.wake:
		return nil, true
	case <-p.stop:
		return nil, false
	}
}

// linger lets a signed batch smaller than BatchSize gather events for up to Options.Linger
// (one signature covers the batch), stopping early when it fills or the publisher closes.
func (p *Publisher) linger(batch []record) []record {
	if p.o.Signer == nil || p.o.Linger <= 0 || len(batch) >= p.o.BatchSize {
		return batch
	}
	if p.lingerT == nil {
		p.lingerT = time.NewTimer(p.o.Linger)
	} else {
		p.lingerT.Reset(p.o.Linger)
	}
	defer p.lingerT.Stop()
	for len(batch) < p.o.BatchSize {
		select {
		case r := <-p.queue:
			batch = p.drainQueue(append(batch, r))
		case <-p.lingerT.C:
			return batch
		case <-p.stop:
			return batch
		}
	}
	return batch
}

func (p *Publisher) drainQueue(batch []record) []record {
	for len(batch) < p.o.BatchSize {
		select {
		case r := <-p.queue:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// pubMsg is a message published to the stream with the one value of its Nats-Msg-Id header.
type pubMsg struct {
	m  nats.Msg
	id [1]string
}

// noRetry is the publish option for no library retry, made once: it only sets a count.
var noRetry = jetstream.WithRetryAttempts(0)

// publish sends batch asynchronously and waits for the acks in order. It
// returns how many leading records were acked, and why it stopped short.
func (p *Publisher) publish(batch []record) (int, error) {
	var signErr error
	if p.o.Signer != nil {
		signErr = signBatch(p.o.Signer, batch)
	}
	// publish runs on the worker alone: its futures' slice and its ticker are the worker's,
	// reused batch to batch (the slice is cleared on return: no message outlives its batch).
	futs := slices.Grow(p.futs[:0], len(batch))
	defer func() {
		clear(futs)
		p.futs = futs[:0]
	}()
	// The messages (with their header maps) of the last batch every message of which was
	// acknowledged are reused: JetStream reads a message while it publishes it and, for a
	// library retry (off: noRetry), until its ack; after the ack nothing reads it. Taken here,
	// they come back (recycle) only when this batch is acknowledged whole too, so a message
	// that may still be pending (an error, a timeout, a stop) is never written again.
	spare := p.msgs
	p.msgs = nil
	used := spare[:0]
	var sendErr error
	for _, r := range batch {
		if r.stored {
			futs = append(futs, nil) // a recheck found it in the stream
			continue
		}
		var pm *pubMsg
		if len(used) < len(spare) {
			pm = spare[len(used)]
			clear(pm.m.Header)
		} else {
			pm = &pubMsg{} // the message and its id's one-value list in one allocation
		}
		used = append(used, pm)
		pm.id[0] = r.id
		h := pm.m.Header
		if h == nil {
			h = nats.Header{}
		}
		h[HeaderMsgID] = pm.id[:]
		pm.m = nats.Msg{Subject: r.subject, Data: r.data, Header: h}
		m := &pm.m
		if p.o.Signer != nil {
			if r.sig == "" {
				sendErr = fmt.Errorf("audit: sign %s: %w", r.subject, signErr)
				break
			}
			m.Header.Set(HeaderSigner, p.o.Signer.PublicKey())
			m.Header.Set(HeaderSignature, r.sig)
			m.Header.Set(HeaderBatch, r.batch)
		}
		// No library retry on no-responders: it would resend on its own
		// timer, out of order; the worker retries from the first failure.
		f, err := p.js.PublishMsgAsync(m, noRetry)
		if err != nil {
			sendErr = fmt.Errorf("audit: publish %s: %w", r.subject, err)
			break
		}
		futs = append(futs, f)
	}
	if sendErr != nil {
		used = nil // a message may have gone out unacknowledged: none is reused
	}
	const checkEvery = 50 * time.Millisecond
	if p.pubTick == nil {
		p.pubTick = time.NewTicker(checkEvery)
	} else {
		p.pubTick.Reset(checkEvery) // no tick from before the Reset is received (Go 1.23 timers)
	}
	tick := p.pubTick
	defer tick.Stop()
	for i, f := range futs {
		if f == nil {
			continue
		}
	wait:
		for {
			select {
			case ack := <-f.Ok():
				if ack != nil && ack.Duplicate {
					p.duplicates.Add(1)
				}
				break wait
			case err := <-f.Err():
				return i, fmt.Errorf("audit: publish %s: %w", batch[i].subject, err)
			case <-p.stop:
				return i, errStopped
			case <-tick.C:
				if !p.nc.IsConnected() {
					return i, errDisconnected
				}
			}
		}
	}
	if sendErr == nil {
		p.msgs = recycle(used) // every message acknowledged
	}
	return len(futs), sendErr
}

// recycle keeps at most 64 acknowledged messages for the next batch, their data dropped.
func recycle(msgs []*pubMsg) []*pubMsg {
	if len(msgs) > 64 {
		msgs = msgs[:64]
	}
	for _, pm := range msgs {
		pm.m.Data, pm.id[0] = nil, ""
	}
	return msgs
}

// signBatch signs the records of batch not yet signed with one signature over their Merkle
// tree (batchTree), and gives each its inclusion proof. A record signed before (a retry) keeps
// its signature and proof: they stay valid in any later batch.
func signBatch(s Signer, batch []record) error {
	var (
		idx  []int
		data [][]byte
	)
	for i := range batch {
		if batch[i].sig == "" {
			idx = append(idx, i)
			data = append(data, batch[i].data)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	root, proofs, err := batchTree(data)
	if err != nil {
		return err
	}
	sig, err := s.Sign(batchMessage(int64(len(data)), root))
	if err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString(sig)
	for j, i := range idx {
		batch[i].sig, batch[i].batch = enc, proofs[j]
	}
	return nil
}
