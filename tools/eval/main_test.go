package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunOnTestSplit runs the real harness on the committed test split and checks the table
// and the headline figures stay in the range the README reports.
func TestRunOnTestSplit(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-data", "../../data/split", "-split", "test"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"path_traversal", "prompt_injection", "ssrf", "benign FPR", "TPR at FPR<=1%"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestRunExplainAndUnknownScorer(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-explain", "' or 1=1 --"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "sql_injection") {
		t.Errorf("explain: exit %d, out %q", code, out.String())
	}
	if code := run([]string{"-scorer", "nope"}, &out, &errb); code != 2 {
		t.Errorf("unknown scorer exit %d, want 2", code)
	}
}

// fixedScorer returns the score listed for a text, and its own threshold.
type fixedScorer struct {
	scores map[string]float64
	thr    float64
	label  string
}

func (f fixedScorer) Score(text string) (float64, string) { return f.scores[text], f.label }
func (f fixedScorer) Threshold() float64                  { return f.thr }

func TestCombinedScorerFlagsWhenEitherFires(t *testing.T) {
	a := fixedScorer{map[string]float64{"x": 0.7, "y": 0.2, "z": 0.64}, 0.65, "rules"}
	b := fixedScorer{map[string]float64{"x": 0.1, "y": 0.5, "z": 0.47}, 0.4759, "model"}
	c := NewCombinedScorer(a, b)
	tests := []struct {
		text  string
		flag  bool
		label string
	}{
		{"x", true, "rules"},  // only the rules fire
		{"y", true, "model"},  // only the model fires
		{"z", false, "model"}, // both just under their own thresholds; the model is nearer
	}
	for _, tc := range tests {
		s, l := c.Score(tc.text)
		if got := s >= c.Threshold(); got != tc.flag || l != tc.label {
			t.Errorf("%s: score %.3f label %s, want flagged=%v label %s", tc.text, s, l, tc.flag, tc.label)
		}
	}
	for _, s := range []float64{0, 0.3, 0.65, 0.9, 1} {
		if m := calibrate(s, 0.65); m < 0 || m > 1 || (s >= 0.65) != (m >= 0.5) {
			t.Errorf("calibrate(%v, 0.65) = %v", s, m)
		}
	}
}
