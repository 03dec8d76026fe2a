package shellguard

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/tidwall/gjson"
)

// Config is the stage's `config:` block.
type Config struct {
	// ArgumentKeys name the tool arguments that hold a shell command.
	// Empty = ["command", "cmd", "script"].
	ArgumentKeys []string `json:"argument_keys"`
	// Ask adds patterns (case-insensitive substrings) that need a human's approval.
	Ask []string `json:"ask"`
	// Deny adds patterns that are refused outright.
	Deny []string `json:"deny"`
}

// Built-in patterns, matched against the command lower-cased with runs of spaces collapsed.
var (
	builtinDeny = []rule{
		{"pipe-to-shell", "| sh"}, {"pipe-to-shell", "| bash"}, {"pipe-to-shell", "|sh"},
		{"pipe-to-shell", "|bash"}, {"fork-bomb", ":(){"}, {"wipe-root", "rm -rf / "},
		{"wipe-root", "rm -rf /*"}, {"wipe-root", "rm -rf ~"},
	}
	builtinAsk = []rule{
		{"recursive-delete", "rm -rf"}, {"recursive-delete", "rm -fr"}, {"recursive-delete", "rm -r "},
		{"force-push", "git push --force"}, {"force-push", "git push -f"},
		{"hard-reset", "git reset --hard"}, {"clean", "git clean -f"},
		{"disk-write", "dd if="}, {"disk-write", "mkfs"}, {"permissions", "chmod -r 777"},
		{"power", "shutdown"}, {"power", "reboot"}, {"sudo", "sudo "},
	}
)

type rule struct{ name, pattern string }

// Guard decides on shell commands. It is immutable after New and safe for concurrent use.
type Guard struct {
	keys      []string
	deny, ask []rule
}

// New parses the stage config (JSON; empty means defaults).
func New(config []byte) (*Guard, error) {
	var c Config
	if len(strings.TrimSpace(string(config))) > 0 {
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("shellguard: config: %w", err)
		}
	}
	g := &Guard{keys: c.ArgumentKeys, deny: builtinDeny, ask: builtinAsk}
	if len(g.keys) == 0 {
		g.keys = []string{"command", "cmd", "script"}
	}
	for _, p := range c.Deny {
		g.deny = append(g.deny, rule{"custom-deny", normalize(p)})
	}
	for _, p := range c.Ask {
		g.ask = append(g.ask, rule{"custom-ask", normalize(p)})
	}
	return g, nil
}

// Evaluate returns the verdict for one envelope (raw JSON). Anything but a tools/call request
// with a command argument gets no opinion.
func (g *Guard) Evaluate(envelope []byte) abi.Verdict {
	if !gjson.ValidBytes(envelope) {
		return abi.Verdict{Action: abi.ActionNone, Reason: "envelope is not JSON"}
	}
	f := gjson.GetManyBytes(envelope, "method", "phase", "arguments")
	if f[0].String() != "tools/call" || f[1].String() == abi.PhaseResponse {
		return abi.Verdict{Action: abi.ActionNone}
	}
	for _, key := range g.keys {
		arg := f[2].Get(gjson.Escape(key))
		if arg.Type != gjson.String {
			continue
		}
		cmd := normalize(arg.String()) + " "
		path := "arguments." + key
		for _, r := range g.deny {
			if strings.Contains(cmd, r.pattern) {
				return verdict(abi.ActionDeny, r, path, 1)
			}
		}
		for _, r := range g.ask {
			if strings.Contains(cmd, r.pattern) {
				return verdict(abi.ActionAsk, r, path, 0.7)
			}
		}
	}
	return abi.Verdict{Action: abi.ActionNone}
}

func verdict(action string, r rule, path string, score float64) abi.Verdict {
	return abi.Verdict{
		Action:   action,
		Reason:   "shell command matches " + r.name,
		Rule:     r.name,
		Score:    score,
		Labels:   []string{"shell"},
		Evidence: []abi.Evidence{{Label: r.name, Path: path, Match: strings.TrimSpace(r.pattern)}},
	}
}

// normalize lower-cases s and collapses whitespace runs to one space.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
