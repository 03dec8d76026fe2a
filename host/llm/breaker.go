package llm

import (
	"errors"
	"time"

	"github.com/sony/gobreaker/v2"
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

// errCallFailed is what the breaker is told about a failed call.
var errCallFailed = errors.New("llm: provider call failed")

// breaker is a consecutive-failure circuit breaker (github.com/sony/gobreaker/v2, two-step):
// Failures consecutive failures open it, after Cooldown one probe passes (half-open), and the
// probe's outcome closes or reopens it.
type breaker struct {
	cb *gobreaker.TwoStepCircuitBreaker[struct{}]
}

func newBreaker(o BreakerOptions) *breaker {
	o = o.withDefaults()
	return &breaker{cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		MaxRequests: 1, // one probe at a time while half-open
		Timeout:     o.Cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(o.Failures) },
	})}
}

// allow returns the function that records the outcome of a call the breaker lets through, or
// nil when it refuses the call (open, or half-open with its probe in flight).
func (b *breaker) allow() func(ok bool) {
	done, err := b.cb.Allow()
	if err != nil {
		return nil
	}
	return func(ok bool) {
		if ok {
			done(nil)
		} else {
			done(errCallFailed)
		}
	}
}

func (b *breaker) current() BreakerState {
	switch b.cb.State() {
	case gobreaker.StateOpen:
		return BreakerOpen
	case gobreaker.StateHalfOpen:
		return BreakerHalfOpen
	}
	return BreakerClosed
}
