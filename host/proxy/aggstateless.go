package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/version"
)

// The stateless protocol (2026-07-28, SEP-2575) on the aggregate /mcp: no initialize and no
// session, so the gateway answers server/discover itself, with what it serves over every
// upstream, and a subscriptions/listen stream merges the upstreams' listen streams.

// metaServerInfo is where a stateless discover result carries serverInfo.
const metaServerInfo = "io.modelcontextprotocol/serverInfo"

// notificationSubscriptionsAck is the first message of a listen stream.
const notificationSubscriptionsAck = "notifications/subscriptions/acknowledged"

// discoverServer answers server/discover: the protocol versions the aggregate serves, the
// capabilities of the merged endpoint and of every upstream that answered its own discover,
// their instructions (each prefixed with the server's name), and the upstreams that did not
// answer (_meta palisade/unavailable). The request and the answer are judged like any other
// (instructions reach the client's model).
//
// A stateless client has no session the gateway could open upstream sessions for, so
// 2026-07-28 is offered only when every upstream answered discover offering it too; otherwise
// only the session era's versions are listed and the client initializes (the SDKs fall back),
// which serves every kind of upstream.
func (a *aggregator) discoverServer(ctx context.Context, rw *responder, hdr http.Header, s *aggSession, p *mcp.Parsed) {
	x, ok := a.begin(ctx, rw, p)
	if !ok {
		return
	}
	defer x.Finish(ctx)
	type found struct {
		caps      map[string]json.RawMessage
		instr     string
		stateless bool
		err       error
	}
	per := make([]found, len(a.order))
	var wg sync.WaitGroup
	for i, up := range a.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := up.health.due(); err != nil {
				per[i].err = err
				return
			}
			us, err := a.open(ctx, s, up)
			if err != nil {
				per[i].err = err
				return
			}
			h := a.upHeader(s, us, hdr, "")
			h.Set(mcp.HeaderMethod, mcp.MethodServerDiscover)
			ans, _, err := a.callWith(ctx, s, up, h, mcp.MethodServerDiscover, p.Message.Params)
			if err != nil {
				per[i].err = err
				return
			}
			var res struct {
				Versions     []string                   `json:"supportedVersions"`
				Capabilities map[string]json.RawMessage `json:"capabilities"`
				Instructions string                     `json:"instructions"`
			}
			_ = json.Unmarshal(ans, &res)
			per[i].caps, per[i].instr = res.Capabilities, res.Instructions
			per[i].stateless = slices.ContainsFunc(res.Versions, func(v string) bool { return v >= mcp.Stateless })
		}()
	}
	wg.Wait()
	merged := newMergedCaps()
	var down []string
	stateless := true
	for i, up := range a.order {
		stateless = stateless && per[i].stateless
		if per[i].err != nil {
			down = append(down, up.Name)
			a.h.o.Logger.Debug("aggregate: upstream did not answer server/discover", "upstream", up.Name, "err", per[i].err)
			continue
		}
		merged.add(up.Name, per[i].caps, per[i].instr)
	}
	var versions []string
	if stateless {
		versions = append(versions, mcp.Stateless)
	}
	for _, v := range slices.Backward(protocolVersions) {
		versions = append(versions, v)
	}
	meta := map[string]any{metaServerInfo: map[string]string{"name": "palisade", "title": "Palisade gateway", "version": version.String()}}
	if len(down) > 0 {
		meta["palisade/unavailable"] = down
	}
	res := map[string]any{
		"resultType":        "complete",
		"supportedVersions": versions,
		"ttlMs":             0, // upstreams come and go: always ask again
		"_meta":             meta,
	}
	merged.into(res)
	rb, _ := json.Marshal(res)
	rw.json(nil, x.Answer(ctx, &mcp.Message{JSONRPC: "2.0", Result: rb}))
}

// listen serves subscriptions/listen: the gateway acknowledges what it will pass on (the list
// changes of tools, prompts and resources, and the resource subscriptions asked for), opens the
// same listen on every upstream that is up, and relays their notifications on one SSE answer,
// each judged as on /mcp/<name>; the upstreams' own acknowledgements and final results stay
// with the gateway. It ends when the client goes away, or with a result when the gateway
// closes.
func (a *aggregator) listen(ctx context.Context, rw *responder, hdr http.Header, s *aggSession, p *mcp.Parsed) {
	h := a.h
	x, ok := a.begin(ctx, rw, p)
	if !ok {
		return
	}
	defer x.Finish(ctx)
	var params struct {
		Notifications struct {
			Tools     bool     `json:"toolsListChanged,omitempty"`
			Prompts   bool     `json:"promptsListChanged,omitempty"`
			Resources bool     `json:"resourcesListChanged,omitempty"`
			URIs      []string `json:"resourceSubscriptions,omitempty"`
		} `json:"notifications"`
	}
	_ = json.Unmarshal(p.Message.Params, &params)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rw.startSSE(nil)
	ack, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": notificationSubscriptionsAck,
		"params": map[string]any{"notifications": params.Notifications, "_meta": map[string]json.RawMessage{"io.modelcontextprotocol/subscriptionId": p.Message.ID}}})
	if err := rw.event(&sse.Event{Data: ack}); err != nil {
		return
	}
	var relays sync.WaitGroup
	defer relays.Wait()
	defer cancel()
	for _, up := range a.order {
		if up.health.due() != nil {
			continue
		}
		us, err := a.open(ctx, s, up)
		if err != nil {
			continue
		}
		uh := a.upHeader(s, us, hdr, "")
		uh.Set(mcp.HeaderMethod, mcp.MethodSubscriptionsListen)
		uh.Set("Accept", "application/json, text/event-stream")
		id, _ := json.Marshal("palisade-listen-" + strconv.FormatUint(a.seq.Add(1), 10))
		body, _ := json.Marshal(&mcp.Message{JSONRPC: "2.0", ID: id, Method: mcp.MethodSubscriptionsListen, Params: p.Message.Params})
		relays.Add(1)
		go func() {
			defer relays.Done()
			resp, err := h.sendTimed(ctx, up, uh, http.MethodPost, body, false)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode >= 300 || mediaType(resp.Header) != "text/event-stream" {
				return
			}
			r := &relay{h: h, up: up, hdr: uh, listen: true}
			if err := r.stream(ctx, rw, resp); err != nil && ctx.Err() == nil {
				h.o.Logger.Debug("aggregate: upstream listen stream ended", "upstream", up.Name, "err", err)
			}
		}()
	}
	select {
	case <-ctx.Done():
		return // the client went away: no answer to send
	case <-h.closing:
	}
	cancel()
	relays.Wait()
	rw.json(nil, x.Answer(context.WithoutCancel(ctx), &mcp.Message{JSONRPC: "2.0", Result: json.RawMessage(`{"resultType":"complete","_meta":{}}`)}))
}
