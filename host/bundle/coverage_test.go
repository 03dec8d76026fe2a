package bundle

import (
	"errors"
	"strings"
	"testing"
)

// TestCoverageRequired: bundle.yaml must say what covers a message no stage matches, and says
// it with a known action and existing stages; the error names the field.
func TestCoverageRequired(t *testing.T) {
	base := strings.Replace(goodManifest, "coverage: {uncovered: pass}\n", "", 1)
	for _, tc := range []struct {
		name, coverage, path string
	}{
		{"missing", "", "coverage.uncovered"},
		{"unknown action", "coverage: {uncovered: ignore}\n", "coverage.uncovered"},
		{"judge_with names no stage", "coverage: {uncovered: judge, judge_with: [ghost]}\n", "coverage.judge_with[0]"},
		{"pass is per phase", "coverage: {uncovered: judge, pass: [ping]}\n", ""},
		{"a phase misspelled", "coverage: {uncovered: judge, pass: {requests: [ping]}}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.coverage + base))
			var fe *FieldError
			switch {
			case err == nil:
				t.Fatal("accepted")
			case tc.path == "":
				if !strings.Contains(err.Error(), "coverage") && !strings.Contains(err.Error(), "pass") {
					t.Fatalf("error %v names neither coverage nor pass", err)
				}
			case !errors.As(err, &fe) || fe.Path != tc.path:
				t.Fatalf("error %v, want a field error at %s", err, tc.path)
			}
		})
	}
	m, err := ParseManifest([]byte("coverage:\n  uncovered: judge\n  judge_with: [rules]\n  pass: {request: [ping], response: [ping]}\n  refuse: {request: [\"x/*\"]}\n" + base))
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Coverage; c.Uncovered != "judge" || c.JudgeWith[0] != "rules" || c.Pass.Response[0] != "ping" || c.Refuse.Request[0] != "x/*" {
		t.Fatalf("coverage = %+v", c)
	}
}

// TestUncertainMapping: bundle.yaml's uncertain: names known ways in and maps them to ask,
// deny or sample; anything else is refused naming the key.
func TestUncertainMapping(t *testing.T) {
	for _, tc := range []struct{ name, yaml, path string }{
		{"allow is refused", "uncertain: {hook: allow}\n", "uncertain.hook"},
		{"unknown way in", "uncertain: {sse: deny}\n", "uncertain.sse"},
		{"not an action", "uncertain: {default: maybe}\n", "uncertain.default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.yaml + goodManifest))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("error %v, want a field error at %s", err, tc.path)
			}
		})
	}
	m, err := ParseManifest([]byte("uncertain: {default: ask, stdio: deny, hook: ask}\n" + goodManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.Uncertain["stdio"] != "deny" || m.Uncertain["hook"] != "ask" {
		t.Fatalf("uncertain = %v", m.Uncertain)
	}
}
