package bundle

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/sdk/go/abi"
	"gopkg.in/yaml.v3"
)

// ManifestFile is the name of the bundle's manifest inside its folder.
const ManifestFile = "bundle.yaml"

// Manifest is bundle.yaml.
type Manifest struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
	// Sequence orders releases: sources refuse a bundle whose sequence is below the last active
	// one's unless an operator rolls back explicitly. Covered by the signature (bundle.yaml is a
	// signed file). 0 = unsequenced (refused once a sequenced bundle was active).
	Sequence      uint64         `yaml:"sequence,omitempty"`
	ABI           string         `yaml:"abi"`
	Description   string         `yaml:"description,omitempty"`
	DefaultAction string         `yaml:"default_action"` // "" = deny
	Fallback      Fallback       `yaml:"fallback"`
	Stages        []StageSpec    `yaml:"stages"`
	Models        []yaml.Node    `yaml:"models,omitempty"`   // read by host/infer
	Profiles      map[string]any `yaml:"profiles,omitempty"` // tool profiles, read by risk via data/config
	Fixtures      string         `yaml:"fixtures,omitempty"` // folder of fixtures that must pass before activation
	Audit         AuditSpec      `yaml:"audit,omitempty"`
	// Coverage declares what happens to messages no stage matches (host/chain.Coverage).
	Coverage CoverageSpec `yaml:"coverage,omitempty"`
	// Mode is enforce (default) or observe: the bundle decides and records, and nothing it
	// decides is enforced (a team puts Palisade in front of live agents on day one).
	Mode string `yaml:"mode,omitempty"`
	// ToolsList says how the gateway answers tools/list (host/engine visibleTools).
	ToolsList ToolsListSpec `yaml:"tools_list,omitempty"`
	// Uncertain maps a stage's uncertain verdict per way in (envelope transport, or default)
	// to ask, deny or sample (host/chain.Options.Uncertain); absent = ask everywhere.
	Uncertain map[string]string `yaml:"uncertain,omitempty"`
}

// UncertainKeys are the ways in bundle.yaml's uncertain: may name: the envelope transports,
// and default for every one not named.
var UncertainKeys = []string{"default", "http", "stdio", "hook", "mcp", "fixture", "playground"}

// ToolsListSpec is bundle.yaml's tools_list block.
type ToolsListSpec struct {
	// HideDenied leaves a tool out of a caller's tools/list when the first group's deny holds
	// for every call of it by that caller, whatever the arguments (plugins/rules: a deny with no
	// condition on arguments or time, and no rule before it that could allow other arguments).
	// nil = true; false advertises every tool and denies its calls.
	HideDenied *bool `yaml:"hide_denied,omitempty"`
}

// CoverageSpec is bundle.yaml's coverage block: every message in either direction reaches the
// chain; one that no stage's match covers is judged by the text stages, passed or refused.
type CoverageSpec struct {
	Uncovered string       `yaml:"uncovered"`  // judge | pass | refuse (required)
	JudgeWith []string     `yaml:"judge_with"` // stages that judge uncovered messages; empty = every stage of the phase
	Pass      PhaseMethods `yaml:"pass"`       // method globs that pass uncovered (they carry no text to the model)
	Refuse    PhaseMethods `yaml:"refuse"`     // method globs refused uncovered
}

// PhaseMethods are method globs per phase: request (requests and notifications, whoever sends
// them) and response (answers).
type PhaseMethods struct {
	Request  []string `yaml:"request"`
	Response []string `yaml:"response"`
}

// UnmarshalYAML refuses anything but a request/response map, saying what is expected (a plain
// list would otherwise fail naming the Go type).
func (p *PhaseMethods) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return lineError(n, "coverage pass and refuse take method lists per phase, {request: [...], response: [...]}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "request" && k != "response" {
			return lineError(n.Content[i], fmt.Sprintf("coverage pass and refuse: unknown phase %q (request or response)", k))
		}
	}
	type plain PhaseMethods
	var v plain
	if err := n.Decode(&v); err != nil {
		return err
	}
	*p = PhaseMethods(v)
	return nil
}

// Fallback says how ask and sample resolve when no human or judge decides them.
type Fallback struct {
	Ask    string `yaml:"ask"`    // "" = deny
	Sample string `yaml:"sample"` // "" = deny
}

// AuditSpec says what audit events may contain.
type AuditSpec struct {
	Arguments string `yaml:"arguments"` // hash (default) | full | none
}

// StageSpec is one stage in bundle.yaml.
type StageSpec struct {
	Name         string    `yaml:"name"`
	Plugin       string    `yaml:"plugin"`
	SHA256       string    `yaml:"sha256"`
	Phase        string    `yaml:"phase"` // request (default) | response | both
	Match        MatchSpec `yaml:"match"`
	Timeout      Duration  `yaml:"timeout"`
	MemoryPages  uint32    `yaml:"memory_pages"`
	Failure      string    `yaml:"failure"` // closed (default) | open
	Pool         int       `yaml:"pool"`
	Capabilities []string  `yaml:"capabilities"`
	NeedsPrior   bool      `yaml:"needs_prior"`
	// Trusted drops loop protection for a plugin the operator trusts (first-party, fuzzed): guest
	// code runs 0-35 % faster for direct-convention plugins (2-3x for Extism ones), timeout then
	// bounds only the wait, and a trusted guest that never returns stalls the whole process at
	// its next garbage collection (see host/plugin).
	Trusted bool `yaml:"trusted"`
	// ResolvesSample marks a judge stage: its opinion replaces a sample from earlier stages.
	ResolvesSample bool `yaml:"resolves_sample"`
	// OnlyOnSample (with resolves_sample) runs the stage only when an earlier stage of the
	// message answered sample: a judge that decides nothing else is not called for the rest,
	// which then merge as if it had answered none (it still counts for coverage).
	OnlyOnSample bool `yaml:"only_on_sample"`
	// Mode is enforce (default) or observe: the stage runs and its verdict is recorded, not
	// merged into the decision.
	Mode   string            `yaml:"mode"`
	Config map[string]any    `yaml:"config"`
	Data   map[string]string `yaml:"data"`
}

// MatchSpec is a stage's match block.
type MatchSpec struct {
	Methods []string `yaml:"methods"`
	Tools   []string `yaml:"tools"`
	Servers []string `yaml:"servers"`
}

// Duration is a time.Duration written as "250ms" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return lineError(n, fmt.Sprintf("invalid duration %q (write 250ms, 2s)", s))
	}
	*d = Duration(v)
	return nil
}

// lineError is how an UnmarshalYAML here reports a bad node: a *yaml.TypeError starting
// "line N: column C: " lets ParseManifest name its path (stages[0].timeout), and decoding goes
// on.
func lineError(n *yaml.Node, msg string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: column %d: %s", n.Line, n.Column, msg)}}
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// FieldError names the manifest field that is wrong.
type FieldError struct {
	Path string // e.g. stages[1].timeout
	Err  error
}

func (e *FieldError) Error() string { return fmt.Sprintf("bundle.yaml: %s: %v", e.Path, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// Sentinel errors.
var (
	ErrHashMismatch = errors.New("bundle: sha256 mismatch")
	ErrFixture      = errors.New("bundle: fixture failed")
)

// ParseManifest decodes bundle.yaml strictly and validates it. An unknown field, a value of the
// wrong type or a bad duration is a *FieldError naming its YAML path and line
// (`stages[0].timeout: invalid duration "sixty"`), as Validate's are.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := config.DecodeStrict(b, &m); err != nil {
		var fe *config.FieldError
		if errors.As(err, &fe) {
			return nil, &FieldError{Path: fe.Path, Err: fe.Err}
		}
		return nil, fmt.Errorf("bundle.yaml: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// LoadManifest reads dir/bundle.yaml.
func LoadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return ParseManifest(b)
}

func validAction(a string) bool { return a == "" || abi.ValidAction(a) && a != abi.ActionNone }

// Validate checks the manifest and names the first bad field.
func (m *Manifest) Validate() error {
	fe := func(path, format string, a ...any) error {
		return &FieldError{Path: path, Err: fmt.Errorf(format, a...)}
	}
	if m.Name == "" {
		return fe("name", "required")
	}
	if m.Version == "" {
		return fe("version", "required")
	}
	if m.ABI != "" {
		maj, _, _ := strings.Cut(m.ABI, ".")
		hmaj, _, _ := strings.Cut(abi.Version, ".")
		if maj != hmaj {
			return fe("abi", "bundle wants ABI %s, host implements %s", m.ABI, abi.Version)
		}
	}
	if !validAction(m.DefaultAction) {
		return fe("default_action", "%q is not allow, deny, ask or sample", m.DefaultAction)
	}
	for _, f := range []struct{ path, v string }{{"fallback.ask", m.Fallback.Ask}, {"fallback.sample", m.Fallback.Sample}} {
		if f.v != "" && f.v != abi.ActionAllow && f.v != abi.ActionDeny {
			return fe(f.path, "%q must be allow or deny", f.v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Uncertain)) {
		if !slices.Contains(UncertainKeys, k) {
			return fe("uncertain."+k, "unknown way in (%s)", strings.Join(UncertainKeys, ", "))
		}
		if a := m.Uncertain[k]; !chain.UncertainTarget(a) {
			return fe("uncertain."+k, "%q must be ask, deny or sample (an uncertain finding is never allowed by a mapping)", a)
		}
	}
	switch m.Audit.Arguments {
	case "", "hash", "full", "none":
	default:
		return fe("audit.arguments", "%q must be hash, full or none", m.Audit.Arguments)
	}
	if len(m.Stages) == 0 {
		return fe("stages", "at least one stage is required")
	}
	if m.Mode != "" && m.Mode != "enforce" && m.Mode != "observe" {
		return fe("mode", "%q must be enforce or observe", m.Mode)
	}
	switch m.Coverage.Uncovered {
	case "":
		return fe("coverage.uncovered", "required: say what happens to a message no stage's match covers (judge, pass or refuse); every message in either direction reaches the chain")
	case "judge", "pass", "refuse":
	default:
		return fe("coverage.uncovered", "%q must be judge, pass or refuse", m.Coverage.Uncovered)
	}
	for j, n := range m.Coverage.JudgeWith {
		if !slices.ContainsFunc(m.Stages, func(s StageSpec) bool { return s.Name == n }) {
			return fe(fmt.Sprintf("coverage.judge_with[%d]", j), "no stage is named %q", n)
		}
	}
	seen := map[string]bool{}
	for i, s := range m.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		if s.Name == "" {
			return fe(p+".name", "required")
		}
		if seen[s.Name] {
			return fe(p+".name", "%q repeats an earlier stage", s.Name)
		}
		seen[s.Name] = true
		if s.Plugin == "" {
			return fe(p+".plugin", "required")
		}
		if filepath.IsAbs(s.Plugin) || strings.Contains(filepath.ToSlash(s.Plugin), "..") {
			return fe(p+".plugin", "%q must be a path inside the bundle", s.Plugin)
		}
		if len(s.SHA256) != 64 {
			return fe(p+".sha256", "must be the plugin's 64-hex-digit sha256 (run `palisade bundle pin`)")
		}
		switch s.Phase {
		case "", "request", "response", "both":
		default:
			return fe(p+".phase", "%q must be request, response or both", s.Phase)
		}
		if s.Mode != "" && s.Mode != "enforce" && s.Mode != "observe" {
			return fe(p+".mode", "%q must be enforce or observe", s.Mode)
		}
		if s.OnlyOnSample && !s.ResolvesSample {
			return fe(p+".only_on_sample", "needs resolves_sample: only a judge stage waits for a sample")
		}
		switch s.Failure {
		case "", "closed", "open":
		default:
			return fe(p+".failure", "%q must be closed or open", s.Failure)
		}
		if s.Timeout < 0 || time.Duration(s.Timeout) > time.Minute {
			return fe(p+".timeout", "must be between 0 and 1m")
		}
		if s.MemoryPages > 65536 {
			return fe(p+".memory_pages", "%d is over 65536 (4 GiB)", s.MemoryPages)
		}
		if s.Pool < 0 || s.Pool > 256 {
			return fe(p+".pool", "must be between 0 and 256")
		}
		for j, c := range s.Capabilities {
			if !hostfn.Known(c) {
				return fe(fmt.Sprintf("%s.capabilities[%d]", p, j), "unknown capability %q (sample, infer, kv)", c)
			}
		}
		for k, f := range s.Data {
			if k == "config" {
				return fe(p+".data.config", "the key config is reserved for the stage config")
			}
			if filepath.IsAbs(f) || strings.Contains(filepath.ToSlash(f), "..") {
				return fe(p+".data."+k, "%q must be a path inside the bundle", f)
			}
		}
	}
	return nil
}
