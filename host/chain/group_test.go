package chain

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// counting answers a fixed verdict and counts its calls; safe for concurrent use, unlike fixed.
type counting struct {
	v     abi.Verdict
	calls atomic.Int64
}

func (c *counting) Evaluate(context.Context, []byte) ([]byte, error) {
	c.calls.Add(1)
	return json.Marshal(c.v)
}

// A group's stages go to goroutines only as far as cores are idle, the rest run inline: the
// decision and the stage results, in stage order, are the same however the group is spread.
func TestGroupInlineOrFanOut(t *testing.T) {
	for _, procs := range []int{0, 1, 2, 3, 1 << 20} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			actions := []string{"allow", "ask", "none", "deny"}
			var stages []*Stage
			for i, a := range actions {
				stages = append(stages, &Stage{Name: fmt.Sprintf("s%d", i), Request: true, Plugin: &counting{v: abi.Verdict{Action: a, Rule: a}}})
			}
			c, err := New(Options{Stages: stages})
			if err != nil {
				t.Fatal(err)
			}
			c.procs = procs
			d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != "deny" || d.Stage != "s3" || len(d.Stages) != len(actions) {
				t.Fatalf("decision %s by %s with %d results, want deny by s3 with %d", d.Action, d.Stage, len(d.Stages), len(actions))
			}
			for i, r := range d.Stages {
				if r.Stage != stages[i].Name || r.Action != actions[i] {
					t.Errorf("result %d = %s %s, want %s %s", i, r.Stage, r.Action, stages[i].Name, actions[i])
				}
			}
		})
	}
}

// Hammer for -race: concurrent Evaluate calls cross the busy threshold both ways.
func TestGroupHammer(t *testing.T) {
	var evs []*counting
	var stages []*Stage
	for i := range 3 {
		e := &counting{v: abi.Verdict{Action: "allow"}}
		evs = append(evs, e)
		stages = append(stages, &Stage{Name: fmt.Sprintf("s%d", i), Request: true, Plugin: e})
	}
	c, err := New(Options{Stages: stages})
	if err != nil {
		t.Fatal(err)
	}
	c.procs = 4
	const callers, calls = 16, 200
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range calls {
				d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "x"})
				if err != nil || d.Action != "allow" || len(d.Stages) != 3 {
					t.Errorf("Evaluate = %+v, %v", d, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, e := range evs {
		if n := e.calls.Load(); n != callers*calls {
			t.Errorf("stage s%d called %d times, want %d", i, n, callers*calls)
		}
	}
	if n := c.inflight.Load(); n != 0 {
		t.Errorf("inflight = %d after all calls returned", n)
	}
}

// A helper that starts only after the caller has taken every stage runs none, and the caller
// does not wait for it: at c=1 on a busy machine the group costs what running it inline does.
func TestGroupWorkLateHelper(t *testing.T) {
	w := newGroupWork(3)
	var ran [3]int
	w.run(func(i int) { ran[i]++ }) // no helper has started
	if ran != [3]int{1, 1, 1} {
		t.Fatalf("caller ran %v, want every stage once", ran)
	}
	w.help(func(i int) { t.Errorf("late helper ran stage %d", i) })
}

// A helper that starts while the caller is busy takes stages from the back, each once, and the
// caller waits for them.
func TestGroupWorkHelperTakesFromTheBack(t *testing.T) {
	w := newGroupWork(4)
	var mu sync.Mutex
	var helped []int
	both := make(chan struct{})
	go w.help(func(i int) {
		mu.Lock()
		helped = append(helped, i)
		if len(helped) == 2 {
			close(both)
		}
		mu.Unlock()
	})
	var caller []int
	w.run(func(i int) {
		caller = append(caller, i)
		if i == 0 {
			<-both // the helper takes 3, then 2, while the caller runs 0
		}
	})
	mu.Lock()
	defer mu.Unlock()
	// Stage 1 goes to whichever asks first once the caller is released.
	ran := map[int]int{}
	for _, i := range append(slices.Clone(caller), helped...) {
		ran[i]++
	}
	if caller[0] != 0 || helped[0] != 3 || helped[1] != 2 || len(ran) != 4 || len(caller)+len(helped) != 4 {
		t.Fatalf("caller ran %v and the helper %v, want 0 first on the caller, 3 then 2 on the helper, each stage once", caller, helped)
	}
}

// TestFanOutNeedsFourCores: a chain built with fewer than minFanOutProcs cores runs every group
// inline (procs 0); with more, it may spread a group over the idle ones.
func TestFanOutNeedsFourCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, want int }{{1, 0}, {2, 0}, {3, 0}, {4, 4}, {16, 16}} {
		runtime.GOMAXPROCS(tc.procs)
		c, err := New(Options{Stages: []*Stage{{Name: "a", Request: true, Plugin: working{}}}})
		if err != nil {
			t.Fatal(err)
		}
		if c.procs != tc.want {
			t.Errorf("GOMAXPROCS %d: procs %d, want %d", tc.procs, c.procs, tc.want)
		}
	}
}

// seq answers a verdict whose rule names the call: the n-th call's rule is "<name>#n".
type seq struct {
	name string
	n    atomic.Int64
}

func (s *seq) Evaluate(context.Context, []byte) ([]byte, error) {
	return json.Marshal(abi.Verdict{Action: "allow", Rule: fmt.Sprintf("%s#%d", s.name, s.n.Add(1))})
}

// Each Evaluate decodes its stages' verdicts into memory of its own (one slot a stage, across
// groups): a later Evaluate, sequential or concurrent, never writes into an earlier decision's
// verdicts, and no two results of one decision share a slot.
func TestVerdictSlotsNotShared(t *testing.T) {
	for _, procs := range []int{0, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			var stages []*Stage
			for i := range 4 {
				// s2 reads earlier verdicts: two groups, two stages each.
				stages = append(stages, &Stage{Name: fmt.Sprintf("s%d", i), Request: true, NeedsPrior: i == 2, Plugin: &seq{name: fmt.Sprintf("s%d", i)}})
			}
			c, err := New(Options{Stages: stages})
			if err != nil {
				t.Fatal(err)
			}
			c.procs = procs
			eval := func() *Decision {
				d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "x"})
				if err != nil || len(d.Stages) != len(stages) {
					t.Fatalf("Evaluate = %+v, %v", d, err)
				}
				return d
			}
			check := func(d *Decision, call int) {
				t.Helper()
				seen := map[*abi.Verdict]bool{}
				for i, r := range d.Stages {
					if r.Verdict == nil || seen[r.Verdict] {
						t.Fatalf("call %d: result %d verdict %p nil or shared", call, i, r.Verdict)
					}
					seen[r.Verdict] = true
					if want := fmt.Sprintf("s%d#%d", i, call); r.Verdict.Rule != want || r.Rule != want {
						t.Errorf("call %d: result %d rule %q (verdict %q), want %q", call, i, r.Rule, r.Verdict.Rule, want)
					}
				}
			}
			first := eval()
			check(first, 1)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() { eval() })
			}
			wg.Wait()
			second := eval()
			check(first, 1) // untouched by the ten calls since
			for i := range second.Stages {
				if second.Stages[i].Verdict == first.Stages[i].Verdict {
					t.Errorf("result %d: two decisions share a verdict slot", i)
				}
			}
		})
	}
}

// newDecision's room: stages empty with capacity n (filling it never regrows into another
// decision's memory), n verdict slots of its own, two decisions never share either, and up to
// 12 stages it is one allocation.
func TestNewDecisionRoom(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 6, 7, 8, 11, 12, 13, 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			d1, st1, v1 := newDecision(n)
			d2, st2, v2 := newDecision(n)
			if len(st1) != 0 || cap(st1) != n || len(v1) != n || cap(v1) != n {
				t.Fatalf("stages len %d cap %d, verdicts len %d cap %d; want 0, %d, %d, %d", len(st1), cap(st1), len(v1), cap(v1), n, n, n)
			}
			if d1 == d2 || d1.Stages != nil {
				t.Fatalf("decisions %p %p, Stages %v: want two, with no Stages until set", d1, d2, d1.Stages)
			}
			for i := range n {
				st1 = append(st1, abi.StageResult{Stage: "a" + strconv.Itoa(i)})
				st2 = append(st2, abi.StageResult{Stage: "b" + strconv.Itoa(i)})
				v1[i].Reason, v2[i].Reason = "one", "two"
			}
			if n > 0 && (&st1[0] == &st2[0] || &v1[0] == &v2[0]) {
				t.Fatal("two decisions share their room")
			}
			for i := range n {
				if st1[i].Stage != "a"+strconv.Itoa(i) || v1[i].Reason != "one" || v2[i].Reason != "two" {
					t.Fatalf("slot %d overwritten: %q %q %q", i, st1[i].Stage, v1[i].Reason, v2[i].Reason)
				}
			}
			if cap(st1) != n {
				t.Fatalf("filling the stages regrew them: cap %d, want %d", cap(st1), n)
			}
			if n <= 12 {
				if a := testing.AllocsPerRun(50, func() { newDecision(n) }); a != 1 {
					t.Errorf("newDecision(%d) allocates %v times, want 1", n, a)
				}
			}
		})
	}
}
