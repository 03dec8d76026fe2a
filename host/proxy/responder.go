package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/labstack/echo/v4"
)

// responder writes one POST's answer. It starts as nothing written and becomes either a JSON
// answer or an SSE stream; a held call's progress notifications switch it to SSE early, and
// whatever comes later is written as SSE events.
type responder struct {
	mu   sync.Mutex
	c    echo.Context
	sink *collector // batch mode: collect the answer instead of writing
	// headers replace the upstream's in what the client gets (on /mcp: the client's own
	// session and protocol, not those of the upstream's session).
	headers http.Header
	sse     bool
	done    bool
	start   time.Time // when the request arrived (palisade_gateway_overhead_seconds)
}

func newResponder(c echo.Context) *responder { return &responder{c: c, start: time.Now()} }

func (r *responder) w() http.ResponseWriter { return r.c.Response() }

func (r *responder) flush() {
	if f, ok := r.w().(http.Flusher); ok {
		f.Flush()
	}
}

func copyHeaders(dst http.Header, resp *http.Response) {
	for _, k := range forwardResponseHeaders {
		if v := resp.Header.Values(k); len(v) > 0 {
			dst[k] = v
		}
	}
}

// send flushes what was written so far to the client.
func (r *responder) send() {
	if r.sink != nil || r.c == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
}

// startSSE begins an event stream (once).
func (r *responder) startSSE(resp *http.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.startSSELocked(resp)
}

func (r *responder) startSSELocked(resp *http.Response) {
	if r.sink != nil && resp != nil {
		r.sink.header = resp.Header
	}
	if r.sse || r.sink != nil {
		return
	}
	h := r.w().Header()
	if resp != nil {
		copyHeaders(h, resp)
	}
	r.override(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	r.w().WriteHeader(http.StatusOK)
	r.sse = true
	r.flush()
}

func (r *responder) override(h http.Header) {
	for k, v := range r.headers {
		h[k] = v
	}
}

// event writes one SSE event and flushes it.
func (r *responder) event(ev *sse.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sink != nil {
		r.sink.add(ev.Data)
		return nil
	}
	r.startSSELocked(nil)
	if err := sse.Write(r.w(), ev); err != nil {
		return err
	}
	r.flush()
	return nil
}

// json writes a JSON-RPC answer: as JSON, or as an event if the stream already started.
func (r *responder) json(resp *http.Response, b []byte) {
	r.mu.Lock()
	if r.sink != nil {
		if resp != nil {
			r.sink.header = resp.Header
		}
		r.sink.add(b)
		r.mu.Unlock()
		return
	}
	if r.sse {
		r.mu.Unlock()
		r.event(&sse.Event{Name: "message", Data: b})
		return
	}
	defer r.mu.Unlock()
	h := r.w().Header()
	status := http.StatusOK
	if resp != nil {
		copyHeaders(h, resp)
		status = resp.StatusCode
	}
	r.override(h)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	r.w().WriteHeader(status)
	r.w().Write(b)
	r.done = true
}

// error writes a JSON-RPC error answer.
func (r *responder) error(status int, id json.RawMessage, e *mcp.Error) {
	b := mcp.ErrorResponse(id, e)
	r.mu.Lock()
	if r.sink != nil || r.sse {
		r.mu.Unlock()
		r.json(nil, b)
		return
	}
	defer r.mu.Unlock()
	r.w().Header().Set("Content-Type", "application/json")
	r.w().WriteHeader(status)
	r.w().Write(b)
	r.done = true
}

// passthrough copies an upstream answer that carries no messages (DELETE) as it is.
func (r *responder) passthrough(resp *http.Response) {
	copyHeaders(r.w().Header(), resp)
	r.w().WriteHeader(resp.StatusCode)
	r.flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := r.w().Write(buf[:n]); werr != nil {
				return
			}
			r.flush()
		}
		if err != nil {
			return
		}
	}
}

// progressFunc returns a sender of notifications/progress for a held call.
func (r *responder) progressFunc(token json.RawMessage) func(string) {
	var n float64
	return func(msg string) {
		n++
		params, _ := json.Marshal(map[string]any{"progressToken": token, "progress": n, "message": msg})
		b, _ := json.Marshal(mcp.Message{JSONRPC: "2.0", Method: "notifications/progress", Params: params})
		r.event(&sse.Event{Name: "message", Data: b})
	}
}

// collector keeps the answer of one batch element: the last response among its messages
// (everything collected was judged by relay). It holds only that one, so an element whose
// upstream streams notifications without end does not grow it.
type collector struct {
	last   []byte
	header http.Header // the upstream answer's headers (its Mcp-Session-Id); nil if none came
}

func (c *collector) add(b []byte) {
	if m, err := mcp.ParseMessage(b); err == nil && m.IsResponse() {
		c.last = append(c.last[:0], b...)
	}
}

func (c *collector) answer(id json.RawMessage) json.RawMessage {
	if c.last != nil {
		return c.last
	}
	return mcp.ErrorResponse(id, mcp.NewError(mcp.CodeUpstream, "upstream sent no answer", nil))
}
