package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/labstack/echo/v4"
)

// Recorder receives audit events (proxy.Recorder and audit.Publisher have this method).
type Recorder interface {
	Record(ctx context.Context, ev audit.Event)
}

// DefaultFeedSize is how many recent events a Feed keeps when FeedOptions.Size is 0.
const DefaultFeedSize = 1000

// FeedOptions configure a Feed.
type FeedOptions struct {
	// Size is how many recent events are kept for the dashboard; 0 = 1000.
	Size int
	// Next receives every event after the feed has seen it (the audit publisher); nil = none.
	Next Recorder
}

// Feed is a Recorder that keeps the most recent audit events, fans them out to live
// subscribers (the dashboard's server-sent events) and feeds the chain statistics, then passes
// each event on to Next. The gateway wraps its recorder with it, so the engine needs no change.
type Feed struct {
	next  Recorder
	stats *Stats

	mu   sync.Mutex
	ring []audit.Event
	pos  int // next write
	full bool
	subs map[chan audit.Event]struct{}

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: live streams end
}

// NewFeed returns a Feed.
func NewFeed(o FeedOptions) *Feed {
	if o.Size <= 0 {
		o.Size = DefaultFeedSize
	}
	return &Feed{next: o.Next, stats: NewStats(), ring: make([]audit.Event, o.Size), subs: map[chan audit.Event]struct{}{}, closed: make(chan struct{})}
}

// Close ends every live event stream (GET /events) so that an HTTP server's graceful Shutdown,
// which waits for active connections, is not held up by dashboards; Record keeps working.
// Register it with http.Server.RegisterOnShutdown.
func (f *Feed) Close() { f.closeOnce.Do(func() { close(f.closed) }) }

// Stats returns the per-stage statistics the feed keeps.
func (f *Feed) Stats() *Stats { return f.stats }

// Record keeps ev, sends it to subscribers (dropping it for a subscriber that is behind) and
// passes it to Next.
func (f *Feed) Record(ctx context.Context, ev audit.Event) {
	if ev.ID == "" {
		ev.ID = audit.NewID()
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	if ev.Kind == "" {
		ev.Kind = audit.KindDecision
	}
	f.stats.Add(ev)
	f.mu.Lock()
	f.ring[f.pos] = ev
	f.pos = (f.pos + 1) % len(f.ring)
	if f.pos == 0 {
		f.full = true
	}
	for ch := range f.subs {
		select {
		case ch <- ev:
		default:
		}
	}
	f.mu.Unlock()
	if f.next != nil {
		f.next.Record(ctx, ev)
	}
}

// Recent returns up to n events, newest first; n <= 0 means all kept.
func (f *Feed) Recent(n int) []audit.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	size := f.pos
	if f.full {
		size = len(f.ring)
	}
	if n <= 0 || n > size {
		n = size
	}
	out := make([]audit.Event, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, f.ring[(f.pos-i+len(f.ring))%len(f.ring)])
	}
	return out
}

// Find returns a kept event by id.
func (f *Feed) Find(id string) (audit.Event, bool) {
	for _, ev := range f.Recent(0) {
		if ev.ID == id {
			return ev, true
		}
	}
	return audit.Event{}, false
}

// Subscribe returns a channel of new events and the func that ends the subscription.
func (f *Feed) Subscribe() (<-chan audit.Event, func()) {
	ch := make(chan audit.Event, 256)
	f.mu.Lock()
	f.subs[ch] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs, ch)
			f.mu.Unlock()
		})
	}
}

// KeepAlive is the interval of SSE comment lines that keep idle proxies from closing the stream.
const KeepAlive = 15 * time.Second

// RegisterEvents adds the live decision feed to g:
//
//	GET /events            text/event-stream: "decision" (audit event), "approval" (queue change)
//	GET /decisions?limit=N recent events, newest first (default 100)
//	GET /decisions/:id     one recent event in full
//
// m may be nil (no approval events).
func RegisterEvents(g *echo.Group, f *Feed, m *approval.Manager) {
	g.GET("/events", func(c echo.Context) error { return streamEvents(c, f, m) })
	g.GET("/decisions", func(c echo.Context) error {
		n := 100
		if s := c.QueryParam("limit"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 {
				return Error(c, http.StatusBadRequest, "limit must be a non-negative integer")
			}
			n = v
		}
		return c.JSON(http.StatusOK, map[string]any{"events": f.Recent(n)})
	})
	g.GET("/decisions/:id", func(c echo.Context) error {
		ev, ok := f.Find(c.Param("id"))
		if !ok {
			return Error(c, http.StatusNotFound, "no recent event with that id")
		}
		return c.JSON(http.StatusOK, ev)
	})
}

func streamEvents(c echo.Context, f *Feed, m *approval.Manager) error {
	select {
	case <-f.closed:
		return Error(c, http.StatusServiceUnavailable, "shutting down")
	default:
	}
	ctx := c.Request().Context()
	events, unsub := f.Subscribe()
	defer unsub()
	var changes <-chan approval.Change
	if m != nil {
		var unsubA func()
		changes, unsubA = m.Subscribe()
		defer unsubA()
	}
	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	if err := send("hello", map[string]any{"time": time.Now().UTC()}); err != nil {
		return nil
	}
	tick := time.NewTicker(KeepAlive)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-f.closed:
			return nil
		case ev := <-events:
			err = send("decision", ev)
		case ch := <-changes:
			err = send("approval", ch)
		case <-tick.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
			w.Flush()
		}
		if err != nil {
			return nil // the client went away
		}
	}
}
