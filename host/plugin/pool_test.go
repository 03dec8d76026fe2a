package plugin

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// fakeInstance stands in for an instance where only the pool's order and waiting are tested.
type fakeInstance struct{ id int }

func (*fakeInstance) call(context.Context, string, []byte) (uint32, []byte, error) {
	return 0, nil, nil
}
func (*fakeInstance) exports(string) bool   { return false }
func (*fakeInstance) close(context.Context) {}

// fakePool returns a plugin whose pool holds n started instances, all idle, every slot taken,
// released in order 0..n-1.
func fakePool(n int) (*Plugin, []*fakeInstance) {
	p := &Plugin{
		spec:  Spec{Name: "fake", PoolSize: n, Timeout: time.Second, Logger: slog.New(slog.DiscardHandler)},
		idle:  make([]instance, 0, n),
		ready: make(chan struct{}, n),
		slots: make(chan struct{}, n),
		live:  map[instance]struct{}{},
		cold:  map[instance]bool{},
	}
	insts := make([]*fakeInstance, n)
	for i := range n {
		insts[i] = &fakeInstance{id: i}
		p.live[insts[i]] = struct{}{}
		p.release(insts[i])
	}
	return p, insts
}

// TestPoolIsLIFO: a call takes the instance released last, whose memory the previous call left
// in the caches, not the one idle longest.
func TestPoolIsLIFO(t *testing.T) {
	p, insts := fakePool(3)
	ctx := context.Background()
	for want := 2; want >= 0; want-- {
		got, err := p.acquire(ctx, time.Time{})
		if err != nil || got != insts[want] {
			t.Fatalf("acquire = %v (%v), want instance %d", got, err, want)
		}
	}
	// One call at a time: the same instance every time.
	for range 5 {
		p.release(insts[1])
		got, err := p.acquire(ctx, time.Time{})
		if err != nil || got != insts[1] {
			t.Fatalf("acquire = %v (%v), want the instance just released", got, err)
		}
	}
	p.release(insts[0])
	p.release(insts[2])
	if got, _ := p.acquire(ctx, time.Time{}); got != insts[2] {
		t.Fatalf("acquire = %v, want instance 2, released last", got)
	}
	p.release(insts[2])
	p.release(insts[1])
	if n := p.Trim(); n != 3 {
		t.Fatalf("Trim closed %d, want 3", n)
	}
	if n := len(p.slots); n != 3 {
		t.Fatalf("%d free slots after Trim, want 3", n)
	}
}

// TestPoolWaits: with every instance busy and no free slot, a call waits for a release (and
// gets that instance), or gives up when its context ends or its deadline passes.
func TestPoolWaits(t *testing.T) {
	p, insts := fakePool(1)
	ctx := context.Background()
	held, err := p.acquire(ctx, time.Time{})
	if err != nil || held != insts[0] {
		t.Fatal(held, err)
	}
	if _, err := p.acquire(ctx, time.Now().Add(20*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline: %v, want context.DeadlineExceeded", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := p.acquire(cctx, time.Time{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("context ended: %v, want its error", err)
	}
	got := make(chan instance, 1)
	go func() {
		inst, err := p.acquire(ctx, time.Now().Add(10*time.Second))
		if err != nil {
			t.Error(err)
		}
		got <- inst
	}()
	// Give the waiter time to block; were it not yet waiting, the release would still hand it
	// the instance, so the sleep only makes the wait likely, never the result.
	time.Sleep(10 * time.Millisecond)
	p.release(held)
	select {
	case inst := <-got:
		if inst != held {
			t.Fatalf("waiter got %v, want the released instance", inst)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not served by the release")
	}
	p.release(held)
	p.closed.Store(true)
	if _, err := p.acquire(ctx, time.Time{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v, want ErrClosed", err)
	}
}

// TestPoolHammer: many goroutines acquiring and releasing never get one instance twice at once
// and leave every instance idle.
func TestPoolHammer(t *testing.T) {
	p, insts := fakePool(4)
	var busy sync.Map
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 500 {
				inst, err := p.acquire(context.Background(), time.Now().Add(10*time.Second))
				if err != nil {
					t.Error(err)
					return
				}
				if _, dup := busy.LoadOrStore(inst, true); dup {
					t.Error("one instance handed to two calls")
				}
				busy.Delete(inst)
				p.release(inst)
			}
		})
	}
	wg.Wait()
	if len(p.idle) != len(insts) || len(p.ready) != len(insts) {
		t.Fatalf("%d idle, %d ready tokens; want %d", len(p.idle), len(p.ready), len(insts))
	}
}
