package exclude

import (
	"errors"
	"strings"
	"testing"
)

func TestExcludes(t *testing.T) {
	l := List{
		{Server: []string{"notes"}, Tool: []string{"create_note"}, Paths: []string{"arguments.body"}, Labels: []string{"prompt_injection"}},
		{Tool: []string{"search_*"}, Paths: []string{"arguments.items[*].text"}, Labels: []string{"*"}},
	}
	for _, tc := range []struct {
		server, tool, path, label string
		want                      bool
	}{
		{"notes", "create_note", "arguments.body", "prompt_injection", true},
		{"notes", "create_note", "arguments.body", "sql_injection", false},     // another category
		{"notes", "create_note", "arguments.title", "prompt_injection", false}, // another argument
		{"other", "create_note", "arguments.body", "prompt_injection", false},  // another server
		{"any", "search_docs", "arguments.items[3].text", "xss", true},
		{"any", "search_docs", "arguments.items[*].text.x", "xss", false},
		{"any", "fetch", "arguments.items[*].text", "xss", false},
	} {
		if got := l.Excludes(tc.server, tc.tool, tc.path, tc.label); got != tc.want {
			t.Errorf("Excludes(%q, %q, %q, %q) = %v, want %v", tc.server, tc.tool, tc.path, tc.label, got, tc.want)
		}
	}
	if (List{}).Excludes("s", "t", "arguments.x", "xss") {
		t.Error("an empty list excludes something")
	}
	// Narrowed to rules: only findings made by those rules alone.
	sudo := List{{Tool: []string{"Bash"}, Paths: []string{"arguments.command"}, Labels: []string{"command_injection"}, Rules: []string{"command_injection/shell/priv/sudo"}}}
	for _, tc := range []struct {
		rules []string
		want  bool
	}{
		{[]string{"command_injection/shell/priv/sudo"}, true},
		{[]string{"command_injection/shell/priv/sudo", "command_injection/shell/destroy/rm_outside"}, false},
		{[]string{"command_injection/shell/destroy/rm_outside"}, false},
		{nil, false}, // a finding that names no rule is not one the exclusion names
	} {
		if got := sudo.Excludes("any", "Bash", "arguments.command", "command_injection", tc.rules...); got != tc.want {
			t.Errorf("rules %v: Excludes = %v, want %v", tc.rules, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		l    List
		want string
	}{
		{List{{Tool: []string{"x"}, Labels: []string{"*"}}}, "exclude[0].paths is empty"},
		{List{{Paths: []string{"**"}, Labels: []string{"*"}}, {Paths: []string{"a"}}}, "exclude[1].labels is empty"},
		{List{{Paths: []string{" "}, Labels: []string{"*"}}}, "exclude[0].paths holds an empty path"},
	} {
		err := tc.l.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.l, err, tc.want)
		}
	}
	if err := (List{{Paths: []string{"**"}, Labels: []string{"*"}}}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestGeneralPath(t *testing.T) {
	for in, want := range map[string]string{
		"arguments.items[3].text":  "arguments.items[*].text",
		"arguments.body[0:512]":    "arguments.body",
		"arguments.a[12][0].b":     "arguments.a[*][*].b",
		"arguments.x{key}":         "arguments.x{key}",
		"arguments.odd[a]":         "arguments.odd[a]",
		"arguments.body[256:768]":  "arguments.body",
		"result.content[0].text":   "result.content[*].text",
		"arguments.list[1][2:900]": "arguments.list[*]",
	} {
		if got := GeneralPath(in); got != want {
			t.Errorf("GeneralPath(%q) = %q, want %q", in, got, want)
		}
	}
}
