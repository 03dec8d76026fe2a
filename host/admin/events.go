package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/labstack/echo/v4"
)

// Recorder receives audit events (engine.Recorder, audit.Ring and audit.Publisher have this method).
type Recorder interface {
	Record(ctx context.Context, ev audit.Event)
}

// FeedOptions configure a Feed.
type FeedOptions struct {
	// Ring holds the recent events the dashboard shows (GET /events, /decisions): the gateway's
	// one ring, shared with the own MCP server. nil = a ring of its own (audit.DefaultRingSize)
	// that the feed records into.
	Ring *audit.Ring
	// Next receives every event after the feed has counted it; nil = none.
	Next Recorder
}

// Feed is the dashboard's view of audit events: it counts every event it records into the chain
// statistics, then passes it on to Next; the live stream and recent decisions come from Ring.
type Feed struct {
	ring  *audit.Ring
	own   bool // ring is the feed's own: Record stores into it
	next  Recorder
	stats *Stats
}

// NewFeed returns a Feed.
func NewFeed(o FeedOptions) *Feed {
	f := &Feed{ring: o.Ring, next: o.Next, stats: NewStats()}
	if f.ring == nil {
		f.ring, f.own = audit.NewRing(0, nil), true
	}
	return f
}

// Close ends every live event stream (GET /events) so that an HTTP server's graceful Shutdown,
// which waits for active connections, is not held up by dashboards; Record keeps working.
// Register it with http.Server.RegisterOnShutdown.
func (f *Feed) Close() { f.ring.Close() }

// Stats returns the per-stage statistics the feed keeps.
func (f *Feed) Stats() *Stats { return f.stats }

// Ring returns the recent events the feed serves.
func (f *Feed) Ring() *audit.Ring { return f.ring }

// Record counts ev in the statistics and passes it to Next (and to its own ring, when it has one).
func (f *Feed) Record(ctx context.Context, ev audit.Event) {
	ev.FillDefaults()
	f.stats.Add(ev)
	if f.own {
		f.ring.Record(ctx, ev)
	}
	if f.next != nil {
		f.next.Record(ctx, ev)
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
		return c.JSON(http.StatusOK, map[string]any{"events": f.ring.Recent(n)})
	})
	g.GET("/decisions/:id", func(c echo.Context) error {
		ev, ok := f.ring.Find(c.Param("id"))
		if !ok {
			return Error(c, http.StatusNotFound, "no recent event with that id")
		}
		return c.JSON(http.StatusOK, ev)
	})
}

func streamEvents(c echo.Context, f *Feed, m *approval.Manager) error {
	select {
	case <-f.ring.Done():
		return Error(c, http.StatusServiceUnavailable, "shutting down")
	default:
	}
	ctx := c.Request().Context()
	events, unsub := f.ring.Subscribe()
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
		case <-f.ring.Done():
			return nil
		case ev := <-events:
			if ev.Kind == audit.KindHeld {
				err = send("held", ev) // not a decision: the call's own event follows
			} else {
				err = send("decision", ev)
			}
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
