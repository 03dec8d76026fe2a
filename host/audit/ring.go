package audit

import (
	"context"
	"sync"
	"time"
)

// Recorder receives audit events; Publisher and Ring have this method.
type Recorder interface {
	Record(ctx context.Context, ev Event)
}

// FillDefaults fills what a recorder must not leave empty: ID (NewID; also when longer than 256
// bytes, which no NATS header takes), Time (now, UTC) and Kind (decision). It is the one place
// these defaults are set; every recorder calls it, and it changes nothing already set.
func (e *Event) FillDefaults() {
	if e.ID == "" || len(e.ID) > 256 {
		e.ID = NewID()
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if e.Kind == "" {
		e.Kind = KindDecision
	}
}

// DefaultRingSize is how many events a Ring keeps when its size is 0.
const DefaultRingSize = 1000

// Ring keeps the latest audit events in memory for the dashboard (GET /events, /decisions) and
// the own MCP server (audit://recent), fans each to live subscribers, and passes it on to the
// next recorder. A gateway has one Ring that every reader shares.
type Ring struct {
	next Recorder

	mu   sync.Mutex
	buf  []Event
	pos  int // next write
	full bool
	subs map[chan Event]struct{}

	closeOnce sync.Once
	done      chan struct{}
}

// NewRing returns a ring of size events (0 = DefaultRingSize) in front of next (nil = none).
func NewRing(size int, next Recorder) *Ring {
	if size <= 0 {
		size = DefaultRingSize
	}
	return &Ring{next: next, buf: make([]Event, size), subs: map[chan Event]struct{}{}, done: make(chan struct{})}
}

// Record fills ev's defaults (FillDefaults), keeps it, sends it to each subscriber (dropping it
// for one that is behind) and passes it on.
func (r *Ring) Record(ctx context.Context, ev Event) {
	ev.FillDefaults()
	r.mu.Lock()
	r.buf[r.pos] = ev
	r.pos = (r.pos + 1) % len(r.buf)
	if r.pos == 0 {
		r.full = true
	}
	for ch := range r.subs {
		select {
		case ch <- ev:
		default:
		}
	}
	r.mu.Unlock()
	if r.next != nil {
		r.next.Record(ctx, ev)
	}
}

// Resize changes how many events the ring keeps (0 = DefaultRingSize), keeping the newest.
func (r *Ring) Resize(size int) {
	if size <= 0 {
		size = DefaultRingSize
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.recent(size)
	r.buf, r.pos, r.full = make([]Event, size), 0, false
	for i := len(kept) - 1; i >= 0; i-- {
		r.buf[r.pos] = kept[i]
		r.pos = (r.pos + 1) % size
		if r.pos == 0 {
			r.full = true
		}
	}
}

// Recent returns up to n kept events, newest first; n <= 0 means all.
func (r *Ring) Recent(n int) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recent(n)
}

func (r *Ring) recent(n int) []Event {
	size := r.pos
	if r.full {
		size = len(r.buf)
	}
	if n <= 0 || n > size {
		n = size
	}
	out := make([]Event, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.buf[(r.pos-i+len(r.buf))%len(r.buf)])
	}
	return out
}

// Find returns a kept event by id.
func (r *Ring) Find(id string) (Event, bool) {
	for _, ev := range r.Recent(0) {
		if ev.ID == id {
			return ev, true
		}
	}
	return Event{}, false
}

// Subscribe returns a channel of new events and the func that ends the subscription. The
// channel holds 256 events; a subscriber further behind misses events.
func (r *Ring) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 256)
	r.mu.Lock()
	r.subs[ch] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.subs, ch)
			r.mu.Unlock()
		})
	}
}

// Close tells live readers (Done) to stop, so that an HTTP server's graceful shutdown is not
// held up by dashboards; Record keeps working.
func (r *Ring) Close() { r.closeOnce.Do(func() { close(r.done) }) }

// Done is closed by Close.
func (r *Ring) Done() <-chan struct{} { return r.done }
