package audit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/added060/palisade/host/audit"
)

type counter struct {
	mu  sync.Mutex
	evs []audit.Event
}

func (c *counter) Record(_ context.Context, ev audit.Event) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
}

func TestRingKeepsNewestFillsDefaultsAndPassesOn(t *testing.T) {
	next := &counter{}
	r := audit.NewRing(3, next)
	ch, stop := r.Subscribe()
	defer stop()
	for i := range 5 {
		r.Record(t.Context(), audit.Event{ID: fmt.Sprint(i)})
	}
	r.Record(t.Context(), audit.Event{}) // no id, time or kind
	got := r.Recent(0)
	if len(got) != 3 || got[1].ID != "4" || got[2].ID != "3" {
		t.Fatalf("Recent = %+v, want the new event then ids 4 3", got)
	}
	if ev := got[0]; ev.ID == "" || ev.Time.IsZero() || ev.Kind != audit.KindDecision {
		t.Errorf("defaults not filled: %+v", ev)
	}
	if _, ok := r.Find("0"); ok {
		t.Error("Find returned an event pushed out of the ring")
	}
	if ev, ok := r.Find("4"); !ok || ev.ID != "4" {
		t.Errorf("Find(4) = %+v, %v", ev, ok)
	}
	if len(next.evs) != 6 || next.evs[5].ID != got[0].ID {
		t.Errorf("next got %d events (last %+v), want 6 with the filled id", len(next.evs), next.evs[len(next.evs)-1])
	}
	if len(ch) != 6 {
		t.Errorf("subscriber got %d events, want 6", len(ch))
	}
	if n := len(r.Recent(2)); n != 2 {
		t.Errorf("Recent(2) returned %d", n)
	}
	r.Resize(2)
	if got := r.Recent(0); len(got) != 2 || got[1].ID != "4" {
		t.Errorf("after Resize(2): %+v", got)
	}
	r.Close()
	select {
	case <-r.Done():
	default:
		t.Error("Done not closed by Close")
	}
}

func TestFillDefaultsKeepsWhatIsSet(t *testing.T) {
	ev := audit.Event{ID: "x", Kind: audit.KindApproval}
	ev.FillDefaults()
	if ev.ID != "x" || ev.Kind != audit.KindApproval || ev.Time.IsZero() {
		t.Errorf("FillDefaults = %+v", ev)
	}
	long := audit.Event{ID: string(make([]byte, 300))}
	long.FillDefaults()
	if len(long.ID) > 256 {
		t.Errorf("an id over 256 bytes was kept")
	}
}

// TestRingHammer records, reads, subscribes and resizes from many goroutines (run with -race).
func TestRingHammer(t *testing.T) {
	r := audit.NewRing(16, &counter{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				switch (w + i) % 4 {
				case 0, 1:
					r.Record(t.Context(), audit.Event{})
				case 2:
					_ = r.Recent(5)
				case 3:
					_, stop := r.Subscribe()
					stop()
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			r.Resize(8 + i)
		}
	})
	wg.Wait()
	if n := len(r.Recent(0)); n == 0 || n > 27 {
		t.Errorf("kept %d events after the hammer", n)
	}
}
