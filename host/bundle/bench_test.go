package bundle_test

import (
	"context"
	"testing"
	"time"

	"github.com/added060/palisade/host/internal/testenv"
)

// BenchmarkActivate measures one activation of a two-stage rules bundle (stage a private copy,
// verify signature and pins, build with a warm compilation cache, run fixtures, swap), swapping
// between two bundles so that none is a no-op.
func BenchmarkActivate(b *testing.B) {
	f := newFixture(b, false)
	dirs := []string{
		f.signed(b, "alpha", "1.0.0", alphaStages(), "allow"),
		f.signed(b, "beta", "2.0.0", betaStages(), "deny"),
	}
	ctx := context.Background()
	if _, _, err := f.m.Activate(ctx, dirs[1], "bench"); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, _, err := f.m.Activate(ctx, dirs[i%2], "bench"); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	testenv.Latencies(lat).Report(b, "", "-ms", time.Millisecond)
}
