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
