package main

import (
	"math"
	"strings"
	"testing"
)

const scrape1 = `# TYPE palisade_stage_duration_seconds histogram
palisade_stage_duration_seconds_bucket{action="allow",phase="request",stage="rules",le="0.0001"} 2
palisade_stage_duration_seconds_bucket{action="allow",phase="request",stage="rules",le="0.00025"} 4
palisade_stage_duration_seconds_bucket{action="allow",phase="request",stage="rules",le="+Inf"} 4
palisade_stage_duration_seconds_sum{action="allow",phase="request",stage="rules"} 0.0004
palisade_stage_duration_seconds_count{action="allow",phase="request",stage="rules"} 4
palisade_stage_duration_seconds_bucket{action="deny",phase="request",stage="rules",le="0.0001"} 0
palisade_stage_duration_seconds_bucket{action="deny",phase="request",stage="rules",le="0.00025"} 0
palisade_stage_duration_seconds_bucket{action="deny",phase="request",stage="rules",le="+Inf"} 0
palisade_stage_duration_seconds_sum{action="deny",phase="request",stage="rules"} 0
palisade_stage_duration_seconds_count{action="deny",phase="request",stage="rules"} 0
palisade_upstream_duration_seconds_count{server="x",outcome="ok"} 9
`

const scrape2 = `palisade_stage_duration_seconds_bucket{action="allow",phase="request",stage="rules",le="0.0001"} 2
palisade_stage_duration_seconds_bucket{action="allow",phase="request",stage="rules",le="0.00025"} 12
palisade_stage_duration_seconds_bucket{action="allow",phase="request",stage="rules",le="+Inf"} 14
palisade_stage_duration_seconds_sum{action="allow",phase="request",stage="rules"} 0.0044
palisade_stage_duration_seconds_count{action="allow",phase="request",stage="rules"} 14
`

func TestStageDelta(t *testing.T) {
	before, err := parseStages(strings.NewReader(scrape1))
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseStages(strings.NewReader(scrape2))
	if err != nil {
		t.Fatal(err)
	}
	d := stageDelta(before, after)[stageKey{"rules", "request"}]
	if d == nil || d.count != 10 || math.Abs(d.sum-0.004) > 1e-12 {
		t.Fatalf("delta = %+v, want count 10 and sum 0.004", d)
	}
	// 8 of the 10 new calls fell in (100µs, 250µs], 2 above: the median is 5/8 of that bucket.
	for _, tc := range []struct {
		q, want float64
	}{
		{0.5, 100e-6 + 150e-6*5/8},
		{0.99, 250e-6}, // in +Inf: the highest finite bound
	} {
		if got := d.quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if q := (&histogram{}).quantile(0.5); !math.IsNaN(q) {
		t.Errorf("empty quantile = %v, want NaN", q)
	}
}

// TestOverheadParsed: the gateway's own time (palisade_gateway_overhead_seconds) is read as the
// stage "(gateway)" in the phase of its path, summed over servers.
func TestOverheadParsed(t *testing.T) {
	const scrape = `palisade_gateway_overhead_seconds_bucket{path="forwarded",server="a",le="0.0001"} 1
palisade_gateway_overhead_seconds_bucket{path="forwarded",server="a",le="+Inf"} 3
palisade_gateway_overhead_seconds_sum{path="forwarded",server="a"} 0.0009
palisade_gateway_overhead_seconds_count{path="forwarded",server="a"} 3
palisade_gateway_overhead_seconds_bucket{path="forwarded",server="b",le="0.0001"} 1
palisade_gateway_overhead_seconds_bucket{path="forwarded",server="b",le="+Inf"} 1
palisade_gateway_overhead_seconds_sum{path="forwarded",server="b"} 0.00005
palisade_gateway_overhead_seconds_count{path="forwarded",server="b"} 1
palisade_gateway_overhead_seconds_count{path="answered",server="a"} 2
`
	got, err := parseStages(strings.NewReader(scrape1 + scrape))
	if err != nil {
		t.Fatal(err)
	}
	h := got[stageKey{overheadStage, "forwarded"}]
	if h == nil || h.count != 4 || math.Abs(h.sum-0.00095) > 1e-12 || len(h.le) != 2 || h.cum[0] != 2 {
		t.Fatalf("forwarded = %+v, want 4 requests over both servers, 2 of them under 100 µs", h)
	}
	if a := got[stageKey{overheadStage, "answered"}]; a == nil || a.count != 2 {
		t.Fatalf("answered = %+v, want count 2", a)
	}
	if r := got[stageKey{"rules", "request"}]; r == nil || r.count != 4 {
		t.Fatalf("the stages are still read beside it: rules = %+v", r)
	}
}
