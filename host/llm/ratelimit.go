package llm

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// bucket is a provider's rate limit (golang.org/x/time/rate): rate calls per second up to
// burst. A nil bucket allows everything. now is injectable for tests.
type bucket struct {
	l   *rate.Limiter
	now func() time.Time
}

func newBucket(r float64, burst int, now func() time.Time) *bucket {
	if r <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = int(math.Max(1, math.Ceil(r)))
	}
	l := rate.NewLimiter(rate.Limit(r), burst)
	l.AllowN(now(), 0) // the bucket starts full at now, not at the zero time
	return &bucket{l: l, now: now}
}

// take spends one token if there is one; it never waits (the judge tries the next provider).
func (b *bucket) take() bool {
	if b == nil {
		return true
	}
	return b.l.AllowN(b.now(), 1)
}
