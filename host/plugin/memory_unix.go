//go:build unix

package plugin

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// withLinearMemory makes the instances instantiated under ctx keep their linear memory in an
// anonymous mapping of their own, outside the Go heap (wazero's default is a []byte on it), of
// at most limit bytes (the stage's Spec.MaxPages: stages sharing a module share no runtime-wide
// memory limit, so this is where each stage's cap is kept; memory.grow past it fails):
//
//   - the mapping reserves the module's maximum or limit, whichever is lower (16 MiB by default),
//     as address space only; the kernel backs a page when the guest first touches it, so RSS grows with
//     what the guest uses, as before;
//   - memory.grow only lengthens the slice: no new buffer, no copy, no garbage left for the Go
//     GC, and the Go heap's size (which sets the GC's target, twice the live heap) no longer
//     counts every instance's memory;
//   - closing the instance unmaps it at once.
//
// # Notes
//
// A slice of a closed instance's memory must not be used: the host copies the verdict and every
// host-function request out of guest memory before the instance can be released (direct.go).
func withLinearMemory(ctx context.Context, limit uint64, plugin *atomic.Int64) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		return mapMemory(capacity, min(max, limit), plugin)
	}))
}

// mappedMemory is one instance's linear memory in an anonymous private mapping.
type mappedMemory struct{ r *region }

// region is the mapping, apart from mappedMemory so that a cleanup can unmap it once nothing
// holds the mappedMemory (an instance dropped without Close), never twice.
type region struct {
	mu     sync.Mutex
	buf    []byte        // the whole reservation; nil once unmapped or when mmap failed
	size   uint64        // the length the guest has grown to (counted in linearBytes)
	plugin *atomic.Int64 // the plugin's own count (Stats.LinearBytes); nil = none
}

// add counts delta bytes in the process's total and the plugin's.
func (r *region) add(delta int64) {
	linearBytes.Add(delta)
	if r.plugin != nil {
		r.plugin.Add(delta)
	}
}

// linearBytes is the sum of every live instance's linear memory length in this process.
var linearBytes atomic.Int64

// LinearMemoryBytes reports the linear memory every live plugin instance in this process has
// grown to (bytes; the kernel backs a page once the guest touches it, so resident memory is at
// most this). A Go guest never shrinks its memory: a rise that does not level off is a guest
// whose heap grows. 0 where instances keep their memory on the Go heap (no mmap).
func LinearMemoryBytes() int64 { return linearBytes.Load() }

func mapMemory(_, max uint64, plugin *atomic.Int64) experimental.LinearMemory {
	m := &mappedMemory{r: &region{plugin: plugin}}
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return m // Reallocate fails: the instance cannot start or grow
	}
	m.r.buf = b
	runtime.AddCleanup(m, (*region).unmap, m.r)
	return m
}

// Reallocate returns the first size bytes of the reservation, nil past it.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	if m.r.buf == nil || size > uint64(len(m.r.buf)) {
		return nil
	}
	m.r.add(int64(size) - int64(m.r.size))
	m.r.size = size
	return m.r.buf[:size:size]
}

// Free unmaps the memory; wazero calls it once when the instance closes.
func (m *mappedMemory) Free() { m.r.unmap() }

func (r *region) unmap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf != nil {
		syscall.Munmap(r.buf)
		r.buf = nil
		r.add(-int64(r.size))
		r.size = 0
	}
}
