//go:build !unix

package plugin

import (
	"context"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// withLinearMemory keeps linear memory on the Go heap where there is no mmap (see
// memory_unix.go), as wazero would, but grows it no further than limit bytes: the stage's cap
// (Spec.MaxPages), which stages sharing a module cannot set on their shared runtime.
func withLinearMemory(ctx context.Context, limit uint64, _ *atomic.Int64) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		return &heapMemory{buf: make([]byte, 0, min(capacity, max, limit)), max: min(max, limit)}
	}))
}

// heapMemory is a linear memory on the Go heap, grown by append, capped at max bytes.
type heapMemory struct {
	buf []byte
	max uint64
}

// Reallocate returns the memory grown to size bytes, nil past the cap.
func (m *heapMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
	} else {
		m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	}
	return m.buf
}

// Free drops the memory for the Go GC.
func (m *heapMemory) Free() { m.buf = nil }

// LinearMemoryBytes is 0 here: linear memory is on the Go heap (see memory_unix.go).
func LinearMemoryBytes() int64 { return 0 }
