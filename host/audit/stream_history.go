package audit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
)

// StreamHistoryOptions configure a StreamHistory.
type StreamHistoryOptions struct {
	// Conn reads the stream; required. It needs the reader's rights on the stream (ordered
	// consumers, stream info) and on the signers bucket.
	Conn *nats.Conn
	// Stream is the audit stream; "" = PALISADE_AUDIT.
	Stream string
	// Signers verify each event as `audit tail --verify` does; nil = the signers bucket.
	Signers *Signers
	// MaxScan is the most stream messages one question reads; 0 = 50000. A search whose
	// range holds more reads the newest MaxScan before its cursor and says Truncated.
	MaxScan int
	// Timeout bounds one question; 0 = 30s.
	Timeout time.Duration
}

// StreamHistory answers history questions from the audit stream itself, for a gateway without
// the PostgreSQL sink: every question is a bounded scan of the stream with an ordered consumer
// on the decision and held subjects, each event verified as the feed does.
type StreamHistory struct {
	o StreamHistoryOptions

	mu   sync.Mutex
	good map[[32]byte]struct{} // sha256 of signature and data of events that verified
}

// goodCap bounds the verified-event cache; at the cap it starts again empty.
func (h *StreamHistory) goodCap() int { return 4 * h.o.MaxScan }

// NewStreamHistory returns a StreamHistory.
func NewStreamHistory(ctx context.Context, o StreamHistoryOptions) *StreamHistory {
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.MaxScan <= 0 {
		o.MaxScan = 50000
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Signers == nil {
		o.Signers = NewSigners(ctx, o.Conn, "")
	}
	return &StreamHistory{o: o}
}

// SourceJetStream names the stream source in pages (HistoryPage.Source).
const SourceJetStream = "jetstream"

// historySubjects are what a history scan reads: decisions, held records, approval events.
var historySubjects = []string{SubjectPrefix + ".decision.>", SubjectPrefix + ".held.>", SubjectPrefix + ".approval.>"}

// scanned is one event a scan read. Its signature is checked only when the event is needed
// (verify): a search verifies the page it returns, not the whole scan.
type scanned struct {
	seq      uint64
	ev       HistoryEvent
	hdr      nats.Header
	raw      []byte
	verified bool // verify ran
}

// verify checks s's signature against the trusted signers, once.
func (h *StreamHistory) verify(ctx context.Context, s *scanned) {
	if s.verified {
		return
	}
	s.verified = true
	// A stored event and its signature do not change: one that verified once is remembered
	// (by digest, so a stream recreated under the same sequences cannot reuse the answer).
	// Failures are not: a signer registered later makes them good.
	sum := sha256.New()
	sum.Write([]byte(s.hdr.Get(HeaderSigner)))
	sum.Write([]byte{0})
	sum.Write([]byte(s.hdr.Get(HeaderSignature)))
	sum.Write([]byte{0})
	sum.Write([]byte(s.hdr.Get(HeaderBatch)))
	sum.Write([]byte{0})
	sum.Write(s.raw)
	var key [32]byte
	sum.Sum(key[:0])
	h.mu.Lock()
	_, ok := h.good[key]
	h.mu.Unlock()
	if ok {
		s.ev.Verified, s.ev.VerifyProblem = true, ""
		return
	}
	s.ev.VerifyProblem = h.o.Signers.Verify(ctx, s.hdr, s.raw)
	s.ev.Verified = s.ev.VerifyProblem == ""
	if s.ev.Verified {
		h.mu.Lock()
		if h.good == nil || len(h.good) >= h.goodCap() {
			h.good = make(map[[32]byte]struct{})
		}
		h.good[key] = struct{}{}
		h.mu.Unlock()
	}
}

// verifyAll verifies all, spread over GOMAXPROCS goroutines.
func (h *StreamHistory) verifyAll(ctx context.Context, all []scanned) {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(all)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(all); i += workers {
				h.verify(ctx, &all[i])
			}
		})
	}
	wg.Wait()
}

// window is the range of stream sequences a question reads: [lo, hi], of which it shows the
// events up to show (a page's cursor); what lies above show only tells which held calls were
// decided since.
type window struct {
	lo, hi, show uint64
	truncated    bool
	empty        bool
}

// seqAt is the sequence of the first message on the history subjects stored at or after t;
// ok false when there is none.
func (h *StreamHistory) seqAt(ctx context.Context, js jetstream.JetStream, t time.Time) (uint64, bool, error) {
	cons, err := js.OrderedConsumer(ctx, h.o.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: historySubjects, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &t})
	if err != nil {
		return 0, false, err
	}
	if cons.CachedInfo().NumPending == 0 {
		return 0, false, nil
	}
	msgs, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		return 0, false, err
	}
	m, ok := <-msgs.Messages()
	if !ok {
		return 0, false, msgs.Error()
	}
	md, err := m.Metadata()
	if err != nil {
		return 0, false, err
	}
	return md.Sequence.Stream, true, nil
}

// window finds the sequences that hold events stored at or after from (an event is stored
// after its time; a held call's decision can be stored long after, so there is no upper bound
// by time) below before (0 = no bound): at most MaxScan of them up to before, and at most
// MaxScan more above it to see which held calls were decided since.
func (h *StreamHistory) window(ctx context.Context, js jetstream.JetStream, from time.Time, before uint64) (window, error) {
	st, err := js.Stream(ctx, h.o.Stream)
	if err != nil {
		return window{}, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return window{}, err
	}
	if info.State.Msgs == 0 {
		return window{empty: true}, nil
	}
	w := window{lo: info.State.FirstSeq, hi: info.State.LastSeq, show: info.State.LastSeq}
	if before > 0 && before-1 < w.show {
		w.show = before - 1
		w.hi = min(w.hi, w.show+uint64(h.o.MaxScan))
	}
	if !from.IsZero() {
		s, ok, err := h.seqAt(ctx, js, from)
		if err != nil {
			return window{}, err
		}
		if !ok {
			return window{empty: true}, nil
		}
		w.lo = max(w.lo, s)
	}
	if w.show < w.lo || w.show == 0 {
		return window{empty: true}, nil
	}
	if w.show-w.lo+1 > uint64(h.o.MaxScan) {
		w.lo, w.truncated = w.show-uint64(h.o.MaxScan)+1, true
	}
	return w, nil
}

// scan reads the history subjects' events stored in w and calls fn with each in stream order
// until fn returns false. It verifies none (scanned.verify).
func (h *StreamHistory) scan(ctx context.Context, js jetstream.JetStream, w window, fn func(s scanned) bool) error {
	if w.empty {
		return nil
	}
	cons, err := js.OrderedConsumer(ctx, h.o.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: historySubjects, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: w.lo})
	if err != nil {
		return err
	}
	return each(cons, func(m jetstream.Msg, md *jetstream.MsgMetadata) bool {
		if md.Sequence.Stream > w.hi {
			return false
		}
		var ev HistoryEvent
		if err := json.Unmarshal(m.Data(), &ev.Event); err == nil && ev.ID != "" {
			if ev.Kind == "" {
				ev.Kind = KindDecision
			}
			if !fn(scanned{seq: md.Sequence.Stream, ev: ev, hdr: m.Headers(), raw: m.Data()}) {
				return false
			}
		}
		return md.Sequence.Stream < w.hi
	})
}

// each reads an ordered consumer in batches and calls fn with each message in stream order
// until fn returns false, nothing is left pending, or nothing arrives within the wait (the
// stream has no more).
func each(cons jetstream.Consumer, fn func(m jetstream.Msg, md *jetstream.MsgMetadata) bool) error {
	if cons.CachedInfo().NumPending == 0 {
		return nil
	}
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			if !fn(m, md) || md.NumPending == 0 {
				return nil
			}
		}
		if err := batch.Error(); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

func (h *StreamHistory) js() (jetstream.JetStream, error) {
	if h.o.Conn == nil {
		return nil, errors.New("audit: history: no NATS connection")
	}
	return jetstream.New(h.o.Conn)
}

// calls reads w and returns the decisions and still-held records that match q apart from
// their signature (held records whose decision is in w are dropped), in stream order, not yet
// verified. A decision closes its held record whether or not it verifies (a forged decision
// under a held call's id hides the held record; the forgery itself is listed with
// unverified=true).
func (h *StreamHistory) calls(ctx context.Context, js jetstream.JetStream, w window, q HistoryQuery) ([]scanned, error) {
	var all []scanned
	decided := map[string]bool{}
	q.Unverified = true // verification comes later, on what is shown
	err := h.scan(ctx, js, w, func(s scanned) bool {
		switch s.ev.Kind {
		case KindDecision:
			decided[s.ev.ID] = true
			if s.seq <= w.show && q.Match(&s.ev) {
				all = append(all, s)
			}
		case KindHeld:
			if s.seq <= w.show && q.Match(&s.ev) {
				all = append(all, s)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, s := range all {
		if s.ev.Kind == KindHeld {
			if decided[s.ev.CallID()] {
				continue
			}
			s.ev.Held = true
		}
		out = append(out, s)
	}
	return out, nil
}

// Search returns a page of the decisions q selects, newest first. Its cursor is a stream
// sequence: the next page reads below it.
func (h *StreamHistory) Search(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	page := HistoryPage{Events: []HistoryEvent{}, Source: SourceJetStream}
	var before uint64
	if q.Cursor != "" {
		v, err := strconv.ParseUint(q.Cursor, 10, 64)
		if err != nil || v == 0 {
			return page, fmt.Errorf("%w %q", ErrHistoryCursor, q.Cursor)
		}
		before = v
	}
	js, err := h.js()
	if err != nil {
		return page, err
	}
	w, err := h.window(ctx, js, q.From, before)
	if err != nil {
		return page, fmt.Errorf("audit: history: %w", err)
	}
	all, err := h.calls(ctx, js, w, q)
	if err != nil {
		return page, fmt.Errorf("audit: history: %w", err)
	}
	limit := q.PageLimit()
	var shown uint64 // the stream sequence of the oldest event in the page
	for i := len(all) - 1; i >= 0; i-- {
		h.verify(ctx, &all[i])
		if !q.Match(&all[i].ev) {
			continue
		}
		if len(page.Events) == limit {
			// all[i] matches but does not fit: the next page reads below the oldest shown.
			page.Next = strconv.FormatUint(shown, 10)
			return page, nil
		}
		page.Events = append(page.Events, all[i].ev)
		shown = all[i].seq
	}
	if w.truncated {
		page.Truncated = true
		page.Next = strconv.FormatUint(w.lo, 10)
	}
	return page, nil
}

// Event returns the call with audit id: its decision (or, while it waits, its held record)
// and the events that name it. It reads the stream from a little before the time in the id
// (a ULID), at most MaxScan messages.
func (h *StreamHistory) Event(ctx context.Context, id string) (HistoryDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	d := HistoryDetail{Source: SourceJetStream}
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return d, ErrHistoryNotFound
	}
	js, err := h.js()
	if err != nil {
		return d, err
	}
	from := ulid.Time(u.Time()).Add(-5 * time.Second)
	w, err := h.window(ctx, js, from, 0)
	if err != nil {
		return d, fmt.Errorf("audit: history %s: %w", id, err)
	}
	if w.truncated { // read forward from the id's time, not the newest messages
		s, ok, err := h.seqAt(ctx, js, from)
		if err != nil {
			return d, fmt.Errorf("audit: history %s: %w", id, err)
		}
		if ok {
			w.lo, w.hi = s, s+uint64(h.o.MaxScan)-1
		}
	}
	var found, held *HistoryEvent
	err = h.scan(ctx, js, w, func(s scanned) bool {
		if s.ev.ID != id && s.ev.CallID() != id {
			return true
		}
		h.verify(ctx, &s)
		ev := s.ev
		switch {
		case ev.ID == id && ev.Kind != KindHeld && ev.Kind != KindApproval:
			found = &ev
			return false // the decision ends a call's story
		case ev.ID == id:
			found = &ev
		case ev.CallID() == id:
			if ev.Kind == KindHeld {
				held = &ev
			}
			d.Related = append(d.Related, ev)
		}
		return true
	})
	if err != nil {
		return d, fmt.Errorf("audit: history %s: %w", id, err)
	}
	switch {
	case found != nil:
		d.Event = *found
	case held != nil:
		held.Held = true
		d.Event = *held
		d.Related = slices.DeleteFunc(d.Related, func(e HistoryEvent) bool { return e.ID == held.ID })
	default:
		return d, ErrHistoryNotFound
	}
	return d, nil
}

// Chart counts the decisions q selects (its Cursor and Limit ignored) per bucket of width
// bucket from q.From (or the first event's time, truncated), grouped by field by.
func (h *StreamHistory) Chart(ctx context.Context, q HistoryQuery, by string, bucket time.Duration) (HistoryChart, error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	c := HistoryChart{By: by, BucketS: int64(bucket / time.Second), Buckets: []HistoryBucket{}, Source: SourceJetStream}
	if !slices.Contains(HistoryFields, by) {
		return c, fmt.Errorf("audit: history: group by %q: want one of %v", by, HistoryFields)
	}
	js, err := h.js()
	if err != nil {
		return c, err
	}
	w, err := h.window(ctx, js, q.From, 0)
	if err != nil {
		return c, fmt.Errorf("audit: history: %w", err)
	}
	all, err := h.calls(ctx, js, w, q)
	if err != nil {
		return c, fmt.Errorf("audit: history: %w", err)
	}
	if !q.Unverified {
		h.verifyAll(ctx, all)
	}
	c.Truncated = w.truncated
	var evs []*HistoryEvent
	for i := range all {
		if q.Match(&all[i].ev) {
			evs = append(evs, &all[i].ev)
		}
	}
	c.Buckets = ChartBuckets(evs, q.From, by, bucket)
	return c, nil
}

// ChartBuckets counts evs per bucket of width w counted from origin (zero = the earliest
// event's time truncated to w), grouped by field by; oldest first.
func ChartBuckets(evs []*HistoryEvent, origin time.Time, by string, w time.Duration) []HistoryBucket {
	out := []HistoryBucket{}
	if len(evs) == 0 {
		return out
	}
	if origin.IsZero() {
		origin = evs[0].Time
		for _, e := range evs {
			if e.Time.Before(origin) {
				origin = e.Time
			}
		}
		origin = origin.UTC().Truncate(w)
	}
	idx := map[time.Time]int{}
	for _, e := range evs {
		start := BucketStart(e.Time, origin, w)
		i, ok := idx[start]
		if !ok {
			i = len(out)
			idx[start] = i
			out = append(out, HistoryBucket{Start: start, Counts: map[string]int64{}})
		}
		out[i].Counts[HistoryGroup(e, by)]++
	}
	slices.SortFunc(out, func(a, b HistoryBucket) int { return a.Start.Compare(b.Start) })
	return out
}
