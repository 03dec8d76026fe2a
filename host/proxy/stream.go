package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
)

// relay judges what an upstream sends on one HTTP answer: the JSON body or SSE stream of a POST
// (m and out set), or the standalone GET stream (m and out nil). Every message is judged or
// refused, never passed unread:
//   - a batch array is split and each element handled on its own;
//   - an object holding a key twice (or in two cases) is refused;
//   - the response whose id equals the request's id as a JSON value (1 and 1.0 alike; "1" is
//     another id) is the answer: tool pinning and the response phase judge it, result and
//     error alike, and it is sent with the id the client wrote; a second answer, or a response
//     on the GET stream or with any other id, answers nothing here and is dropped;
//   - requests from the server (sampling/createMessage, elicitation/create, roots/list, ping)
//     are judged as over stdio; one for a capability the client did not declare, or a denied
//     one, is answered to the upstream with the refusal and never reaches the client;
//   - notifications from the server are judged; a denied one is dropped;
//   - a message the gateway cannot read is handled by the failure mode of the response stages
//     matching the call (UnjudgeableResponse); on the GET stream it is dropped.
type relay struct {
	h   *HTTP
	up  *upstream
	hdr http.Header      // the client's request headers (its session), for answers sent upstream
	m   *mcp.Message     // the client's request; nil on the GET stream
	x   *engine.Exchange // its lifecycle; nil on the GET stream

	answered bool // the client has its answer (judged, denied, or passed by a fail-open mode)
	// waited is the time spent waiting on the upstream's answer after its headers (reading a
	// JSON body, waiting for each event): not the gateway's own (palisade_gateway_overhead_seconds).
	waited time.Duration
	// listen: an upstream's subscriptions/listen stream on the aggregate /mcp (no request
	// waiting): its acknowledgement and final result are the gateway's, not the client's.
	listen bool
}

// relayed is one message to send the client.
type relayed struct {
	b      []byte
	answer bool // it answers the request
}

func (r *relay) filter(ctx context.Context, data []byte) []relayed {
	log := r.h.o.Logger
	ms, err := upstreamMessages(data, r.h.o.MaxBatch)
	if errors.Is(err, mcp.ErrBatchTooLarge) {
		return r.batchTooLarge(err)
	}
	if err != nil {
		return r.unjudgeable(data, err)
	}
	var out []relayed
	for _, um := range ms {
		if um.err != nil {
			out = append(out, r.unjudgeable(um.raw, um.err)...)
			continue
		}
		m := um.msg
		switch {
		case m.IsResponse() && r.listen:
			continue // the upstream ended its listen stream; the client's continues
		case m.IsResponse():
			if r.m == nil || r.answered || !sameID(m.ID, r.m.ID) {
				log.Warn("upstream response answers no request on this stream; dropped", "upstream", r.up.Name, "id", string(m.ID))
				r.h.count(r.up.Name, "dropped_response")
				continue
			}
			r.answered = true
			// A response stage reads the answer encoded for it: the budget covers that.
			var cost int64
			if responseJudged(r.x.Outcome) {
				cost = JudgeCost(len(um.raw))
			}
			judged, ok := holdJudging(r.h.budget, cost)
			if !ok {
				out = append(out, relayed{b: mcp.ErrorResponse(r.m.ID, mcp.NewError(mcp.CodeUpstream,
					fmt.Sprintf("upstream %s: judging the answer does not fit the gateway's memory budget (limits.stream_buffer_bytes) now", r.up.Name), nil)), answer: true})
				continue
			}
			out = append(out, relayed{b: r.x.Answer(ctx, m), answer: true})
			judged()
		case m.IsRequest():
			if r.h.judgeServerRequest(ctx, r.up, r.hdr, m) {
				b := um.raw
				if s := aggFrom(ctx); s != nil && r.h.agg != nil {
					// On /mcp the client answers the gateway, which sends the answer on.
					b = s.serverRequest(r.up, r.hdr, m, r.h.agg.seq.Add(1))
				}
				out = append(out, relayed{b: b})
			}
		case r.listen && m.Method == notificationSubscriptionsAck:
			continue // the gateway acknowledged the client's listen itself
		default: // a notification
			if r.h.judgeServerNotification(ctx, r.up, r.hdr, m) {
				if s := aggFrom(ctx); s != nil && r.h.agg != nil && strings.HasSuffix(m.Method, "/list_changed") {
					r.h.agg.listChanged(s, m.Method)
				}
				out = append(out, relayed{b: um.raw})
			}
		}
	}
	return out
}

// responseJudged reports whether a response stage matches o's call, so its answer will be
// encoded for the stages (what JudgeCost covers).
func responseJudged(o *engine.Outcome) bool {
	if o.Chain == nil {
		return false
	}
	for _, s := range o.Chain.Stages() {
		if s.Response && s.Match.Matches(o.Envelope) {
			return true
		}
	}
	return false
}

// batchTooLarge refuses an upstream batch over MaxBatch unread: the waiting request, if any,
// is answered with the error naming the limit; nothing in the batch reaches the client.
func (r *relay) batchTooLarge(err error) []relayed {
	r.h.o.Logger.Warn("upstream batch over the limit; refused", "upstream", r.up.Name, "err", err)
	r.h.count(r.up.Name, "batch_too_large")
	if r.x == nil || r.answered {
		return nil
	}
	r.answered = true
	if u := r.x.Outcome.Upstream; u != nil {
		u.Error = err.Error()
	}
	return []relayed{{b: mcp.ErrorResponse(r.m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s: %v", r.up.Name, err), nil)), answer: true}}
}

// unjudgeable handles upstream bytes the gateway could not read as JSON-RPC messages.
func (r *relay) unjudgeable(raw []byte, err error) []relayed {
	log := r.h.o.Logger
	if r.x == nil || r.answered {
		log.Warn("unreadable upstream message on a stream with no request waiting; dropped", "upstream", r.up.Name, "err", err)
		r.h.count(r.up.Name, "dropped_response")
		return nil
	}
	r.answered = true
	return []relayed{{b: r.x.Unjudgeable(raw, err), answer: true}}
}

// finish returns the answer to send when the upstream's body or stream ended (with err, nil at
// its end) without one (nil when the request was answered, on the GET stream, or when the
// client went away). A stream cut at the total deadline is answered with that error.
func (r *relay) finish(ctx context.Context, err error) []byte {
	if r.x == nil || r.answered || ctx.Err() != nil {
		return nil
	}
	r.answered = true
	if errors.Is(err, ErrUpstreamTimeout) {
		out := r.x.Outcome
		return mcp.ErrorResponse(r.m.ID, mcp.NewError(mcp.CodeUpstream, fmt.Sprintf("upstream %s timed out: %v", r.up.Name, err),
			map[string]string{"upstream": r.up.Name, "audit_id": out.AuditID}))
	}
	return r.x.NoAnswer(r.up.Name)
}

// stream relays an upstream SSE stream event by event, each judged message flushed as it comes
// (progress before the result). Events with data and a name other than message are dropped:
// clients would not read them as messages, and the gateway does not pass what it did not judge.
func (r *relay) stream(ctx context.Context, rw *responder, resp *http.Response) error {
	rd := sse.NewReader(resp.Body, int(r.h.o.ResponseLimit)).WithBudget(r.h.budget)
	defer rd.Close() // its budget share and its read buffer back; the events relayed are copies
	for {
		t := time.Now()
		ev, err := rd.Next()
		r.waited += time.Since(t)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			if b := r.finish(ctx, err); b != nil {
				rw.json(nil, b)
			}
			return err
		}
		if len(ev.Data) == 0 {
			if err := rw.event(ev); err != nil {
				return nil // client gone
			}
			continue
		}
		if ev.Name != "" && ev.Name != "message" {
			r.h.o.Logger.Warn("upstream SSE event with an unknown name; dropped", "upstream", r.up.Name, "event", ev.Name)
			continue
		}
		for i, o := range r.filter(ctx, ev.Data) {
			out := &sse.Event{Name: ev.Name, Data: o.b}
			// On /mcp the stream merges several upstreams: their event ids cannot resume it.
			if i == 0 && aggFrom(ctx) == nil {
				out.ID, out.Retry = ev.ID, ev.Retry
			}
			if err := rw.event(out); err != nil {
				return nil // client gone
			}
		}
	}
}

// answerIn returns the upstream's answer to id in a whole body (JSON or SSE), parsed strictly
// (ambiguous keys refused, ids matched as JSON values); nil if there is none.
func answerIn(b []byte, sseBody bool, id json.RawMessage, maxBatch int) *mcp.Message {
	find := func(data []byte) *mcp.Message {
		ms, err := upstreamMessages(data, maxBatch)
		if err != nil {
			return nil
		}
		for _, um := range ms {
			if um.err == nil && um.msg.IsResponse() && sameID(um.msg.ID, id) {
				um.msg.ID = id
				return um.msg
			}
		}
		return nil
	}
	if !sseBody {
		return find(b)
	}
	rd := sse.NewReader(bytes.NewReader(b), len(b)+1)
	defer rd.Close()
	for {
		ev, err := rd.Next()
		if err != nil {
			return nil
		}
		if ev.Name != "" && ev.Name != "message" {
			continue
		}
		if m := find(ev.Data); m != nil {
			return m
		}
	}
}
