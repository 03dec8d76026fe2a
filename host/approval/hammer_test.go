package approval

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestHammer holds many calls at once while deciders, listers and subscribers run concurrently
// (run with -race): every hold returns exactly the decision made for it and nothing leaks.
func TestHammer(t *testing.T) {
	m, err := New(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	changes, stop := m.Subscribe()
	defer stop()
	const n = 200
	var wg sync.WaitGroup
	results := make([]holdResult, n)
	for i := range n {
		wg.Go(func() {
			r, err := m.Hold(t.Context(), held(fmt.Sprintf("H%03d", i), "s", "t", fmt.Sprintf(`{"i":%d}`, i)))
			results[i] = holdResult{r, err}
		})
	}
	var dg sync.WaitGroup
	for w := range 4 {
		dg.Go(func() {
			for i := w; i < n; i += 4 {
				id := fmt.Sprintf("H%03d", i)
				testenv.Eventually(t, waitLimit, id+" held", listed(m, id))
				action := abi.ActionAllow
				if i%2 == 1 {
					action = abi.ActionDeny
				}
				if err := m.Decide(context.Background(), id, Decision{Action: action, By: fmt.Sprint("w", w)}); err != nil {
					t.Errorf("Decide %s: %v", id, err)
				}
				_ = m.List()
			}
		})
	}
	dg.Wait()
	wg.Wait()
	for i, r := range results {
		want := abi.ActionAllow
		if i%2 == 1 {
			want = abi.ActionDeny
		}
		if r.err != nil || r.res.Action != want || r.res.ID != fmt.Sprintf("H%03d", i) {
			t.Errorf("hold %d = %+v %v, want %s", i, r.res, r.err, want)
		}
	}
	if l := m.List(); len(l) != 0 {
		t.Errorf("%d held calls leaked", len(l))
	}
	if len(changes) == 0 {
		t.Error("subscriber saw no changes")
	}
}
