package testenv

import (
	"slices"
	"testing"
	"time"
)

// Latencies collects per-operation durations in a benchmark and reports their median and 99th
// percentile with b.ReportMetric, so every benchmark computes percentiles the same way.
//
// # Notes
//
// The percentile is the nearest rank below (index n/2 and n*99/100 of the sorted samples), the
// rule the hand-written copies used, and metric names are the callers' own, so results stay
// comparable with earlier runs; values are no longer truncated to whole units first.
//
// Latencies is a slice, so a benchmark that already collects a []time.Duration may convert it:
// testenv.Latencies(lat).Report(...). Percentile and Report sort the samples in place.
type Latencies []time.Duration

// Add records one sample.
func (l *Latencies) Add(d time.Duration) { *l = append(*l, d) }

// Len reports how many samples were recorded.
func (l Latencies) Len() int { return len(l) }

// Percentile returns the sample at rank n*p/100 of the sorted samples (0 <= p < 100), or 0 when
// none were recorded.
func (l Latencies) Percentile(p int) time.Duration {
	if len(l) == 0 {
		return 0
	}
	slices.Sort(l)
	return l[len(l)*p/100]
}

// Report reports the median and 99th percentile as the metrics prefix+"p50"+suffix and
// prefix+"p99"+suffix, in multiples of unit (e.g. Report(b, "", "-µs", time.Microsecond) reports
// "p50-µs" and "p99-µs"). It reports nothing when no sample was recorded.
func (l Latencies) Report(b *testing.B, prefix, suffix string, unit time.Duration) {
	b.Helper()
	if len(l) == 0 {
		return
	}
	b.ReportMetric(float64(l.Percentile(50))/float64(unit), prefix+"p50"+suffix)
	b.ReportMetric(float64(l.Percentile(99))/float64(unit), prefix+"p99"+suffix)
}
