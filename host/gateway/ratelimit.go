package gateway

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/selfmcp"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/glob"
)

// callLimiter is limits.per_principal and limits.tools on the HTTP endpoint: one rate.Limiter
// per principal (per principal and tool for a tools entry). Callers without a principal (no
// authn:) share the budget of "anonymous".
type callLimiter struct {
	per   *config.RateLimit
	tools []config.ToolRateLimit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*limitBucket
}

type limitBucket struct {
	l    *rate.Limiter
	last time.Time
}

// newCallLimiter is nil when limits: sets no rate.
func newCallLimiter(l config.Limits) *callLimiter {
	if l.PerPrincipal == nil && len(l.Tools) == 0 {
		return nil
	}
	return &callLimiter{per: l.PerPrincipal, tools: l.Tools, now: time.Now, buckets: map[string]*limitBucket{}}
}

func burstOf(perMinute float64, burst int) int {
	if burst > 0 {
		return burst
	}
	return max(1, int(perMinute))
}

func (c *callLimiter) allow(key string, perMinute float64, burst int) bool {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.buckets) > 100_000 {
		for k, b := range c.buckets {
			if now.Sub(b.last) > 10*time.Minute {
				delete(c.buckets, k)
			}
		}
	}
	b, ok := c.buckets[key]
	if !ok {
		b = &limitBucket{l: rate.NewLimiter(rate.Limit(perMinute/60), burstOf(perMinute, burst))}
		c.buckets[key] = b
	}
	b.last = now
	return b.l.AllowN(now, 1)
}

// check is proxy.HTTPOptions.RateLimit: nil, or a CodeRateLimited error naming the limit.
func (c *callLimiter) check(env *abi.Envelope) *mcp.Error {
	who := approval.PrincipalKey(env.Principal)
	if who == "" {
		who = "anonymous"
	}
	for i, t := range c.tools {
		if !glob.Match(t.Tool, env.Tool) || t.Server != "" && !glob.Match(t.Server, env.Server) {
			continue
		}
		if c.allow(fmt.Sprintf("tool%d\x00%s\x00%s\x00%s", i, who, env.Server, env.Tool), t.PerMinute, t.Burst) {
			return nil
		}
		return mcp.NewError(mcp.CodeRateLimited, fmt.Sprintf("rate limit: limits.tools[%d] (%s) allows %g calls per minute (burst %d) per principal and tool; %s is over it, retry later",
			i, t.Tool, t.PerMinute, burstOf(t.PerMinute, t.Burst), who), nil)
	}
	if c.per == nil || c.allow("principal\x00"+who, c.per.PerMinute, c.per.Burst) {
		return nil
	}
	return mcp.NewError(mcp.CodeRateLimited, fmt.Sprintf("rate limit: limits.per_principal allows %g calls per minute (burst %d) per principal; %s is over it, retry later",
		c.per.PerMinute, burstOf(c.per.PerMinute, c.per.Burst), who), nil)
}

// selfLimits are the own MCP server's limits from limits.self.
func (g *Gateway) selfLimits() selfmcp.Limits {
	s := g.cfg.Limits.Self
	return selfmcp.Limits{CheckIntent: s.CheckIntent, RequestPermission: s.RequestPermission, ReportAction: s.ReportAction, GetPolicy: s.GetPolicy}
}
