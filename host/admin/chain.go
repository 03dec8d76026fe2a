package admin

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/labstack/echo/v4"
)

// latencySamples is how many recent latencies per stage feed the percentiles.
const latencySamples = 2048

// Stats counts stage calls per bundle from decision events: calls by action, errors and the
// latency percentiles over the most recent calls. A new bundle digest starts it afresh.
type Stats struct {
	mu     sync.Mutex
	digest string
	since  time.Time
	total  int64
	stages map[string]*stageStats
}

type stageStats struct {
	calls    int64
	byAction map[string]int64
	errors   int64
	lat      []int64 // ring of latencies, µs
	pos      int
}

// NewStats returns empty statistics.
func NewStats() *Stats { return &Stats{stages: map[string]*stageStats{}, since: time.Now().UTC()} }

// Add counts one audit event (only decision events count).
func (s *Stats) Add(ev audit.Event) {
	if ev.Kind != audit.KindDecision && ev.Kind != "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Bundle != nil && ev.Bundle.Digest != s.digest {
		s.digest = ev.Bundle.Digest
		s.stages = map[string]*stageStats{}
		s.since = time.Now().UTC()
		s.total = 0
	}
	s.total++
	for _, r := range ev.Stages {
		if r.Skipped {
			continue
		}
		st := s.stages[r.Stage]
		if st == nil {
			st = &stageStats{byAction: map[string]int64{}}
			s.stages[r.Stage] = st
		}
		st.calls++
		a := r.Action
		if a == "" {
			a = abi.ActionNone
		}
		st.byAction[a]++
		if r.Error != "" {
			st.errors++
		}
		if len(st.lat) < latencySamples {
			st.lat = append(st.lat, r.LatencyUS)
		} else {
			st.lat[st.pos] = r.LatencyUS
			st.pos = (st.pos + 1) % latencySamples
		}
	}
}

// StageView is one stage as GET /chain shows it.
type StageView struct {
	Name       string           `json:"name"`
	Request    bool             `json:"request"`
	Response   bool             `json:"response"`
	FailClosed bool             `json:"fail_closed"`
	Timeout    string           `json:"timeout,omitempty"`
	Methods    []string         `json:"methods,omitempty"`
	Tools      []string         `json:"tools,omitempty"`
	Servers    []string         `json:"servers,omitempty"`
	Calls      int64            `json:"calls"`
	ByAction   map[string]int64 `json:"by_action"`
	Errors     int64            `json:"errors"`
	DenyRate   float64          `json:"deny_rate"` // denies / calls; 0 without calls
	P50US      int64            `json:"p50_us"`
	P90US      int64            `json:"p90_us"`
	P99US      int64            `json:"p99_us"`
}

// ChainView is the body of GET /chain.
type ChainView struct {
	Bundle    *chain.Info `json:"bundle"` // nil when no bundle is active
	Stages    []StageView `json:"stages"`
	Decisions int64       `json:"decisions"` // decisions counted since
	Since     time.Time   `json:"since"`
}

// View combines the active chain's stages with the counts.
func (s *Stats) View(ch *chain.Chain) ChainView {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := ChainView{Stages: []StageView{}, Since: s.since}
	if ch == nil {
		return v
	}
	info := ch.Info()
	v.Bundle = &info
	same := info.Digest == s.digest
	if same {
		v.Decisions = s.total
	}
	for _, st := range ch.Stages() {
		sv := StageView{Name: st.Name, Request: st.Request, Response: st.Response, FailClosed: st.FailClosed,
			Methods: st.Match.Methods, Tools: st.Match.Tools, Servers: st.Match.Servers, ByAction: map[string]int64{}}
		if st.Timeout > 0 {
			sv.Timeout = st.Timeout.String()
		}
		if c := s.stages[st.Name]; same && c != nil {
			sv.Calls, sv.Errors = c.calls, c.errors
			for k, n := range c.byAction {
				sv.ByAction[k] = n
			}
			if c.calls > 0 {
				sv.DenyRate = float64(c.byAction[abi.ActionDeny]) / float64(c.calls)
			}
			sv.P50US, sv.P90US, sv.P99US = percentiles(c.lat)
		}
		v.Stages = append(v.Stages, sv)
	}
	return v
}

// percentiles returns the nearest-rank p50, p90 and p99 of xs.
func percentiles(xs []int64) (p50, p90, p99 int64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) int64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return at(0.50), at(0.90), at(0.99)
}

// RegisterChain adds GET /chain: the active bundle's identity and stages with per-stage call
// counts, actions, deny rate and latency percentiles since that bundle became active.
func RegisterChain(g *echo.Group, active *chain.Active, s *Stats) {
	g.GET("/chain", func(c echo.Context) error {
		return c.JSON(http.StatusOK, s.View(active.Load()))
	})
}
