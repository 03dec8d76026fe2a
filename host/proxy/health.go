package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Upstream states reported by HTTP.UpstreamStatus.
const (
	StatusUnknown = "unknown" // not contacted yet
	StatusUp      = "up"      // its last exchange got an HTTP answer
	StatusDown    = "down"    // its last exchange failed before an HTTP answer
)

// UpstreamStatus is what the gateway knows of one upstream's reachability.
type UpstreamStatus struct {
	Name   string    `json:"name"`
	Status string    `json:"status"` // StatusUp, StatusDown or StatusUnknown
	Error  string    `json:"error,omitempty"`
	Since  time.Time `json:"since,omitzero"` // when it entered Status
	// NextTry is when the aggregate endpoint next tries a down upstream (its backoff).
	NextTry time.Time `json:"next_try,omitzero"`
	// PID is the process of a stdio upstream (StdioUpstream); 0 = none runs, or an HTTP one.
	PID int `json:"pid,omitempty"`
}

// Backoff of a down upstream: the first retry after minBackoff, doubling to maxBackoff.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// health is one upstream's reachability, from every exchange the proxy has with it and from
// the probe that retries a down one with backoff.
type health struct {
	mu      sync.Mutex
	status  string
	err     string
	since   time.Time
	backoff time.Duration
	next    time.Time
}

// observe records the outcome of one exchange: err is a transport error (no HTTP answer).
// recovered is true when this answer brings a down upstream back.
func (hl *health) observe(err error) (recovered bool) {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	now := time.Now()
	if err == nil {
		recovered = hl.status == StatusDown
		if hl.status != StatusUp {
			hl.status, hl.since = StatusUp, now
		}
		hl.err, hl.backoff, hl.next = "", 0, time.Time{}
		return recovered
	}
	if hl.status != StatusDown {
		hl.status, hl.since = StatusDown, now
		hl.backoff = minBackoff
	} else {
		hl.backoff = min(2*hl.backoff, maxBackoff)
	}
	hl.err, hl.next = err.Error(), now.Add(hl.backoff)
	return false
}

// due returns nil when the upstream may be tried now: it is not down, or its backoff passed.
func (hl *health) due() error {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if hl.status != StatusDown || !time.Now().Before(hl.next) {
		return nil
	}
	return fmt.Errorf("upstream down (%s); next try in %s", hl.err, time.Until(hl.next).Round(time.Millisecond))
}

func (hl *health) snapshot(name string) UpstreamStatus {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	st := UpstreamStatus{Name: name, Status: hl.status, Error: hl.err, Since: hl.since, NextTry: hl.next}
	if st.Status == "" {
		st.Status = StatusUnknown
	}
	return st
}

// UpstreamStatus reports every upstream's reachability, in config order.
func (h *HTTP) UpstreamStatus() []UpstreamStatus {
	out := make([]UpstreamStatus, 0, len(h.order))
	for _, u := range h.order {
		st := u.health.snapshot(u.Name)
		if s, ok := u.Transport.(*StdioUpstream); ok {
			st.PID = s.PID()
		}
		out = append(out, st)
	}
	return out
}

// observeSend records a send's outcome in the upstream's health; a request the client
// abandoned says nothing about the upstream.
func (h *HTTP) observeSend(ctx context.Context, up *upstream, err error) {
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)) {
		return
	}
	h.observed(up, err)
}

// observed records an exchange's outcome in up's health; when it brings up back, the
// aggregate endpoint's sessions open their session on it and tell their clients to list again.
func (h *HTTP) observed(up *upstream, err error) {
	if up.health.observe(err) && h.agg != nil {
		go h.agg.recovered(up)
	}
}

// probe retries each down upstream when its backoff passes (any HTTP answer to a GET without
// a session means it is back), so /readyz recovers without traffic. It runs until Close.
func (h *HTTP) probe() {
	t := time.NewTicker(minBackoff)
	defer t.Stop()
	for {
		select {
		case <-h.closing:
			return
		case <-t.C:
		}
		for _, up := range h.order {
			if up.health.snapshot(up.Name).Status != StatusDown || up.health.due() != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, up.URL, nil)
			if err == nil {
				for k, v := range up.Headers {
					req.Header.Set(k, v)
				}
				req.Header.Set("Accept", "application/json, text/event-stream")
				var resp *http.Response
				if resp, err = up.client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
			h.observed(up, err)
		}
	}
}
