package bus_test

import (
	"bytes"
	"testing"

	"github.com/added060/palisade/host/bus"
)

// BenchmarkSign is the cost of one audit event signature (a 600-byte event).
func BenchmarkSign(b *testing.B) {
	ids, err := bus.EnsureKeys(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	id, data := ids[bus.RoleGateway], bytes.Repeat([]byte("x"), 600)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := id.Sign(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is what audit tail pays per event.
func BenchmarkVerify(b *testing.B) {
	ids, err := bus.EnsureKeys(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	id, data := ids[bus.RoleGateway], bytes.Repeat([]byte("x"), 600)
	sig, _ := id.Sign(data)
	b.ReportAllocs()
	for b.Loop() {
		if !bus.Verify(id.PublicKey(), data, sig) {
			b.Fatal("bad signature")
		}
	}
}
