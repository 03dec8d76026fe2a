package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/sdk/go/abi"
)

// ShadowOptions configure a Shadow. The zero value is usable.
type ShadowOptions struct {
	Queue   int           // calls waiting for the shadow; 0 = 4096
	Workers int           // goroutines judging with the shadow chain; 0 = 4
	Timeout time.Duration // one shadow judgement; 0 = 2s
	// MaxDelay is the longest a call may wait in the queue: one that waited longer is recorded
	// unjudged, as dropped, so a slow or stuck shadow delays no event by more than about
	// MaxDelay + Timeout. 0 = 2s.
	MaxDelay time.Duration
	Keep     int          // recent disagreements kept for listing; 0 = 1000
	Metrics  *Metrics     // nil = none
	Logger   *slog.Logger // nil = discard
}

func (o ShadowOptions) withDefaults() ShadowOptions {
	if o.Queue <= 0 {
		o.Queue = 4096
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 2 * time.Second
	}
	if o.Keep <= 0 {
		o.Keep = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Shadow judges calls with a second bundle beside the active one, off the hot path: the active
// chain decides and the call goes on; when the call is finished, a copy of its request envelope
// and its audit event are queued, a worker judges the copy with the shadow chain, puts the
// verdict in the event (audit.Event.Shadow) and records it. The client's answer never waits
// for the shadow. A full queue drops the judgement, never the event: it is recorded at once
// with shadow.dropped, and palisade_shadow_dropped_total counts it; so is one that waited in the
// queue longer than MaxDelay.
//
// The shadow chain lives in Slot, filled by the bundle manager (bundle.Manager.LoadShadow)
// with the same staged copy, trust check and build as an active bundle. While Slot is empty the
// engine records events directly, as without a Shadow.
//
// # Notes
//
// Close drains the queue (every queued event is recorded) before the audit publisher closes.
// A shadow bundle's stages share the host functions with the active one (kv, sample, infer):
// a shadow stage that samples calls the judge.
type Shadow struct {
	o    ShadowOptions
	slot chain.Active
	jobs chan *shadowJob // pointers: a queue of Queue jobs by value held 3.7 MB even with no shadow bundle
	wg   sync.WaitGroup

	mu     sync.RWMutex // guards closed against submit; never held while judging
	closed bool

	judged, disagreed, dropped atomic.Uint64

	recentMu sync.Mutex
	recent   []Disagreement // ring, oldest overwritten
	next     int
}

// Disagreement is one call the shadow bundle would have decided otherwise than the active one.
type Disagreement struct {
	AuditID      string       `json:"audit_id"`
	Time         time.Time    `json:"time"`
	Server       string       `json:"server,omitempty"`
	Tool         string       `json:"tool,omitempty"`
	Method       string       `json:"method,omitempty"`
	Active       audit.Bundle `json:"active_bundle"`
	Shadow       audit.Bundle `json:"shadow_bundle"`
	ActiveAction string       `json:"active_action"`
	ShadowAction string       `json:"shadow_action"`
	ActiveRule   string       `json:"active_rule,omitempty"`
	ShadowRule   string       `json:"shadow_rule,omitempty"`
	// Rule and Stage label the metric: the shadow's deciding rule and stage, or the active
	// one's when the shadow had none (the shadow allowed by default what the active denied).
	Rule  string `json:"rule,omitempty"`
	Stage string `json:"stage,omitempty"`
}

// ShadowStats are a Shadow's counters since it started.
type ShadowStats struct {
	Loaded        bool       `json:"loaded"`
	Bundle        chain.Info `json:"bundle"`
	Judged        uint64     `json:"judged"`
	Disagreements uint64     `json:"disagreements"`
	Dropped       uint64     `json:"dropped"`
	Queued        int        `json:"queued"`
}

type shadowJob struct {
	env    abi.Envelope  // a copy: the transport may reuse nothing of it, the chain may
	resp   *abi.Envelope // the answer's envelope when the active bundle's response phase ran
	ev     audit.Event
	active string // the active bundle's own action
	judged bool   // the method always gets a decision (Engine.Judged)
	rec    Recorder
	queued time.Time
}

// NewShadow starts the shadow's workers; Close stops them.
func NewShadow(o ShadowOptions) *Shadow {
	o = o.withDefaults()
	s := &Shadow{o: o, jobs: make(chan *shadowJob, o.Queue)}
	for range o.Workers {
		s.wg.Go(s.work)
	}
	return s
}

// Slot is where the shadow chain is installed (bundle.ManagerOptions.Shadow).
func (s *Shadow) Slot() *chain.Active { return &s.slot }

// Loaded reports whether a shadow chain is installed.
func (s *Shadow) Loaded() bool { return s != nil && s.slot.Load() != nil }

// submit queues o's judgement and event without blocking. It reports false, having recorded
// nothing, when no shadow chain is installed or the shadow is closed: the caller records ev.
func (s *Shadow) submit(o *Outcome, ev audit.Event, rec Recorder) bool {
	if s == nil {
		return false
	}
	ch := s.slot.Load()
	if ch == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false
	}
	job := &shadowJob{env: *o.Envelope, resp: o.respEnv, ev: ev, active: o.own, judged: o.engine.Judged(o.Envelope.Method), rec: rec, queued: time.Now()}
	select {
	case s.jobs <- job:
	default:
		s.drop(ch.Info(), job)
	}
	return true
}

// drop records job's event unjudged, with shadow.dropped, and counts it.
func (s *Shadow) drop(info chain.Info, job *shadowJob) {
	s.dropped.Add(1)
	if s.o.Metrics != nil {
		s.o.Metrics.ShadowDropped()
	}
	ev := job.ev
	ev.Shadow = &audit.Shadow{Bundle: &audit.Bundle{Name: info.Name, Version: info.Version, Digest: info.Digest}, Dropped: true}
	if job.rec != nil {
		job.rec.Record(context.Background(), ev)
	}
}

func (s *Shadow) work() {
	for job := range s.jobs {
		s.judge(job)
	}
}

// judge runs the shadow chain on job's envelope, puts the verdict in its event and records it
// (unjudged, as dropped, when it waited longer than MaxDelay).
func (s *Shadow) judge(job *shadowJob) {
	ch, release := s.slot.Acquire()
	if ch == nil {
		if job.rec != nil {
			job.rec.Record(context.Background(), job.ev) // cleared while queued: no shadow verdict
		}
		return
	}
	defer release()
	info := ch.Info()
	if time.Since(job.queued) > s.o.MaxDelay {
		s.drop(info, job)
		return
	}
	ev := job.ev
	defer func() {
		if job.rec != nil {
			job.rec.Record(context.Background(), ev)
		}
	}()
	sh := &audit.Shadow{Bundle: &audit.Bundle{Name: info.Name, Version: info.Version, Digest: info.Digest}}
	ev.Shadow = sh
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	start := time.Now()
	d, err := ch.Evaluate(ctx, &job.env)
	sh.LatencyUS = time.Since(start).Microseconds()
	s.judged.Add(1)
	if err != nil {
		sh.Error = err.Error()
		s.o.Logger.Warn("shadow judgement failed", "audit_id", ev.ID, "bundle", info.Name, "err", err)
		return
	}
	sh.Action = ownAction(ch, d, job.judged)
	if job.resp != nil && sh.Action != abi.ActionDeny {
		// The same answer through the shadow's response phase, as the active bundle's ran.
		rd, err := ch.Evaluate(ctx, job.resp)
		sh.LatencyUS = time.Since(start).Microseconds()
		if err != nil {
			sh.Error = err.Error()
			s.o.Logger.Warn("shadow judgement of the answer failed", "audit_id", ev.ID, "bundle", info.Name, "err", err)
			return
		}
		if !rd.Default && answerAction(ch, rd) == abi.ActionDeny {
			sh.Action, d = abi.ActionDeny, rd
		}
	}
	sh.Rule, sh.Stage, sh.Reason = d.Rule, d.Stage, d.Reason
	if sh.Action == job.active {
		return
	}
	sh.Disagrees = true
	s.disagreed.Add(1)
	rule, stage := d.Rule, d.Stage
	if rule == "" && stage == "" {
		rule, stage = ev.Rule, ev.Stage
	}
	if s.o.Metrics != nil {
		s.o.Metrics.ShadowDisagreement(job.active, sh.Action, rule, stage)
	}
	var active audit.Bundle
	if ev.Bundle != nil {
		active = *ev.Bundle
	}
	s.keep(Disagreement{AuditID: ev.ID, Time: ev.Time, Server: ev.Server, Tool: ev.Tool, Method: ev.Method,
		Active: active, Shadow: *sh.Bundle, ActiveAction: job.active, ShadowAction: sh.Action,
		ActiveRule: ev.Rule, ShadowRule: d.Rule, Rule: rule, Stage: stage})
}

func (s *Shadow) keep(d Disagreement) {
	s.recentMu.Lock()
	defer s.recentMu.Unlock()
	if len(s.recent) < s.o.Keep {
		s.recent = append(s.recent, d)
		return
	}
	s.recent[s.next] = d
	s.next = (s.next + 1) % s.o.Keep
}

// Disagreements returns up to limit of the most recent disagreements, newest first (limit <= 0:
// all kept).
func (s *Shadow) Disagreements(limit int) []Disagreement {
	s.recentMu.Lock()
	defer s.recentMu.Unlock()
	n := len(s.recent)
	if limit <= 0 || limit > n {
		limit = n
	}
	out := make([]Disagreement, 0, limit)
	for i := range limit {
		j := (s.next - 1 - i + 2*n) % n // the newest is just before next (next is 0 while filling)
		out = append(out, s.recent[j])
	}
	return out
}

// Stats returns the shadow's counters and the bundle it judges with.
func (s *Shadow) Stats() ShadowStats {
	st := ShadowStats{Judged: s.judged.Load(), Disagreements: s.disagreed.Load(), Dropped: s.dropped.Load(), Queued: len(s.jobs)}
	if ch := s.slot.Load(); ch != nil {
		st.Loaded, st.Bundle = true, ch.Info()
	}
	return st
}

// Close stops taking calls, judges and records every queued one, and closes the shadow chain;
// it returns ctx's error if ctx ends first (the workers then finish in the background).
func (s *Shadow) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.jobs)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if ch := s.slot.Swap(nil); ch != nil {
		return ch.CloseWhenDrained(ctx)
	}
	return nil
}

// ownAction is a bundle's own action on a request, before a person, a judge or a fallback
// resolves it: the merged action, with no opinion resolved to the bundle's default (and to
// allow for a method that is not always judged, as Engine.Request does). Comparing two
// bundles' own actions says whether they disagree about the call, whoever was asked after.
func ownAction(ch *chain.Chain, d *chain.Decision, judged bool) string {
	switch {
	case d.Default && !judged:
		return abi.ActionAllow
	case d.Action == abi.ActionNone || d.Action == "":
		return ch.DefaultAction()
	}
	return d.Action
}
