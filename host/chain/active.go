package chain

import "sync/atomic"

// Active holds the chain a gateway serves with. The zero value holds none.
type Active struct {
	p atomic.Pointer[Chain]
}

// Acquire returns the current chain with a reference held, and the func that releases it. A
// request uses one chain for both phases, so one bundle decides it. It returns nil if no chain
// is active.
func (a *Active) Acquire() (*Chain, func()) {
	for {
		c := a.p.Load()
		if c == nil {
			return nil, func() {}
		}
		if c.acquire() {
			return c, c.release
		}
		// Lost a race with a swap: the new chain is already stored.
	}
}

// Load returns the current chain without taking a reference (for reading its Info).
func (a *Active) Load() *Chain { return a.p.Load() }

// Swap installs next and returns the previous chain (nil if none); the caller closes it with
// CloseWhenDrained.
func (a *Active) Swap(next *Chain) *Chain { return a.p.Swap(next) }
