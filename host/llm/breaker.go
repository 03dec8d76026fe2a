package llm

import (
	"sync"
	"time"
)

// BreakerState is a circuit breaker's state.
type BreakerState int

// Breaker states.
const (
	BreakerClosed   BreakerState = iota // calls pass; failures are counted
	BreakerOpen                         // calls are refused until the cooldown ends
	BreakerHalfOpen                     // one probe call passes; its outcome closes or reopens
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return "unknown"
}

// BreakerOptions configures the per-provider circuit breaker.
type BreakerOptions struct {
	Failures int           `yaml:"failures" json:"failures"` // consecutive failures that open the breaker; 0 = 5
	Cooldown time.Duration `yaml:"cooldown" json:"cooldown"` // how long it stays open before a probe; 0 = 30s
}

func (o BreakerOptions) withDefaults() BreakerOptions {
	if o.Failures <= 0 {
		o.Failures = 5
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 30 * time.Second
	}
	return o
}

// breaker is a consecutive-failure circuit breaker. now is injectable for tests.
type breaker struct {
	opts BreakerOptions
	now  func() time.Time

	mu       sync.Mutex
	state    BreakerState
	fails    int
	openedAt time.Time
	probing  bool // a half-open probe is in flight
}

func newBreaker(o BreakerOptions, now func() time.Time) *breaker {
	return &breaker{opts: o.withDefaults(), now: now}
}

// allow reports whether a call may go ahead; in half-open only one probe at a time may.
func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		if b.now().Sub(b.openedAt) < b.opts.Cooldown {
			return false
		}
		b.state = BreakerHalfOpen
		b.probing = true
		return true
	case BreakerHalfOpen:
		if b.probing {
			return false
		}
		b.probing = true
		return true
	}
	return true
}

// done records a call's outcome.
func (b *breaker) done(ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if ok {
		b.state = BreakerClosed
		b.fails = 0
		return
	}
	b.fails++
	if b.state == BreakerHalfOpen || b.fails >= b.opts.Failures {
		b.state = BreakerOpen
		b.openedAt = b.now()
	}
}

func (b *breaker) current() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerOpen && b.now().Sub(b.openedAt) >= b.opts.Cooldown {
		return BreakerHalfOpen
	}
	return b.state
}
