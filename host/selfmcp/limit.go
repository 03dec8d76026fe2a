package selfmcp

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits are calls per minute per principal (per caller where there is none) per tool; a zero
// field takes its default. The burst is the same number: a quiet caller may spend a minute's
// worth at once.
type Limits struct {
	CheckIntent       int // 0 = 100
	ReportAction      int // 0 = 1000
	GetPolicy         int // 0 = 600
	RequestPermission int // 0 = 10
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
	if l.RequestPermission <= 0 {
		l.RequestPermission = 10
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
	case ToolRequestPermission:
		return l.RequestPermission
	}
	return 0
}

// limiter keeps one rate.Limiter per (principal, tool).
type limiter struct {
	mu      sync.Mutex
	limits  Limits
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	l    *rate.Limiter
	last time.Time
}

func (l *limiter) allow(who, tool string) bool {
	n := l.limits.of(tool)
	if n == 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) > 100_000 {
		// Forget idle callers (their buckets are full again) rather than grow without bound.
		for k, b := range l.buckets {
			if now.Sub(b.last) > time.Minute {
				delete(l.buckets, k)
			}
		}
	}
	k := who + "\x00" + tool
	b, ok := l.buckets[k]
	if !ok {
		b = &bucket{l: rate.NewLimiter(rate.Limit(float64(n)/60), n)}
		l.buckets[k] = b
	}
	b.last = now
	return b.l.AllowN(now, 1)
}
