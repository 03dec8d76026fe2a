package tune

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/exclude"
	"gopkg.in/yaml.v3"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// decision is a decision event of the example bundle's shape.
func decision(id, server, tool, action, stage, rule string, args string, stages ...abi.StageResult) audit.Event {
	ev := audit.Event{ID: id, Time: now, Kind: audit.KindDecision, Method: "tools/call", Server: server, Tool: tool,
		Action: action, RequestedAction: action, Stage: stage, Rule: rule, Stages: stages}
	if args != "" {
		ev.Arguments = json.RawMessage(args)
	}
	return ev
}

func labelled(ev audit.Event, verdict string) audit.Event {
	l := ev
	l.ID, l.Kind = "L"+ev.ID, audit.KindLabel
	l.Label = &audit.Label{Ref: ev.ID, Verdict: verdict, By: "approver:erin"}
	return l
}

func approved(ev audit.Event, decision string) audit.Event {
	ev.RequestedAction = abi.ActionAsk
	ev.Approval = &audit.Approval{ID: ev.ID, Decision: decision, DecidedBy: "approver:erin"}
	if decision == audit.ApprovalApproved {
		ev.Action = abi.ActionAllow
	} else {
		ev.Action = abi.ActionDeny
	}
	return ev
}

func inj(label, path string, rules ...string) abi.StageResult {
	return abi.StageResult{Stage: "injection", Action: abi.ActionDeny, Rule: "injection/" + label, Evidence: []abi.Evidence{{Label: label, Path: path, Rules: rules}}}
}

// exampleBundle is a copy of examples/bundle with its plugins pinned (to made-up digests:
// tune reads and writes the folder, it loads no plugin).
func exampleBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := bundle.CopyDir("../../examples/bundle", dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, bundle.ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), `sha256: ""`, `sha256: "`+strings.Repeat("ab", 32)+`"`))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func propose(t *testing.T, events []audit.Event, o Options) (*Report, string) {
	t.Helper()
	o.Bundle = exampleBundle(t)
	o.Out = filepath.Join(t.TempDir(), "proposal")
	o.Now = now
	r, err := Propose(context.Background(), events, o)
	if err != nil {
		t.Fatal(err)
	}
	return r, o.Out
}

// TestProposeExclusions: false positives of the detecting stages become exclusions as narrow
// as their evidence (server, tool, the general path, the label, the stage's rules), one per
// distinct finding with every decision behind it; the proposal is the bundle with them in its
// stages' config, a new version, no signature, and the labelled calls as fixtures.
func TestProposeExclusions(t *testing.T) {
	body := `{"body":"Please ignore the previous email, I sent the wrong file"}`
	a := decision("A", "notes", "create_note", "deny", "injection", "injection/prompt_injection", body, inj("prompt_injection", "arguments.body", "prompt_injection/ignore_previous"))
	b := decision("B", "notes", "create_note", "deny", "injection", "injection/prompt_injection", `{"body":"ignore the previous draft"}`, inj("prompt_injection", "arguments.body", "prompt_injection/ignore_previous"))
	c := decision("C", "docs", "search", "deny", "detector", "detector", "",
		abi.StageResult{Stage: "detector", Action: abi.ActionDeny, Evidence: []abi.Evidence{{Label: "sql_injection", Path: "arguments.items[3].q[0:512]"}}})
	older := labelled(decision("B", "notes", "create_note", "deny", "injection", "", ""), audit.LabelCorrect)
	older.Time = now.Add(-time.Hour) // B was first marked correct, then false positive: the latest counts
	events := []audit.Event{a, labelled(a, audit.LabelFalsePositive), older, labelled(b, audit.LabelFalsePositive), labelled(c, audit.LabelFalsePositive)}
	r, out := propose(t, events, Options{})
	if r.Labels != 3 || r.FalsePositives != 3 || r.Correct != 0 || len(r.Exclusions) != 2 || r.Fixtures != 2 {
		t.Fatalf("report %+v", r)
	}
	x := r.Exclusions[0] // detector sorts first
	if x.Stage != "detector" || x.Paths[0] != "arguments.items[*].q" || x.Labels[0] != "sql_injection" || x.Tool[0] != "search" || x.Server[0] != "docs" {
		t.Fatalf("detector exclusion %+v", x)
	}
	x = r.Exclusions[1]
	if x.Stage != "injection" || !slices.Equal(x.Support, []string{"A", "B"}) || !slices.Equal(x.Rules, []string{"prompt_injection/ignore_previous"}) {
		t.Fatalf("injection exclusion %+v", x)
	}
	m, err := bundle.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != "0.1.0-tune.20261128120000" {
		t.Fatalf("version %q", m.Version)
	}
	for _, s := range m.Stages {
		if s.Name != "injection" {
			continue
		}
		b, _ := json.Marshal(s.Config["exclude"])
		var l exclude.List
		if err := json.Unmarshal(b, &l); err != nil || len(l) != 1 || !l.Excludes("notes", "create_note", "arguments.body", "prompt_injection", "prompt_injection/ignore_previous") {
			t.Fatalf("injection config exclude %s: %v", b, err)
		}
		if l.Excludes("notes", "create_note", "arguments.body", "prompt_injection", "prompt_injection/new_instructions") {
			t.Fatal("the exclusion covers another rule")
		}
	}
	if _, err := os.Stat(filepath.Join(out, bundle.SignatureFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the proposal kept a signature: %v", err)
	}
	fx, err := bundle.ReadFixtures(filepath.Join(out, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	var tuned []bundle.Fixture
	for _, f := range fx {
		if strings.HasPrefix(f.Name, "tune: ") {
			tuned = append(tuned, f)
		}
	}
	if len(tuned) != 2 || tuned[0].Expected != "allow" || tuned[0].Server != "notes" || !strings.Contains(string(tuned[0].Params), "wrong file") {
		t.Fatalf("fixtures %+v", tuned)
	}
	// The comments of bundle.yaml survive.
	if b, _ := os.ReadFile(filepath.Join(out, "bundle.yaml")); !strings.Contains(string(b), "# The example bundle") {
		t.Fatal("bundle.yaml lost its comments")
	}
	// Proposing again into the same folder is refused.
	if _, err := Propose(context.Background(), events, Options{Bundle: exampleBundle(t), Out: out}); !errors.Is(err, ErrOutExists) {
		t.Fatalf("second proposal into %s: %v", out, err)
	}
}

// TestProposeRules: approvals of one rule's held calls under one directory become an allow
// rule scoped to it, just before the rule that held them; not when a person denied a call the
// rule would allow, nor below MinApprovals, nor without recorded arguments. A false negative
// with its arguments becomes a deny rule first of all.
func TestProposeRules(t *testing.T) {
	var events []audit.Event
	for i, p := range []string{"/workspace/app/src/a.go", "/workspace/app/README.md", "/workspace/app/src/b/c.go"} {
		events = append(events, approved(decision(string(rune('a'+i)), "fs", "read_file", "", "rules", "ask-before-sampling", `{"path":"`+p+`"}`), audit.ApprovalApproved))
	}
	// Two approvals only: below MinApprovals.
	for i := range 2 {
		events = append(events, approved(decision("w"+string(rune('0'+i)), "fs", "write_file", "", "rules", "ask-before-sampling", `{"path":"/workspace/app/x"}`), audit.ApprovalApproved))
	}
	fn := decision("F", "fs", "move_file", "allow", "", "", `{"source":"/etc/shadow","destination":"/tmp/x"}`)
	events = append(events, labelled(fn, audit.LabelFalseNegative))
	r, out := propose(t, events, Options{})
	if len(r.Rules) != 2 || r.Approved != 5 {
		t.Fatalf("report %+v", r)
	}
	allow, deny := r.Rules[0], r.Rules[1]
	rules, err := readRules("../../examples/bundle", "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	asking := slices.IndexFunc(rules, func(r ruleEntry) bool { return r.ID == "ask-before-sampling" })
	if asking < 0 || allow.Action != "allow" || allow.Arguments["path"][0] != "/workspace/app/**" || allow.Priority != rules[asking].Priority-1 || len(allow.Support) != 3 {
		t.Fatalf("allow rule %+v", allow)
	}
	if deny.Action != "deny" || deny.Arguments["source"][0] != "/etc/shadow" || deny.Priority >= 1 {
		t.Fatalf("deny rule %+v", deny)
	}
	b, err := os.ReadFile(filepath.Join(out, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules []struct {
			ID       string `yaml:"id"`
			Priority int    `yaml:"priority"`
		} `yaml:"rules"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil || !slices.ContainsFunc(doc.Rules, func(r struct {
		ID       string `yaml:"id"`
		Priority int    `yaml:"priority"`
	}) bool {
		return r.ID == allow.ID
	}) {
		t.Fatalf("rules.yaml lacks %s: %v", allow.ID, err)
	}

	// A denied call under the same directory: no rule.
	events = append(events, approved(decision("d", "fs", "read_file", "", "rules", "ask-before-sampling", `{"path":"/workspace/app/.env"}`), audit.ApprovalDenied))
	r, _ = propose(t, events, Options{})
	if len(r.Rules) != 1 || !slices.ContainsFunc(r.Unused, func(s string) bool { return strings.Contains(s, "which a person denied") }) {
		t.Fatalf("with a denial: %+v", r)
	}
	// Without recorded arguments: said, not proposed.
	var hashed []audit.Event
	for _, ev := range events[:3] {
		ev.Arguments = nil
		hashed = append(hashed, ev)
	}
	r, _ = propose(t, hashed, Options{})
	if len(r.Rules) != 0 || len(r.Unused) != 1 || !strings.Contains(r.Unused[0], "not recorded") {
		t.Fatalf("hashed arguments: %+v", r)
	}
}

// TestProposeUnused: what tune cannot turn into a proposal is listed with why.
func TestProposeUnused(t *testing.T) {
	rule := decision("R", "", "get-env", "deny", "rules", "deny-get-env", "", abi.StageResult{Stage: "rules", Action: "deny", Rule: "deny-get-env"})
	timeout := decision("T", "", "echo", "deny", "injection", "", "", abi.StageResult{Stage: "injection", Action: "deny", Error: "timeout"})
	allowed := decision("Z", "", "echo", "allow", "", "", "")
	missed := decision("Y", "", "echo", "allow", "", "", "")
	r, _ := propose(t, []audit.Event{labelled(rule, audit.LabelFalsePositive), labelled(timeout, audit.LabelFalsePositive),
		labelled(allowed, audit.LabelFalsePositive), labelled(missed, audit.LabelFalseNegative)}, Options{})
	want := []string{"flagged by stage rules (rule deny-get-env), which tune does not change", "stage injection failed (timeout)",
		"Z: marked false positive, but the decision was allow", "Y: marked false negative; its arguments were not recorded"}
	for _, w := range want {
		if !slices.ContainsFunc(r.Unused, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("unused %q lacks %q", r.Unused, w)
		}
	}
	if len(r.Exclusions) != 0 || len(r.Rules) != 0 {
		t.Fatalf("proposed from nothing usable: %+v", r)
	}
}
