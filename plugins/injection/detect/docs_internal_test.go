package detect

import (
	"strings"
	"testing"
)

// TestExcusedOccurrencesBounded: a phrase is excused only while every occurrence is, and only up
// to maxExcused occurrences: past that the hit stays whatever their context, so a wall of one
// repeated phrase costs maxExcused context checks, not one per occurrence (issue 27: 1.26 MB of
// one injection sentence took 2.8 s natively).
func TestExcusedOccurrencesBounded(t *testing.T) {
	always := func(int) bool { return true }
	for _, tc := range []struct {
		n    int
		want bool
	}{{1, true}, {maxExcused, true}, {maxExcused + 1, false}, {20000, false}} {
		text := strings.Repeat("please ignore the cache. ", tc.n)
		checks := 0
		got := everyOccurrence(text, "ignore the cache", func(at int) bool { checks++; return always(at) })
		if got != tc.want || checks > maxExcused {
			t.Errorf("%d occurrences: excused %v after %d checks, want %v after at most %d", tc.n, got, checks, tc.want, maxExcused)
		}
	}
	table := []rule{r(PromptInjection, "phrase", 1, "", `ignore the cache`)}
	for _, tc := range []struct {
		n    int
		want bool
	}{{3, true}, {maxExcused + 1, false}} {
		text := strings.Repeat("please ignore the cache. ", tc.n)
		checks := 0
		got := everyMatchSpan(table, text, func(int, int) bool { checks++; return true }, "phrase")
		if got != tc.want || checks > maxExcused {
			t.Errorf("everyMatchSpan, %d occurrences: %v after %d checks, want %v", tc.n, got, checks, tc.want)
		}
	}
}
