package llm

import (
	"time"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/hashicorp/golang-lru/v2/expirable"
)

// cache is an LRU of judged answers with a TTL (github.com/hashicorp/golang-lru/v2/expirable,
// which bounds the size and drops expired entries in the background). Each entry also keeps its
// expiry on the Judge's clock (Options.Now), so a hit is fresh by the same clock that decided
// it. A nil cache stores nothing.
type cache struct {
	lru *expirable.LRU[string, cacheEntry]
	ttl time.Duration
	now func() time.Time
}

type cacheEntry struct {
	resp    abi.SampleResponse
	expires time.Time
}

func newCache(size int, ttl time.Duration, now func() time.Time) *cache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	return &cache{lru: expirable.NewLRU[string, cacheEntry](size, nil, ttl), ttl: ttl, now: now}
}

func (c *cache) get(key string) (abi.SampleResponse, bool) {
	if c == nil {
		return abi.SampleResponse{}, false
	}
	e, ok := c.lru.Get(key)
	if !ok {
		return abi.SampleResponse{}, false
	}
	if !c.now().Before(e.expires) {
		c.lru.Remove(key)
		return abi.SampleResponse{}, false
	}
	r := e.resp
	r.Reasons = append([]string(nil), e.resp.Reasons...)
	return r, true
}

func (c *cache) put(key string, resp abi.SampleResponse) {
	if c == nil {
		return
	}
	resp.Reasons = append([]string(nil), resp.Reasons...)
	c.lru.Add(key, cacheEntry{resp: resp, expires: c.now().Add(c.ttl)})
}
