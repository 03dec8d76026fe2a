package bundle

import (
	"runtime"
	"testing"
)

// TestPoolDefaults: a stage that computes gets half the cores (at least one), a stage granted
// sample at least two; a declared pool wins; the hook's MaxPool caps either; only a stage that
// runs on sampled calls alone starts one instance, not its whole pool.
func TestPoolDefaults(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for _, p := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(p)
		for _, tc := range []struct {
			name string
			s    StageSpec
			max  int
			want int
		}{
			{"computes", StageSpec{}, 0, max(1, p/2)},
			{"infer computes too", StageSpec{Capabilities: []string{"infer"}}, 0, max(1, p/2)},
			{"waits on a model", StageSpec{Capabilities: []string{"kv", "sample"}}, 0, max(2, p)},
			{"declared", StageSpec{Pool: 5}, 0, 5},
			{"declared, hook", StageSpec{Pool: 5}, 1, 1},
			{"default, hook", StageSpec{Capabilities: []string{"sample"}}, 1, 1},
		} {
			if got := poolSize(tc.s, tc.max); got != tc.want {
				t.Errorf("GOMAXPROCS %d, %s: pool %d, want %d", p, tc.name, got, tc.want)
			}
		}
	}
	if w := warm(StageSpec{OnlyOnSample: true, ResolvesSample: true}); w != 1 {
		t.Errorf("only_on_sample stage starts %d instances, want 1", w)
	}
	if w := warm(StageSpec{ResolvesSample: true}); w != 0 {
		t.Errorf("a judge that runs on every call starts %d (0 = its whole pool), want 0", w)
	}
}
