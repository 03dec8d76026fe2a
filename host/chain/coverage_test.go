package chain

import (
	"context"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestCoverage: a message a stage matches is judged by it; one no stage matches goes by the
// bundle's coverage declaration (judge with the named stages whatever their match, pass, or
// refuse, per-phase method lists first), never passed by omission.
func TestCoverage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cov       Coverage
		env       abi.Envelope
		want      string // action
		coverage  string // Decision.Coverage
		textCalls int    // calls of the text stage
	}{
		{"a matched call is the stages'", Coverage{Action: UncoveredRefuse}, abi.Envelope{Phase: "request", Method: "tools/call"}, "allow", CoveredByStage, 0},
		{"judge runs the named stage on a notification", Coverage{Action: UncoveredJudge, Stages: []string{"text"}}, abi.Envelope{Phase: "request", Method: "notifications/message"}, "deny", CoveredJudged, 1},
		{"judge runs it on an answer though it is request-only", Coverage{Action: UncoveredJudge, Stages: []string{"text"}}, abi.Envelope{Phase: "response", Method: "tools/list"}, "deny", CoveredJudged, 1},
		{"refuse", Coverage{Action: UncoveredRefuse}, abi.Envelope{Phase: "request", Method: "notifications/message"}, "deny", CoveredRefused, 0},
		{"pass", Coverage{Action: UncoveredPass}, abi.Envelope{Phase: "response", Method: "tools/list"}, "allow", CoveredPassed, 0},
		{"pass list of the phase before judge", Coverage{Action: UncoveredJudge, Stages: []string{"text"}, Pass: Methods{Request: []string{"tools/list"}}}, abi.Envelope{Phase: "request", Method: "tools/list"}, "allow", CoveredPassed, 0},
		{"pass list of the other phase does not apply", Coverage{Action: UncoveredJudge, Stages: []string{"text"}, Pass: Methods{Request: []string{"tools/list"}}}, abi.Envelope{Phase: "response", Method: "tools/list"}, "deny", CoveredJudged, 1},
		{"refuse list before pass action", Coverage{Action: UncoveredPass, Refuse: Methods{Request: []string{"experimental/*"}}}, abi.Envelope{Phase: "request", Method: "experimental/x"}, "deny", CoveredRefused, 0},
		{"judge by every stage of the phase, none there", Coverage{Action: UncoveredJudge}, abi.Envelope{Phase: "response", Method: "tools/list"}, "allow", CoveredPassed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := &fixed{v: abi.Verdict{Action: "deny", Reason: "injected"}}
			calls := &fixed{v: abi.Verdict{Action: "allow"}}
			c, err := New(Options{DefaultAction: "allow", Uncovered: tc.cov, Stages: []*Stage{
				{Name: "calls", Plugin: calls, Request: true, Match: Match{Methods: []string{"tools/call"}}},
				{Name: "text", Plugin: text, Request: true, Match: Match{Methods: []string{"tools/call"}, Tools: []string{"never"}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			d, err := c.Evaluate(context.Background(), &tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want || d.Coverage != tc.coverage || text.calls != tc.textCalls {
				t.Errorf("got %s covered %q (text stage called %d), want %s %q (%d): %s", d.Action, d.Coverage, text.calls, tc.want, tc.coverage, tc.textCalls, d.Reason)
			}
			if d.Coverage == CoveredRefused && (d.Rule != RuleUncovered || d.Stage != StageCoverage) {
				t.Errorf("refusal names rule %q stage %q", d.Rule, d.Stage)
			}
		})
	}
	if _, err := New(Options{Uncovered: Coverage{Action: "maybe"}}); err == nil {
		t.Error("an unknown uncovered action was accepted")
	}
	if _, err := New(Options{Uncovered: Coverage{Stages: []string{"ghost"}}, Stages: []*Stage{{Name: "a"}}}); err == nil {
		t.Error("judge_with naming no stage was accepted")
	}
}

// TestObservedStage: a stage in observe mode runs and is recorded, and its deny is not merged.
func TestObservedStage(t *testing.T) {
	trial := &fixed{v: abi.Verdict{Action: "deny", Reason: "new detector"}}
	c, err := New(Options{DefaultAction: "allow", Uncovered: Coverage{Action: UncoveredPass}, Stages: []*Stage{
		{Name: "rules", Plugin: &fixed{v: abi.Verdict{Action: "allow"}}, Request: true},
		{Name: "trial", Plugin: trial, Request: true, Observe: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != "allow" || trial.calls != 1 || len(d.Stages) != 2 || !d.Stages[1].Observe || d.Stages[1].Action != "deny" {
		t.Fatalf("got %s, stages %+v; want allow with the observed deny recorded", d.Action, d.Stages)
	}
}
