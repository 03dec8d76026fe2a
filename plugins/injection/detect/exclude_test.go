package detect

import (
	"errors"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestEvaluateExclude: an exclusion drops its categories at its paths for its tools only; the
// same text elsewhere still fires, other categories still fire, and a bad exclusion is refused
// naming the field.
func TestEvaluateExclude(t *testing.T) {
	c, err := ParseConfig([]byte(`{"exclude":[{"tool":["x"],"paths":["arguments.filter.where[*]"],"labels":["sql_injection"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(c)
	sqli := "' OR '1'='1' --"
	env := func(tool string, args any) []byte {
		return mustJSON(t, map[string]any{"abi": "1.0", "id": "t", "phase": "request", "method": "tools/call", "tool": tool, "arguments": args})
	}
	for _, tc := range []struct {
		name, tool string
		args       any
		action     string
		path       string
	}{
		{"excluded path", "x", map[string]any{"filter": map[string]any{"where": []any{"ok", sqli}}}, abi.ActionNone, ""},
		{"another tool", "y", map[string]any{"filter": map[string]any{"where": []any{"ok", sqli}}}, abi.ActionDeny, "arguments.filter.where[1]"},
		{"same text at another path", "x", map[string]any{"filter": map[string]any{"where": []any{sqli}}, "q": sqli}, abi.ActionDeny, "arguments.q"},
		{"another category at the path", "x", map[string]any{"filter": map[string]any{"where": []any{"http://169.254.169.254/latest/meta-data/"}}}, abi.ActionDeny, "arguments.filter.where[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := e.Evaluate(env(tc.tool, tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if v.Action != tc.action {
				t.Fatalf("action %q, want %q (%+v)", v.Action, tc.action, v)
			}
			if tc.path != "" && (len(v.Evidence) == 0 || v.Evidence[0].Path != tc.path) {
				t.Fatalf("evidence %+v, want a finding at %s", v.Evidence, tc.path)
			}
		})
	}
	// Narrowed to one rule: a command whose only finding is that rule passes; one with another
	// finding in the same category still denies.
	c, err = ParseConfig([]byte(`{"exclude":[{"tool":["Bash"],"paths":["arguments.command"],"labels":["command_injection"],"rules":["command_injection/shell/priv/sudo*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e = NewEvaluator(c)
	v, err := e.Evaluate(env("Bash", map[string]any{"command": "sudo -i"}))
	if err != nil || v.Action == abi.ActionDeny {
		// find what fired, to name it in the failure
		t.Fatalf("sudo -i with its rule excluded: %+v %v", v, err)
	}
	v, err = e.Evaluate(env("Bash", map[string]any{"command": "sudo -i; rm -rf /"}))
	if err != nil || v.Action != abi.ActionDeny {
		t.Fatalf("rm -rf / beside an excluded rule: %+v %v", v, err)
	}
	for cfg, want := range map[string]string{
		`{"exclude":[{"labels":["xss"]}]}`:                          "exclude[0].paths is empty",
		`{"exclude":[{"paths":["arguments.q"]}]}`:                   "exclude[0].labels is empty",
		`{"exclude":[{"paths":["arguments.q"],"labels":["sqli"]}]}`: `exclude[0].labels: unknown category "sqli"`,
	} {
		_, err := ParseConfig([]byte(cfg))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%s) = %v, want %q", cfg, err, want)
		}
	}
}
