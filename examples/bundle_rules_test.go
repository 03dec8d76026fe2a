package examples_test

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestBundleRulesNoWeakerRuleAboveADeny: in the example bundle's rules the lowest priority
// number wins, so a rule that does not deny and may match any tool (no tool, server or method
// condition) must come after every deny. Above one it would weaken it: an ask on a shell
// argument at priority 5 turned a get-env call (denied at 10) whose argument runs `claude
// --settings` into a question, and get-env stopped counting as always denied (tools/list
// advertised it).
func TestBundleRulesNoWeakerRuleAboveADeny(t *testing.T) {
	b, err := os.ReadFile("bundle/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Rules []struct {
			ID       string         `yaml:"id"`
			Priority int            `yaml:"priority"`
			Action   string         `yaml:"action"`
			When     map[string]any `yaml:"when"`
		} `yaml:"rules"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Rules) == 0 {
		t.Fatal("bundle/rules.yaml: no rules")
	}
	lastDeny := 0
	for _, r := range f.Rules {
		if r.Action == "deny" && r.Priority > lastDeny {
			lastDeny = r.Priority
		}
	}
	for _, r := range f.Rules {
		_, tool := r.When["tool"]
		_, server := r.When["server"]
		_, method := r.When["method"]
		if r.Action != "deny" && !tool && !server && !method && r.Priority <= lastDeny {
			t.Errorf("rule %s (%s, priority %d) may match any tool and comes before a deny (last deny at %d)", r.ID, r.Action, r.Priority, lastDeny)
		}
	}
}
