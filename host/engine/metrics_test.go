package engine

import (
	"sync"
	"testing"
	"time"
)

// TestMetricsCachedObservers: the upstream and overhead histograms, looked up once per label
// set and kept, count every observation under its own labels, from many goroutines at once.
func TestMetricsCachedObservers(t *testing.T) {
	m := NewMetrics()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				m.Upstream("a", "ok", time.Millisecond)
				m.Upstream("a", "error", 2*time.Millisecond)
				m.Upstream("b", "ok", time.Millisecond)
				m.Overhead("a", "forwarded", 100*time.Microsecond)
				m.Overhead("b", "answered", 50*time.Microsecond)
			}
		}()
	}
	wg.Wait()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	sums := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			key := f.GetName()
			for _, l := range s.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			if h := s.GetHistogram(); h != nil {
				got[key] = h.GetSampleCount()
				sums[key] = h.GetSampleSum()
			}
		}
	}
	for key, want := range map[string]float64{
		"palisade_upstream_duration_seconds outcome=ok server=a":    200 * 1e-3,
		"palisade_upstream_duration_seconds outcome=error server=a": 200 * 2e-3,
		"palisade_upstream_duration_seconds outcome=ok server=b":    200 * 1e-3,
		"palisade_gateway_overhead_seconds path=forwarded server=a": 200 * 100e-6,
		"palisade_gateway_overhead_seconds path=answered server=b":  200 * 50e-6,
	} {
		if got[key] != 200 {
			t.Errorf("%s: %d observations, want 200", key, got[key])
		}
		if d := sums[key] - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: sum %g, want %g", key, sums[key], want)
		}
	}
	if n := len(got); n != 5 {
		t.Errorf("%d upstream/overhead series, want 5: %v", n, got)
	}
}
