//go:build unix

package plugin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestMappedMemory(t *testing.T) {
	const page = 64 << 10
	before := LinearMemoryBytes()
	var own atomic.Int64
	m := mapMemory(page, 4*page, &own)
	b := m.Reallocate(page)
	if len(b) != page {
		t.Fatalf("Reallocate(1 page) = %d bytes", len(b))
	}
	b[page-1] = 7
	g := m.Reallocate(4 * page)
	if len(g) != 4*page || &g[0] != &b[0] || g[page-1] != 7 {
		t.Fatalf("grown memory moved or lost its contents (len %d)", len(g))
	}
	g[4*page-1] = 1 // the whole reservation is writable
	if m.Reallocate(4*page+1) != nil {
		t.Error("Reallocate past the maximum succeeded")
	}
	if got := LinearMemoryBytes() - before; got != 4*page {
		t.Errorf("LinearMemoryBytes grew by %d, want %d", got, 4*page)
	}
	if got := own.Load(); got != 4*page {
		t.Errorf("the plugin's count is %d, want %d", got, 4*page)
	}
	m.Free()
	m.Free() // wazero frees once; a second call is harmless
	if m.Reallocate(page) != nil {
		t.Error("Reallocate after Free succeeded")
	}
	if got := LinearMemoryBytes() - before; got != 0 {
		t.Errorf("LinearMemoryBytes after Free is %d over its start, want 0", got)
	}
	if got := own.Load(); got != 0 {
		t.Errorf("the plugin's count after Free is %d, want 0", got)
	}
}

// A memory nothing holds any more is unmapped by its cleanup, once.
func TestMappedMemoryCleanup(t *testing.T) {
	m := mapMemory(0, 64<<10, nil).(*mappedMemory)
	r := m.r
	m.Reallocate(64 << 10)[0] = 1
	m = nil
	for i := 0; i < 50; i++ {
		runtime.GC()
		r.mu.Lock()
		done := r.buf == nil
		r.mu.Unlock()
		if done {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the cleanup did not unmap an unreachable memory")
}
