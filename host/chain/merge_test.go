package chain

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// fixed is an Evaluator that answers one verdict or fails: enough to table-test the merge
// semantics; real plugins are exercised in plugin_test.go.
type fixed struct {
	v     abi.Verdict
	err   error
	calls int
}

func (f *fixed) Evaluate(context.Context, []byte) ([]byte, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return json.Marshal(f.v)
}

func TestMerge(t *testing.T) {
	v := func(a string) *fixed {
		return &fixed{v: abi.Verdict{Action: a, Reason: a + " reason", Rule: a + "-rule"}}
	}
	fail := &fixed{err: errors.New("boom")}
	for _, tc := range []struct {
		name       string
		stages     []*fixed
		closed     []bool
		def        string
		want       string
		wantStage  string
		wantCalled []int
	}{
		{name: "all none uses default deny", stages: []*fixed{v("none"), v("none")}, want: "deny", wantStage: ""},
		{name: "all none uses default allow", stages: []*fixed{v("none")}, def: "allow", want: "allow"},
		{name: "deny beats allow", stages: []*fixed{v("allow"), v("deny")}, want: "deny", wantStage: "s1"},
		{name: "ask beats allow", stages: []*fixed{v("allow"), v("ask")}, want: "ask", wantStage: "s1"},
		{name: "sample beats allow", stages: []*fixed{v("sample"), v("allow")}, want: "sample", wantStage: "s0"},
		{name: "ask beats sample", stages: []*fixed{v("sample"), v("ask")}, want: "ask", wantStage: "s1"},
		{name: "deny beats ask", stages: []*fixed{v("ask"), v("deny")}, want: "deny", wantStage: "s1"},
		{name: "allow beats none", stages: []*fixed{v("none"), v("allow")}, want: "allow", wantStage: "s1"},
		{name: "first of equal severity decides", stages: []*fixed{v("deny"), v("deny")}, want: "deny", wantStage: "s0"},
		{name: "failure closed denies", stages: []*fixed{v("allow"), fail}, closed: []bool{true, true}, want: "deny", wantStage: "s1"},
		{name: "failure open has no opinion", stages: []*fixed{v("allow"), fail}, closed: []bool{true, false}, want: "allow", wantStage: "s0"},
		{name: "incomplete closed denies", stages: []*fixed{v("allow"), {v: abi.Verdict{Action: "none", Incomplete: true}}}, closed: []bool{true, true}, want: "deny", wantStage: "s1"},
		{name: "incomplete open keeps its verdict", stages: []*fixed{v("allow"), {v: abi.Verdict{Action: "none", Incomplete: true}}}, closed: []bool{true, false}, want: "allow", wantStage: "s0"},
		{name: "incomplete deny stays deny", stages: []*fixed{{v: abi.Verdict{Action: "deny", Incomplete: true}}}, closed: []bool{false}, def: "allow", want: "deny", wantStage: "s0"},
		{name: "bad action counts as failure", stages: []*fixed{{v: abi.Verdict{Action: "maybe"}}}, closed: []bool{false}, def: "allow", want: "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stages []*Stage
			for i, f := range tc.stages {
				fc := true
				if tc.closed != nil {
					fc = tc.closed[i]
				}
				stages = append(stages, &Stage{Name: "s" + string(rune('0'+i)), Plugin: f, Request: true, FailClosed: fc})
			}
			c, err := New(Options{Stages: stages, DefaultAction: tc.def})
			if err != nil {
				t.Fatal(err)
			}
			d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want || d.Stage != tc.wantStage {
				t.Errorf("got %s by %q, want %s by %q (%s)", d.Action, d.Stage, tc.want, tc.wantStage, d.Reason)
			}
			if len(d.Stages) != len(tc.stages) {
				t.Errorf("recorded %d stage results, want %d", len(d.Stages), len(tc.stages))
			}
		})
	}
}

func TestDenyShortCircuitsAndFinalAllow(t *testing.T) {
	deny := &fixed{v: abi.Verdict{Action: "deny"}}
	later := &fixed{v: abi.Verdict{Action: "allow"}}
	c, _ := New(Options{Stages: []*Stage{
		{Name: "a", Plugin: deny, Request: true},
		{Name: "b", Plugin: later, Request: true, NeedsPrior: true},
	}})
	d, _ := c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"})
	if d.Action != "deny" || later.calls != 0 {
		t.Fatalf("deny did not short-circuit: %s, later called %d times", d.Action, later.calls)
	}

	final := &fixed{v: abi.Verdict{Action: "allow", Final: true}}
	detector := &fixed{v: abi.Verdict{Action: "deny"}}
	c, _ = New(Options{Stages: []*Stage{
		{Name: "rules", Plugin: final, Request: true},
		{Name: "det", Plugin: detector, Request: true, NeedsPrior: true},
	}})
	d, _ = c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"})
	if d.Action != "allow" || detector.calls != 0 {
		t.Fatalf("final allow did not end the chain: %s, detector called %d", d.Action, detector.calls)
	}

	notFinal := &fixed{v: abi.Verdict{Action: "allow"}}
	detector.calls = 0
	c, _ = New(Options{Stages: []*Stage{
		{Name: "rules", Plugin: notFinal, Request: true},
		{Name: "det", Plugin: detector, Request: true, NeedsPrior: true},
	}})
	d, _ = c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"})
	if d.Action != "deny" || detector.calls != 1 {
		t.Fatalf("a plain allow silenced a later detector: %s", d.Action)
	}
}

func TestPriorReachesLaterGroups(t *testing.T) {
	var seen abi.Envelope
	rec := evalFunc(func(b []byte) ([]byte, error) {
		json.Unmarshal(b, &seen)
		return []byte(`{"action":"none"}`), nil
	})
	c, _ := New(Options{Stages: []*Stage{
		{Name: "inj", Plugin: &fixed{v: abi.Verdict{Action: "none", Score: 0.4, Labels: []string{"sql"}}}, Request: true},
		{Name: "risk", Plugin: rec, Request: true, NeedsPrior: true},
	}, DefaultAction: "allow"})
	if _, err := c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"}); err != nil {
		t.Fatal(err)
	}
	if len(seen.Prior) != 1 || seen.Prior[0].Stage != "inj" || seen.Prior[0].Score != 0.4 {
		t.Fatalf("risk saw prior %+v", seen.Prior)
	}
}

type evalFunc func([]byte) ([]byte, error)

func (f evalFunc) Evaluate(_ context.Context, b []byte) ([]byte, error) { return f(b) }

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Match
		env  abi.Envelope
		want bool
	}{
		{"default methods is tools/call", Match{}, abi.Envelope{Method: "tools/call"}, true},
		{"default skips tools/list", Match{}, abi.Envelope{Method: "tools/list"}, false},
		{"tool glob", Match{Tools: []string{"get-*"}}, abi.Envelope{Method: "tools/call", Tool: "get-env"}, true},
		{"tool glob miss", Match{Tools: []string{"get-*"}}, abi.Envelope{Method: "tools/call", Tool: "echo"}, false},
		{"server", Match{Servers: []string{"prod-*"}}, abi.Envelope{Method: "tools/call", Server: "dev-db"}, false},
		{"resources by uri", Match{Methods: []string{"resources/*"}, Tools: []string{"file:///etc/**"}}, abi.Envelope{Method: "resources/read", URI: "file:///etc/passwd"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.Matches(&tc.env); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestActiveSwapDrains(t *testing.T) {
	var a Active
	closed := make(chan struct{})
	c1, _ := New(Options{Stages: []*Stage{{Name: "a", Plugin: &fixed{v: abi.Verdict{Action: "allow"}}, Request: true}}, OnClose: func() { close(closed) }})
	a.Swap(c1)
	got, release := a.Acquire()
	if got != c1 {
		t.Fatal("acquire returned the wrong chain")
	}
	c2, _ := New(Options{Stages: []*Stage{{Name: "a", Plugin: &fixed{v: abi.Verdict{Action: "deny"}}, Request: true}}})
	old := a.Swap(c2)
	done := make(chan error, 1)
	go func() { done <- old.CloseWhenDrained(context.Background()) }()
	select {
	case <-closed:
		t.Fatal("old chain closed while a request held it")
	default:
	}
	// The held chain still works.
	if d, _ := got.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"}); d.Action != "allow" {
		t.Fatalf("in-flight request got %s", d.Action)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-closed
	if n, r := a.Acquire(); n != c2 {
		t.Fatal("new chain not active")
	} else {
		r()
	}
}

func TestJudgeResolvesSample(t *testing.T) {
	for _, tc := range []struct {
		name  string
		judge abi.Verdict
		want  string
	}{
		{"judge allows", abi.Verdict{Action: "allow", Reason: "fine"}, "allow"},
		{"judge denies", abi.Verdict{Action: "deny", Reason: "bad"}, "deny"},
		{"judge asks", abi.Verdict{Action: "ask"}, "ask"},
		{"judge has no opinion", abi.Verdict{Action: "none"}, "sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen abi.Envelope
			judge := evalFunc(func(b []byte) ([]byte, error) {
				json.Unmarshal(b, &seen)
				return json.Marshal(tc.judge)
			})
			c, _ := New(Options{Stages: []*Stage{
				{Name: "rules", Plugin: &fixed{v: abi.Verdict{Action: "sample", Guidance: "is this a refund?"}}, Request: true},
				{Name: "judge", Plugin: judge, Request: true, NeedsPrior: true, ResolvesSample: true},
			}})
			d, err := c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want {
				t.Fatalf("action %s, want %s", d.Action, tc.want)
			}
			if len(seen.Prior) != 1 || seen.Prior[0].Guidance != "is this a refund?" {
				t.Fatalf("judge saw prior %+v", seen.Prior)
			}
		})
	}
	// Without ResolvesSample, an allow cannot lower a sample.
	c, _ := New(Options{Stages: []*Stage{
		{Name: "rules", Plugin: &fixed{v: abi.Verdict{Action: "sample"}}, Request: true},
		{Name: "other", Plugin: &fixed{v: abi.Verdict{Action: "allow"}}, Request: true, NeedsPrior: true},
	}})
	if d, _ := c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"}); d.Action != "sample" {
		t.Fatalf("a plain allow resolved a sample: %s", d.Action)
	}
}

// TestOnlyOnSample: a judge marked OnlyOnSample is called only for a message an earlier stage
// sampled; for the rest the decision is what it was when the judge answered none, without its
// call (and without its failure: a judge that would trap is not reached).
func TestOnlyOnSample(t *testing.T) {
	for _, tc := range []struct {
		name      string
		first     string
		judge     *fixed
		wantCalls int
		want      string
	}{
		{"sampled: the judge decides", "sample", &fixed{v: abi.Verdict{Action: "allow"}}, 1, "allow"},
		{"sampled: a failing judge fails closed", "sample", &fixed{err: errors.New("trap")}, 1, "deny"},
		{"not sampled: allow stands", "allow", &fixed{v: abi.Verdict{Action: "deny"}}, 0, "allow"},
		{"not sampled: deny stands", "deny", &fixed{v: abi.Verdict{Action: "allow"}}, 0, "deny"},
		{"not sampled: no opinion, the default", "none", &fixed{err: errors.New("trap")}, 0, "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := New(Options{DefaultAction: "allow", Stages: []*Stage{
				{Name: "rules", Plugin: &fixed{v: abi.Verdict{Action: tc.first}}, Request: true},
				{Name: "judge", Plugin: tc.judge, Request: true, NeedsPrior: true, ResolvesSample: true, OnlyOnSample: true, FailClosed: true},
			}})
			d, err := c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want || tc.judge.calls != tc.wantCalls {
				t.Fatalf("action %s, judge called %d; want %s, %d", d.Action, tc.judge.calls, tc.want, tc.wantCalls)
			}
			if ran := slices.ContainsFunc(d.Stages, func(r abi.StageResult) bool { return r.Stage == "judge" }); ran != (tc.wantCalls == 1) {
				t.Fatalf("judge in the decision's stages: %v, calls %d", ran, tc.judge.calls)
			}
		})
	}
}

// TestTrapReasonKeepsTheStackTraceInTheAudit: a failed stage's deny tells the client the first
// line of the error; the whole error (a trap's Wasm stack trace) stays in the stage result.
func TestTrapReasonKeepsTheStackTraceInTheAudit(t *testing.T) {
	trap := &fixed{err: errors.New("wasm error: unreachable\nwasm stack trace:\n\tguest.evaluate(i32) i64")}
	c, err := New(Options{Stages: []*Stage{{Name: "s0", Plugin: trap, Request: true, FailClosed: true}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != "deny" || strings.Contains(d.Reason, "stack trace") || !strings.Contains(d.Reason, "unreachable") {
		t.Errorf("deny reason %q (action %s)", d.Reason, d.Action)
	}
	if len(d.Stages) != 1 || !strings.Contains(d.Stages[0].Error, "stack trace") {
		t.Errorf("stage result lost the full error: %+v", d.Stages)
	}
}

// TestFirstGroupOnly: under WithFirstGroupOnly the stages after the first NeedsPrior one
// (a judge, a risk scorer) do not run.
func TestFirstGroupOnly(t *testing.T) {
	first := &fixed{v: abi.Verdict{Action: "sample"}}
	judge := &fixed{v: abi.Verdict{Action: "allow"}}
	c, _ := New(Options{Stages: []*Stage{
		{Name: "rules", Plugin: first, Request: true},
		{Name: "judge", Plugin: judge, Request: true, NeedsPrior: true, ResolvesSample: true},
	}})
	d, _ := c.Evaluate(WithFirstGroupOnly(context.Background()), &abi.Envelope{Method: "tools/call"})
	if d.Action != "sample" || first.calls != 1 || judge.calls != 0 {
		t.Fatalf("first group only: %s, rules called %d, judge called %d", d.Action, first.calls, judge.calls)
	}
	if d, _ = c.Evaluate(context.Background(), &abi.Envelope{Method: "tools/call"}); d.Action != "allow" || judge.calls != 1 {
		t.Fatalf("whole chain: %s, judge called %d", d.Action, judge.calls)
	}
}

// A stage's uncertain verdict becomes what the bundle maps it to for the way the message came
// in, before merging; the stage's result keeps that it was uncertain.
func TestUncertainMappedPerWayIn(t *testing.T) {
	unc := func() *fixed { return &fixed{v: abi.Verdict{Action: "uncertain", Reason: "sudo"}} }
	for _, tc := range []struct {
		name      string
		mapping   map[string]string
		transport string
		others    []string // other stages' actions
		want      string
	}{
		{name: "no mapping asks", transport: "http", want: "ask"},
		{name: "hook asks, stdio denies: hook", mapping: map[string]string{"hook": "ask", "stdio": "deny"}, transport: "hook", want: "ask"},
		{name: "hook asks, stdio denies: stdio", mapping: map[string]string{"hook": "ask", "stdio": "deny"}, transport: "stdio", want: "deny"},
		{name: "unnamed way takes default", mapping: map[string]string{"default": "deny", "hook": "ask"}, transport: "http", want: "deny"},
		{name: "unnamed way without default asks", mapping: map[string]string{"stdio": "deny"}, transport: "mcp", want: "ask"},
		{name: "sample hands it to the judge", mapping: map[string]string{"default": "sample"}, transport: "http", want: "sample"},
		{name: "a certain deny still wins over ask", transport: "hook", others: []string{"deny"}, want: "deny"},
		{name: "uncertain mapped to ask beats an allow", transport: "hook", others: []string{"allow"}, want: "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stages := []*Stage{{Name: "unc", Plugin: unc(), Request: true}}
			for i, a := range tc.others {
				stages = append(stages, &Stage{Name: "o" + string(rune('0'+i)), Plugin: &fixed{v: abi.Verdict{Action: a}}, Request: true})
			}
			c, err := New(Options{Stages: stages, Uncertain: tc.mapping})
			if err != nil {
				t.Fatal(err)
			}
			d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "Bash", Transport: tc.transport})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want {
				t.Fatalf("decision %s, want %s (%s)", d.Action, tc.want, d.Reason)
			}
			if r := d.Stages[0]; !r.Uncertain || r.Action != c.UncertainAction(tc.transport) || r.Error != "" {
				t.Fatalf("stage result %+v: want uncertain, mapped to %s", r, c.UncertainAction(tc.transport))
			}
		})
	}
	if _, err := New(Options{Stages: []*Stage{{Name: "a", Plugin: unc(), Request: true}}, Uncertain: map[string]string{"hook": "allow"}}); err == nil || !strings.Contains(err.Error(), "uncertain hook") {
		t.Fatalf("uncertain mapped to allow: %v, want refused", err)
	}
}

func TestDecisionStageFailed(t *testing.T) {
	var none *Decision
	if none.StageFailed() {
		t.Error("a nil decision reports a failed stage")
	}
	d := &Decision{Stages: []abi.StageResult{{Stage: "rules", Action: abi.ActionAllow}, {Stage: "detector", Action: abi.ActionDeny}}}
	if d.StageFailed() {
		t.Error("no stage has an error, yet StageFailed is true")
	}
	d.Stages = append(d.Stages, abi.StageResult{Stage: "judge", Action: abi.ActionDeny, Error: "timeout after 250ms"})
	if !d.StageFailed() {
		t.Error("the judge stage failed, yet StageFailed is false")
	}
}
