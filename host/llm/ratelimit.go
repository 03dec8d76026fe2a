package llm

import (
	"math"
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens per second up to burst. A nil bucket allows everything.
type bucket struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int, now func() time.Time) *bucket {
	if rate <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = int(math.Max(1, math.Ceil(rate)))
	}
	return &bucket{rate: rate, burst: float64(burst), now: now, tokens: float64(burst), last: now()}
}

// take spends one token if there is one; it never waits (the judge tries the next provider).
func (b *bucket) take() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.now()
	b.tokens = math.Min(b.burst, b.tokens+t.Sub(b.last).Seconds()*b.rate)
	b.last = t
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
