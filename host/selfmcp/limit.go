package selfmcp

import (
	"sync"
	"time"
)

// Limits are calls per minute per caller; a zero field takes its default.
type Limits struct {
	CheckIntent  int // 0 = 100
	ReportAction int // 0 = 1000
	GetPolicy    int // 0 = 600
}

func (l Limits) withDefaults() Limits {
	if l.CheckIntent <= 0 {
		l.CheckIntent = 100
	}
	if l.ReportAction <= 0 {
		l.ReportAction = 1000
	}
	if l.GetPolicy <= 0 {
		l.GetPolicy = 600
	}
	return l
}

func (l Limits) of(tool string) int {
	switch tool {
	case ToolCheckIntent:
		return l.CheckIntent
	case ToolReportAction:
		return l.ReportAction
	case ToolGetPolicy:
		return l.GetPolicy
	}
	return 0
}

// limiter is a token bucket per (caller, tool): capacity = the per-minute limit, refilled
// continuously at limit/minute.
type limiter struct {
	mu      sync.Mutex
	limits  Limits
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func (l *limiter) allow(caller, tool string) bool {
	n := l.limits.of(tool)
	if n == 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) > 100_000 {
		// Forget idle callers rather than grow without bound.
		for k, b := range l.buckets {
			if now.Sub(b.last) > time.Minute {
				delete(l.buckets, k)
			}
		}
	}
	k := caller + "\x00" + tool
	b, ok := l.buckets[k]
	if !ok {
		b = &bucket{tokens: float64(n), last: now}
		l.buckets[k] = b
	}
	b.tokens = min(float64(n), b.tokens+now.Sub(b.last).Minutes()*float64(n))
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
