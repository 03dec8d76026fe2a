package tune

import (
	"fmt"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/sdk/go/abi"
)

func TestRefit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cut      float64
		neg, pos []float64
		want     float64
		moved    bool
	}{
		{"labels agree", 0.9, []float64{0.2, 0.5}, []float64{0.95}, 0.9, false},
		{"false positives above, positives higher: up just past them", 0.9, []float64{0.9312, 0.92}, []float64{0.99, 0.97}, 0.9313, true},
		{"a positive in the way: kept", 0.9, []float64{0.95}, []float64{0.94, 0.99}, 0.9, false},
		{"no positive to bound it: kept", 0.9, []float64{0.95}, nil, 0.9, false},
		{"a false positive at 1: kept", 0.9, []float64{1}, []float64{1}, 0.9, false},
		{"false negatives below, negatives lower: down to them", 0.9, []float64{0.3, 0.61}, []float64{0.7234, 0.95}, 0.7234, true},
		{"a negative in the way: kept", 0.9, []float64{0.75}, []float64{0.72}, 0.9, false},
		{"no negative to bound it: kept", 0.9, nil, []float64{0.5}, 0.9, false},
		{"both sides wrong: kept", 0.9, []float64{0.95}, []float64{0.5}, 0.9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, moved, why := refit(tc.cut, tc.neg, tc.pos)
			if fmt.Sprintf("%.4f", got) != fmt.Sprintf("%.4f", tc.want) || moved != tc.moved {
				t.Errorf("refit(%v, %v, %v) = %v, %v (%s), want %v, %v", tc.cut, tc.neg, tc.pos, got, moved, why, tc.want, tc.moved)
			}
			if why == "" {
				t.Error("no reason given")
			}
			// Moved, every labelled decision ends on its side.
			if moved {
				for _, s := range tc.neg {
					if s >= got {
						t.Errorf("negative %v still flagged at %v", s, got)
					}
				}
				for _, s := range tc.pos {
					if s < got {
						t.Errorf("positive %v not flagged at %v", s, got)
					}
				}
			}
		})
	}
}

// TestProposeThresholds: the example bundle's detector (threshold 0.9) flagged two notes at
// 0.93 and 0.95 that people marked false positive and a secret read at 0.99 they confirmed: the
// proposal raises it to 0.9501. Injection's prompt_injection fired alone at 0.8 on a false
// positive with no confirmed flag to bound it: kept, with why.
func TestProposeThresholds(t *testing.T) {
	detDeny := func(score float64) abi.StageResult {
		return abi.StageResult{Stage: "detector", Action: abi.ActionDeny, Score: score, Evidence: []abi.Evidence{{Label: "prompt_injection", Path: "arguments.body"}}}
	}
	a := decision("A", "notes", "create_note", "deny", "detector", "detector", `{"body":"a"}`, detDeny(0.93))
	b := decision("B", "notes", "create_note", "deny", "detector", "detector", `{"body":"b"}`, detDeny(0.95))
	c := decision("C", "fs", "read_file", "deny", "detector", "detector", `{"body":"c"}`, detDeny(0.99))
	d := decision("D", "notes", "create_note", "deny", "injection", "injection/prompt_injection/ignore", `{"body":"d"}`,
		abi.StageResult{Stage: "injection", Action: abi.ActionDeny, Score: 0.8, Rule: "injection/prompt_injection/ignore", Labels: []string{"prompt_injection"},
			Evidence: []abi.Evidence{{Label: "prompt_injection", Path: "arguments.body"}}})
	events := []audit.Event{labelled(a, audit.LabelFalsePositive), labelled(b, audit.LabelFalsePositive), labelled(c, audit.LabelCorrect), labelled(d, audit.LabelFalsePositive)}
	r, out := propose(t, events, Options{})
	if len(r.Thresholds) != 2 {
		t.Fatalf("thresholds %+v", r.Thresholds)
	}
	dt, it := r.Thresholds[0], r.Thresholds[1]
	if dt.Stage != "detector" || dt.Key != "threshold" || dt.Old != 0.9 || dt.New != 0.9501 || !dt.Moved || dt.Negatives != 2 || dt.Positives != 1 {
		t.Errorf("detector %+v", dt)
	}
	if it.Stage != "injection" || it.Key != "thresholds.prompt_injection" || it.Moved || it.Old != 0.7 {
		t.Errorf("injection %+v", it)
	}
	m, err := bundle.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Stages {
		if s.Name == "detector" && s.Config["threshold"] != 0.9501 {
			t.Errorf("the proposal's detector threshold is %v, want 0.9501", s.Config["threshold"])
		}
		if s.Name == "injection" && s.Config["thresholds"] != nil {
			t.Errorf("injection thresholds written though not moved: %v", s.Config["thresholds"])
		}
	}
}
