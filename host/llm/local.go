package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

func init() { Register("local", newLocal) }

// LocalConfig configures the deterministic local provider. It matches case-insensitive
// substrings in the tool name, server, arguments and context (never in the guidance).
type LocalConfig struct {
	DenyPatterns []string `json:"deny_patterns" yaml:"deny_patterns"` // nil = DefaultDenyPatterns
	AskPatterns  []string `json:"ask_patterns" yaml:"ask_patterns"`   // nil = DefaultAskPatterns
	Default      string   `json:"default" yaml:"default"`             // decision when nothing matches; "" = allow
	// Raw, when set, is returned verbatim as the model's text (demos of the strict parser).
	Raw string `json:"raw" yaml:"raw"`
}

// Default patterns of the local provider.
var (
	DefaultDenyPatterns = []string{"rm -rf", "/etc/shadow", "/etc/passwd", "id_rsa", ".ssh/", "aws_secret", "private key", "drop table", "| sh", "|sh", "curl ", "wget ", "ignore previous instructions", "exfiltrat"}
	DefaultAskPatterns  = []string{"delete", "transfer", "payment", "sudo", "chmod", "deploy", "production", "send_email"}
)

// local is a deterministic provider for tests and demos: same request, same answer, no I/O.
type local struct {
	cfg  ProviderConfig
	deny []string
	ask  []string
}

func newLocal(cfg ProviderConfig, _ Env) (Provider, error) {
	deny, ask := cfg.Local.DenyPatterns, cfg.Local.AskPatterns
	if deny == nil {
		deny = DefaultDenyPatterns
	}
	if ask == nil {
		ask = DefaultAskPatterns
	}
	l := &local{cfg: cfg, deny: lowerAll(deny), ask: lowerAll(ask)}
	switch cfg.Local.Default {
	case "":
		l.cfg.Local.Default = "allow"
	case "allow", "deny", "ask":
	default:
		return nil, fmt.Errorf("local: default must be allow, deny or ask, not %q", cfg.Local.Default)
	}
	return l, nil
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

func (l *local) Name() string { return l.cfg.Name }

func (l *local) Complete(ctx context.Context, p Prompt) (Answer, error) {
	if err := ctx.Err(); err != nil {
		return Answer{}, err
	}
	if l.cfg.Local.Raw != "" {
		return Answer{Text: l.cfg.Local.Raw, Model: "local"}, nil
	}
	var hay string
	if r := p.Request; r != nil {
		hay = strings.ToLower(r.Tool + "\n" + r.Server + "\n" + string(r.Arguments) + "\n" + r.Context)
	} else {
		hay = strings.ToLower(p.User)
	}
	decision, conf, reason := l.cfg.Local.Default, 0.6, "no local pattern matched"
	if m := firstMatch(hay, l.deny); m != "" {
		decision, conf, reason = "deny", 0.95, "matched deny pattern "+strconvQuote(m)
	} else if m := firstMatch(hay, l.ask); m != "" {
		decision, conf, reason = "ask", 0.7, "matched ask pattern "+strconvQuote(m)
	}
	b, _ := json.Marshal(struct {
		Decision   string   `json:"decision"`
		Confidence float64  `json:"confidence"`
		Reasons    []string `json:"reasons"`
	}{decision, conf, []string{reason}})
	return Answer{Text: string(b), Model: "local", StopReason: "end_turn"}, nil
}

func (l *local) Health(context.Context) error { return nil }

func firstMatch(hay string, pats []string) string {
	for _, p := range pats {
		if p != "" && strings.Contains(hay, p) {
			return p
		}
	}
	return ""
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
