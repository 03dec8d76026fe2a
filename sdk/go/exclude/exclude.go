// Package exclude is the exclusions a bundle gives a detecting stage (plugins/injection,
// plugins/detector): "on these tools, a finding of these labels in these argument paths does
// not count". It is how a team removes a false positive the way web application firewalls do
// (a rule excluded for one parameter of one endpoint), without lowering a threshold for every
// call; `palisade tune` proposes them from labelled decisions (host/tune).
//
// Pure Go, no go-pdk: plugins (first-party and yours), the host (host/tune) and native tests share it.
package exclude

import (
	"errors"
	"fmt"
	"strings"

	"github.com/added060/palisade/sdk/go/glob"
)

// Rule is one exclusion. Server and Tool are globs (empty = any); Paths and Labels are
// required: an exclusion names where and what, never "this tool entirely".
type Rule struct {
	Server []string `json:"server,omitempty"`
	Tool   []string `json:"tool,omitempty"`
	// Paths are globs over the finding's path as the verdict's evidence names it
	// (`arguments.body`, `arguments.items[*].text`, `uri`); `*` does not cross `/`.
	Paths []string `json:"paths"`
	// Labels are the categories that do not count there (`prompt_injection`, `sql_injection`);
	// `*` = every category.
	Labels []string `json:"labels"`
	// Rules, when set, narrow it to findings made only by these of the stage's rules (globs
	// over the ids its evidence names, `command_injection/shell/priv/sudo`): a finding with a
	// rule not listed, or with no rule named, still counts. Empty = any finding of the labels.
	Rules []string `json:"rules,omitempty"`
	// Reason says why (for people; e.g. "tune: 12 decisions marked false positive").
	Reason string `json:"reason,omitempty"`
}

// List is a stage's exclusions.
type List []Rule

// ErrInvalid wraps every validation error.
var ErrInvalid = errors.New("invalid exclusion")

// Validate reports the first rule without paths or labels, naming it (exclude[i]).
func (l List) Validate() error {
	for i, r := range l {
		switch {
		case len(r.Paths) == 0:
			return fmt.Errorf("%w: exclude[%d].paths is empty: name the argument paths it covers (\"**\" for all)", ErrInvalid, i)
		case len(r.Labels) == 0:
			return fmt.Errorf("%w: exclude[%d].labels is empty: name the categories it covers (\"*\" for all)", ErrInvalid, i)
		}
		for _, p := range r.Paths {
			if strings.TrimSpace(p) == "" {
				return fmt.Errorf("%w: exclude[%d].paths holds an empty path", ErrInvalid, i)
			}
		}
	}
	return nil
}

// Excludes reports whether a finding of label at path, in a call of tool on server, made by
// the stage's rules (none when the stage names none), does not count.
func (l List) Excludes(server, tool, path, label string, rules ...string) bool {
	for i := range l {
		r := &l[i]
		if glob.Any(r.Server, server) && glob.Any(r.Tool, tool) && anyMatch(r.Paths, path) && anyLabel(r.Labels, label) && r.coversRules(rules) {
			return true
		}
	}
	return false
}

// coversRules reports whether every rule of a finding is one r names (true when r names none;
// false when r names some and the finding names none).
func (r *Rule) coversRules(rules []string) bool {
	if len(r.Rules) == 0 {
		return true
	}
	if len(rules) == 0 {
		return false
	}
	for _, x := range rules {
		if !anyMatch(r.Rules, x) {
			return false
		}
	}
	return true
}

func anyMatch(pats []string, s string) bool {
	for _, p := range pats {
		if glob.Match(p, s) {
			return true
		}
	}
	return false
}

func anyLabel(labels []string, label string) bool {
	for _, l := range labels {
		if l == "*" || l == label {
			return true
		}
	}
	return false
}

// GeneralPath turns a finding's path into the path an exclusion names: array indices become
// `[*]` (`arguments.items[3].text` → `arguments.items[*].text`) and a detector window's byte
// range (`arguments.body[0:512]`) is dropped, so one exclusion covers every element and window
// of the argument.
func GeneralPath(p string) string {
	p = WithoutWindow(p)
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '[' {
			j := i + 1
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(p) && p[j] == ']' {
				b.WriteString("[*]")
				i = j
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// WithoutWindow drops a trailing detector window (`[start:end]`, byte offsets) from p.
func WithoutWindow(p string) string {
	if !strings.HasSuffix(p, "]") {
		return p
	}
	i := strings.LastIndexByte(p, '[')
	if i < 0 {
		return p
	}
	a, b, ok := strings.Cut(p[i+1:len(p)-1], ":")
	if !ok || !digits(a) || !digits(b) {
		return p
	}
	return p[:i]
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
