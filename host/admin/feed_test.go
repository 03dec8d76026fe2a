package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/sdk/go/abi"
)

func TestPercentiles(t *testing.T) {
	for _, tc := range []struct {
		name          string
		xs            []int64
		p50, p90, p99 int64
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []int64{7}, 7, 7, 7},
		{"ten", []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 5, 9, 10},
		{"hundred", func() []int64 {
			var xs []int64
			for i := int64(100); i >= 1; i-- {
				xs = append(xs, i)
			}
			return xs
		}(), 50, 90, 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p50, p90, p99 := percentiles(tc.xs)
			if p50 != tc.p50 || p90 != tc.p90 || p99 != tc.p99 {
				t.Errorf("percentiles = %d %d %d, want %d %d %d", p50, p90, p99, tc.p50, tc.p90, tc.p99)
			}
		})
	}
}

// sink is the next recorder in the chain (the audit publisher in the gateway).
type sink struct{ n int }

func (s *sink) Record(context.Context, audit.Event) { s.n++ }

func TestFeedCountsAndServesTheSharedRing(t *testing.T) {
	next := &sink{}
	// The gateway's order: the feed counts, the shared ring keeps, the publisher (next) sends.
	ring := audit.NewRing(3, next)
	f := NewFeed(FeedOptions{Ring: ring, Next: ring})
	ch, stop := f.Ring().Subscribe()
	defer stop()
	for i := range 5 {
		f.Record(t.Context(), audit.Event{ID: fmt.Sprint(i), Bundle: &audit.Bundle{Digest: "d"},
			Stages: []abi.StageResult{{Stage: "rules", Action: "deny", LatencyUS: int64(i)}}})
	}
	got := f.Ring().Recent(0)
	if len(got) != 3 || got[0].ID != "4" || got[2].ID != "2" {
		t.Errorf("Recent = %v, want ids 4 3 2", got)
	}
	if _, ok := f.Ring().Find("0"); ok {
		t.Error("Find returned an event pushed out of the ring")
	}
	if next.n != 5 {
		t.Errorf("next got %d events, want 5", next.n)
	}
	if len(ch) != 5 {
		t.Errorf("subscriber got %d events, want 5", len(ch))
	}
	s := f.Stats()
	s.mu.Lock()
	calls := s.stages["rules"].calls
	s.mu.Unlock()
	if calls != 5 {
		t.Errorf("stats counted %d calls, want 5", calls)
	}
	// A new bundle starts the counts afresh.
	f.Record(t.Context(), audit.Event{Bundle: &audit.Bundle{Digest: "e"}, Stages: []abi.StageResult{{Stage: "rules", Action: "allow"}}})
	s.mu.Lock()
	calls = s.stages["rules"].calls
	s.mu.Unlock()
	if calls != 1 {
		t.Errorf("after a new digest: %d calls, want 1", calls)
	}
}
