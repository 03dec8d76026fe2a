//go:build unix

package plugin

import (
	"context"
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// withLinearMemory makes the instances instantiated under ctx keep their linear memory in an
// anonymous mapping of their own, outside the Go heap (wazero's default is a []byte on it):
//
//   - the mapping reserves the module's maximum (Spec.MaxPages, 16 MiB by default) as address
//     space only; the kernel backs a page when the guest first touches it, so RSS grows with
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
func withLinearMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(mapMemory))
}

// mappedMemory is one instance's linear memory in an anonymous private mapping.
type mappedMemory struct {
	mu  sync.Mutex
	buf []byte // the whole reservation; nil once freed or when mmap failed
}

func mapMemory(_, max uint64) experimental.LinearMemory {
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return &mappedMemory{} // Reallocate fails: the instance cannot start or grow
	}
	return &mappedMemory{buf: b}
}

// Reallocate returns the first size bytes of the reservation, nil past it.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

// Free unmaps the memory; wazero calls it once when the instance closes.
func (m *mappedMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buf != nil {
		syscall.Munmap(m.buf)
		m.buf = nil
	}
}
