package llm

import (
	"container/list"
	"sync"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// cache is an LRU of judged answers with a TTL. A nil cache stores nothing.
type cache struct {
	size int
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	ll    *list.List // front = most recent
	items map[string]*list.Element
}

type cacheEntry struct {
	key     string
	resp    abi.SampleResponse
	expires time.Time
}

func newCache(size int, ttl time.Duration, now func() time.Time) *cache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	return &cache{size: size, ttl: ttl, now: now, ll: list.New(), items: make(map[string]*list.Element, size)}
}

func (c *cache) get(key string) (abi.SampleResponse, bool) {
	if c == nil {
		return abi.SampleResponse{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return abi.SampleResponse{}, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.ll.Remove(el)
		delete(c.items, key)
		return abi.SampleResponse{}, false
	}
	c.ll.MoveToFront(el)
	r := e.resp
	r.Reasons = append([]string(nil), e.resp.Reasons...)
	return r, true
}

func (c *cache) put(key string, resp abi.SampleResponse) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp.Reasons = append([]string(nil), resp.Reasons...)
	if el, ok := c.items[key]; ok {
		el.Value = &cacheEntry{key: key, resp: resp, expires: c.now().Add(c.ttl)}
		c.ll.MoveToFront(el)
		return
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, resp: resp, expires: c.now().Add(c.ttl)})
	for c.ll.Len() > c.size {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*cacheEntry).key)
	}
}
