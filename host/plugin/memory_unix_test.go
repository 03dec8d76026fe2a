//go:build unix

package plugin

import "testing"

func TestMappedMemory(t *testing.T) {
	const page = 64 << 10
	m := mapMemory(page, 4*page)
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
	m.Free()
	m.Free() // wazero frees once; a second call is harmless
	if m.Reallocate(page) != nil {
		t.Error("Reallocate after Free succeeded")
	}
}
