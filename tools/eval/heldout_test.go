package main

import (
	"strings"
	"testing"
)

func TestFiguresOf(t *testing.T) {
	recs := []HeldoutRecord{
		{Label: "xss", Kind: "comment_body"},
		{Label: "xss", Kind: "comment_body"},
		{Label: "benign", Kind: "shell"},
		{Label: "benign", Kind: "sql", HardNegative: true},
		{Label: "benign", Kind: "sql", Destructive: true},
	}
	f := figuresOf("t", recs, []bool{true, false, true, false, true}, []bool{false, false, false, false, true})
	for _, tc := range []struct {
		name string
		got  Rate
		want Rate
	}{
		{"tpr xss", f.TPR["xss"], Rate{1, 2}},
		{"tpr all", f.TPR["all"], Rate{1, 2}},
		{"fpr shell", f.FPR["shell"], Rate{1, 1}},
		{"fpr first 500 shell", f.FPR["first_500_shell"], Rate{1, 1}},
		{"fpr sql", f.FPR["sql"], Rate{1, 2}},
		{"fpr sql non-destructive", f.FPR["sql_non_destructive"], Rate{0, 1}},
		{"fpr hard negative", f.FPR["hard_negative"], Rate{0, 1}},
		{"fpr all", f.FPR["all"], Rate{2, 3}},
		{"failed sql", Rate{f.Failed["sql"], 0}, Rate{1, 0}},
		{"failed xss", Rate{f.Failed["xss"], 0}, Rate{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

// TestFiguresBare: a prompt placed without its goal (kind *_bare) has its own row, apart
// from the same prompt with the goal, and its asked count goes to that row.
func TestFiguresBare(t *testing.T) {
	recs := []HeldoutRecord{
		{Label: "prompt_injection", Kind: "free_text"},
		{Label: "prompt_injection", Kind: "free_text_bare"},
		{Label: "prompt_injection", Kind: "tool_output_bare"},
	}
	f := withAsked(figuresOf("t", recs, []bool{true, true, false}, nil), recs, []bool{false, true, false})
	if got := f.TPR["prompt_injection"]; got != (Rate{1, 1}) {
		t.Errorf("goal row: got %+v, want {1 1}", got)
	}
	if got := f.TPR["prompt_injection/bare"]; got != (Rate{1, 2}) {
		t.Errorf("bare row: got %+v, want {1 2}", got)
	}
	if got := f.TPR["all"]; got != (Rate{2, 3}) {
		t.Errorf("all: got %+v, want {2 3}", got)
	}
	if f.Asked["prompt_injection/bare"] != 1 || f.Asked["prompt_injection"] != 0 {
		t.Errorf("asked: got %v, want one on the bare row", f.Asked)
	}
}

// TestPrintFiguresQuery: the search-query set's kind has its own row, and its records that a
// stage's failure mode decided are counted in the failure line.
func TestPrintFiguresQuery(t *testing.T) {
	recs := []HeldoutRecord{{Label: "benign", Kind: "query"}, {Label: "benign", Kind: "query"}}
	f := figuresOf("served", recs, []bool{true, false}, []bool{true, false})
	var b strings.Builder
	PrintFigures(&b, f)
	for _, want := range []string{"query ", "1/2", "query 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRegressions(t *testing.T) {
	want := Figures{TPR: map[string]Rate{"xss": {90, 100}}, FPR: map[string]Rate{"shell": {2, 100}}}
	noSlack := func(int) int { return 0 }
	for _, tc := range []struct {
		name string
		got  Figures
		want string // substring of the one regression, "" = none
	}{
		{"same", want, ""},
		{"better", Figures{TPR: map[string]Rate{"xss": {95, 100}}, FPR: map[string]Rate{"shell": {0, 100}}}, ""},
		{"tpr fell", Figures{TPR: map[string]Rate{"xss": {89, 100}}, FPR: map[string]Rate{"shell": {2, 100}}}, "TPR xss fell"},
		{"fpr rose", Figures{TPR: map[string]Rate{"xss": {90, 100}}, FPR: map[string]Rate{"shell": {3, 100}}}, "FPR shell rose"},
		{"data changed", Figures{TPR: map[string]Rate{"xss": {90, 101}}, FPR: map[string]Rate{"shell": {2, 100}}}, "make eval-baseline"},
		{"rise within timeouts", Figures{TPR: map[string]Rate{"xss": {90, 100}}, FPR: map[string]Rate{"shell": {4, 100}}, Failed: map[string]int{"shell": 2}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			regs := Regressions(want, tc.got, noSlack)
			if tc.want == "" {
				if len(regs) != 0 {
					t.Errorf("regressions %v, want none", regs)
				}
				return
			}
			if len(regs) != 1 || !strings.Contains(regs[0], tc.want) {
				t.Errorf("regressions %v, want one with %q", regs, tc.want)
			}
		})
	}
	if GuardSlack(10) != 1 || GuardSlack(500) != 5 {
		t.Errorf("GuardSlack(10), GuardSlack(500) = %d, %d; want 1, 5", GuardSlack(10), GuardSlack(500))
	}
}

func TestGuardSampleKeepsSmallClasses(t *testing.T) {
	var recs []HeldoutRecord
	for i := 0; i < 100; i++ {
		recs = append(recs, HeldoutRecord{Label: "benign", Kind: "shell"})
	}
	for i := 0; i < 5; i++ {
		recs = append(recs, HeldoutRecord{Label: "path_traversal"})
	}
	s := GuardSample(recs)
	n := 0
	for _, r := range s {
		if r.Label == "path_traversal" {
			n++
		}
	}
	if n != 5 {
		t.Errorf("guard sample keeps %d of 5 path_traversal records", n)
	}
	if len(s) != 100/GuardEvery+5 {
		t.Errorf("guard sample has %d records, want %d", len(s), 100/GuardEvery+5)
	}
}

// TestWithAskedNonDestructive: an ask on a non-destructive SQL call counts as asked in the
// sql_non_destructive row too, so the table's denied column there is what was denied.
func TestWithAskedNonDestructive(t *testing.T) {
	recs := []HeldoutRecord{
		{Label: "benign", Kind: "sql"},
		{Label: "benign", Kind: "sql"},
		{Label: "benign", Kind: "sql", Destructive: true},
	}
	f := withAsked(figuresOf("t", recs, []bool{true, true, true}, nil), recs, []bool{true, false, true})
	if got := f.Asked["sql_non_destructive"]; got != 1 {
		t.Errorf("asked sql_non_destructive = %d, want 1", got)
	}
	if got := f.Asked["sql"]; got != 2 {
		t.Errorf("asked sql = %d, want 2", got)
	}
	var b strings.Builder
	PrintFigures(&b, f)
	if !strings.Contains(b.String(), "denied    1  asked    1") {
		t.Errorf("table:\n%s", b.String())
	}
}
