package testenv

import (
	"testing"
	"time"
)

func TestLatenciesPercentile(t *testing.T) {
	var l Latencies
	if got := l.Percentile(50); got != 0 {
		t.Fatalf("empty Percentile(50) = %v, want 0", got)
	}
	for i := 100; i >= 1; i-- {
		l.Add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		p    int
		want time.Duration
	}{{50, 51 * time.Millisecond}, {99, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := l.Percentile(tc.p); got != tc.want {
			t.Errorf("Percentile(%d) = %v, want %v", tc.p, got, tc.want)
		}
	}
}
