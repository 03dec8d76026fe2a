package tune

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/exclude"
	"github.com/added060/palisade/sdk/go/glob"
)

// Options configure Propose.
type Options struct {
	Bundle string // the active bundle's folder
	Out    string // the proposal's folder: created; must not exist or be empty
	// MinApprovals is how many approvals of one kind of call (same server, tool, asking rule,
	// and a shared path prefix) make an allow rule; 0 = 3.
	MinApprovals int
	// Now stamps the proposal's version; zero = time.Now().
	Now time.Time

	// TrainData is the detector's training data (data/split: train.jsonl, dev.jsonl,
	// test.jsonl); "" = the model is not retrained (Report.Detector says so).
	TrainData string
	// ExtraBenign are the extra benign files `make model` trains with (models/data); nil = none.
	ExtraBenign []string
	// ExtraHeldout is the held-out tool calls `make model` trains with
	// (data/heldout/calib.jsonl, train.HeldoutExamples); "" = none.
	ExtraHeldout string
	ONNXRuntime  string // the ONNX Runtime library; "" = search as host/infer does
	Epochs       int    // training epochs; 0 = the trainer's default (tests use fewer)

	// Check, when set, builds a written proposal and runs its fixtures (the bundle's own and
	// the labelled calls'), returning an error wrapping bundle.ErrFixture when one fails. An
	// exclusion is as narrow as a stage's rule, and one labelled call may ask for an exclusion
	// that also lets through a call the bundle's fixtures say must be asked about or denied
	// (one `sudo apt install ./x.deb` marked false positive excludes every sudo finding of the
	// tool). With Check, such an exclusion is left out, with the fixtures of the labels it
	// rested on, and Report.Unused says why. nil = not checked here (a gateway loading the
	// proposal runs its fixtures and refuses it).
	Check func(ctx context.Context, dir string) error
}

// Report is what Propose proposed, and what it could not use and why.
type Report struct {
	Labels         int `json:"labels"` // the latest label of each decision
	FalsePositives int `json:"false_positives"`
	FalseNegatives int `json:"false_negatives"`
	Correct        int `json:"correct"`
	Approved       int `json:"approved"` // held calls a person approved
	Denied         int `json:"denied"`   // held calls a person denied

	Exclusions []Exclusion `json:"exclusions,omitempty"`
	Rules      []Rule      `json:"rules,omitempty"`
	Fixtures   int         `json:"fixtures"`
	Unused     []string    `json:"unused,omitempty"`
	// LeftOut are the labels (decision ids) whose exclusion Options.Check left out: the
	// bundle's fixtures failed with it. Their calls are flagged as before.
	LeftOut []string `json:"left_out,omitempty"`

	// Events says how the events were vetted, when the caller checked their signatures
	// (`palisade tune --events`); nil = not by Propose's caller.
	Events *EventCheck `json:"events,omitempty"`

	// Thresholds are the score thresholds of the detector and injection stages the labels
	// bear on: moved, or kept with why.
	Thresholds []ThresholdChange `json:"thresholds,omitempty"`
	// Detector is the retrained detector model, or why it was not retrained; nil when no
	// label concerned a detector stage's text.
	Detector *Retrain `json:"detector,omitempty"`

	Version  string `json:"version"`
	Sequence uint64 `json:"sequence,omitempty"`
}

// EventCheck counts the events whose signatures a caller checked before Propose.
type EventCheck struct {
	Verified   int            `json:"verified"`             // signed by a trusted signer
	Unverified int            `json:"unverified,omitempty"` // used without a verified signature (trusted unsigned)
	Skipped    map[string]int `json:"skipped,omitempty"`    // left out, by audit.Problem*
}

// SkippedTotal is the number of events left out.
func (c *EventCheck) SkippedTotal() int {
	n := 0
	for _, v := range c.Skipped {
		n += v
	}
	return n
}

// Exclusion is one proposed exclusion of a stage.
type Exclusion struct {
	Stage string `json:"stage"`
	exclude.Rule
	Support []string `json:"support"` // the audit ids of the labelled decisions behind it
}

// Rule is one proposed rule of the rules stage.
type Rule struct {
	ID        string              `json:"id"`
	Priority  int                 `json:"priority"`
	Action    string              `json:"action"`
	Reason    string              `json:"reason"`
	Server    []string            `json:"server,omitempty"`
	Tool      []string            `json:"tool,omitempty"`
	Arguments map[string][]string `json:"arguments,omitempty"`
	Support   []string            `json:"support"`
}

// stage kinds tune knows how to change, by plugin file name.
const (
	kindRules     = "rules.wasm"
	kindInjection = "injection.wasm"
	kindDetector  = "detector.wasm"
)

// firstParty is the module that runs every first-party stage, each in the role its config
// names (plugins/firstparty): its stage's kind is the single plugin of that role.
const firstParty = "firstparty.wasm"

// stageKind is the kind of stage s: its plugin's file name, or for the first-party module the
// file name of its role's single plugin.
func stageKind(s bundle.StageSpec) string {
	kind := path.Base(filepath.ToSlash(s.Plugin))
	if role, ok := s.Config["role"].(string); ok && kind == firstParty {
		return role + ".wasm"
	}
	return kind
}

// Propose reads events (labels and decisions, any order, other kinds ignored), writes the
// proposal to o.Out and reports it.
func Propose(ctx context.Context, events []audit.Event, o Options) (*Report, error) {
	if o.MinApprovals <= 0 {
		o.MinApprovals = 3
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrOutExists, o.Out) // before retraining takes seconds
	}
	m, err := bundle.LoadManifest(o.Bundle)
	if err != nil {
		return nil, err
	}
	kinds := map[string]string{} // stage name → plugin file name (stageKind)
	rulesStage, rulesFile := "", ""
	for _, s := range m.Stages {
		kinds[s.Name] = stageKind(s)
		if kinds[s.Name] == kindRules && rulesStage == "" {
			rulesStage, rulesFile = s.Name, s.Data["rules"]
		}
	}
	rules, err := readRules(o.Bundle, rulesFile)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	p := &proposer{o: o, r: r, kinds: kinds, rulesStage: rulesStage, rules: rules, excl: map[string]*Exclusion{}}

	labels := latestLabels(events)
	r.Labels = len(labels)
	for _, ev := range labels {
		p.label(ev)
	}
	p.approvals(events)
	p.thresholds(labels, m)
	defer func() {
		for _, f := range p.cleanup {
			f()
		}
	}()
	p.retrain(ctx, m)

	for _, x := range p.excl {
		r.Exclusions = append(r.Exclusions, *x)
	}
	slices.SortFunc(r.Exclusions, func(a, b Exclusion) int {
		return cmp.Or(cmp.Compare(a.Stage, b.Stage), cmp.Compare(strings.Join(a.Tool, ","), strings.Join(b.Tool, ",")),
			cmp.Compare(a.Paths[0], b.Paths[0]), cmp.Compare(a.Labels[0], b.Labels[0]), cmp.Compare(strings.Join(a.Server, ","), strings.Join(b.Server, ",")),
			cmp.Compare(strings.Join(a.Rules, ","), strings.Join(b.Rules, ",")))
	})
	slices.SortFunc(r.Rules, func(a, b Rule) int { return cmp.Compare(a.ID, b.ID) })
	slices.Sort(r.Unused)
	if len(r.Rules) > 0 && rulesStage == "" {
		r.Unused = append(r.Unused, fmt.Sprintf("%d proposed rules: the bundle has no rules stage (plugin %s) to hold them", len(r.Rules), kindRules))
		r.Rules = nil
	}
	if err := p.write(m, rulesFile); err != nil {
		return nil, err
	}
	if o.Check != nil {
		if err := p.keepFixturesPassing(ctx, m, rulesFile); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// keepFixturesPassing runs o.Check on the written proposal and, while a fixture fails, leaves
// out one exclusion at a time (with the fixtures of the labels it rests on) and writes the
// proposal again: a drop that changes or ends the failure is kept, one that does not is undone.
// It fails when the fixtures still fail with every exclusion tried.
func (p *proposer) keepFixturesPassing(ctx context.Context, m *bundle.Manifest, rulesFile string) error {
	rewrite := func() error {
		if err := os.RemoveAll(p.o.Out); err != nil {
			return err
		}
		return p.write(m, rulesFile)
	}
	failure := p.o.Check(ctx, p.o.Out)
	if failure == nil {
		return nil
	}
	if !errors.Is(failure, bundle.ErrFixture) {
		// It could not be built here (no ONNX Runtime, say): the gateway that loads it
		// runs the fixtures.
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("the proposal was not checked against its fixtures here: %v", failure))
		return nil
	}
	for i := 0; i < len(p.r.Exclusions); {
		x := p.r.Exclusions[i]
		exclusions, fixtures := p.r.Exclusions, p.fixtures
		p.r.Exclusions = slices.Delete(slices.Clone(exclusions), i, i+1)
		p.fixtures = slices.DeleteFunc(slices.Clone(fixtures), func(f bundle.Fixture) bool {
			return slices.ContainsFunc(x.Support, func(id string) bool { return strings.HasPrefix(f.Name, "tune: "+id+" ") })
		})
		if err := rewrite(); err != nil {
			return err
		}
		err := p.o.Check(ctx, p.o.Out)
		if err != nil && !errors.Is(err, bundle.ErrFixture) {
			return fmt.Errorf("tune: checking the proposal: %w", err)
		}
		if err != nil && err.Error() == failure.Error() {
			p.r.Exclusions, p.fixtures = exclusions, fixtures // not this one
			i++
			continue
		}
		p.r.LeftOut = append(p.r.LeftOut, x.Support...)
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("exclusion %s: %s in %s of %s%s not proposed (labels %s): the bundle's fixtures fail with it: %v",
			x.Stage, strings.Join(x.Labels, ","), strings.Join(x.Paths, ","), strings.Join(x.Tool, ","), rulesText(x.Rules), strings.Join(x.Support, ", "), failure))
		if err == nil {
			return nil
		}
		failure = err
	}
	if err := rewrite(); err != nil {
		return err
	}
	return fmt.Errorf("tune: the proposal fails its fixtures with every exclusion left out in turn: %w", failure)
}

func rulesText(rules []string) string {
	if len(rules) == 0 {
		return ""
	}
	return " (rules " + strings.Join(rules, ",") + ")"
}

type proposer struct {
	o          Options
	r          *Report
	kinds      map[string]string
	rulesStage string
	rules      []ruleEntry
	excl       map[string]*Exclusion
	fixtures   []bundle.Fixture
	texts      []detectorText // for the detector's training data
	model      *newModel      // the retrained detector model, when there is one
	cleanup    []func()
}

// ruleEntry is what tune reads of an existing rule.
type ruleEntry struct {
	ID       string `yaml:"id"`
	Priority int    `yaml:"priority"`
	Action   string `yaml:"action"`
}

func readRules(dir, file string) ([]ruleEntry, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Rules []ruleEntry `yaml:"rules"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return doc.Rules, nil
}

// latestLabels returns the latest label event of each decision, in audit id order.
func latestLabels(events []audit.Event) []audit.Event {
	latest := map[string]audit.Event{}
	for _, ev := range events {
		if ev.Kind != audit.KindLabel || ev.Label == nil || ev.Label.Ref == "" {
			continue
		}
		if old, ok := latest[ev.Label.Ref]; !ok || ev.Time.After(old.Time) || ev.Time.Equal(old.Time) && ev.ID > old.ID {
			latest[ev.Label.Ref] = ev
		}
	}
	return slices.SortedFunc(maps.Values(latest), func(a, b audit.Event) int { return cmp.Compare(a.Label.Ref, b.Label.Ref) })
}

func flagged(action string) bool { return action == abi.ActionDeny || action == abi.ActionAsk }

// label turns one label into proposals.
func (p *proposer) label(ev audit.Event) {
	r, id := p.r, ev.Label.Ref
	switch ev.Label.Verdict {
	case audit.LabelCorrect:
		r.Correct++
	case audit.LabelFalsePositive:
		r.FalsePositives++
		p.falsePositive(ev)
	case audit.LabelFalseNegative:
		r.FalseNegatives++
		p.falseNegative(ev)
	default:
		r.Unused = append(r.Unused, fmt.Sprintf("%s: unknown verdict %q", id, ev.Label.Verdict))
	}
}

// falsePositive proposes an exclusion for every finding of a detecting stage that flagged the
// call; a flag from any other stage is reported.
func (p *proposer) falsePositive(ev audit.Event) {
	id := ev.Label.Ref
	if !flagged(ev.Action) && !flagged(ev.RequestedAction) {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: marked false positive, but the decision was %s", id, ev.Action))
		return
	}
	found := false
	for _, s := range ev.Stages {
		if s.Error != "" && !s.Observe {
			// A stage that failed (timeout, trap) decided by its failure mode, not by a
			// finding: there is nothing to exclude, and the call may fail the same way again.
			p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: stage %s failed (%s): its failure mode flagged it, not a finding", id, s.Stage, s.Error))
			return
		}
		if s.Observe || !flagged(s.Action) {
			continue
		}
		kind := p.kinds[s.Stage]
		if kind != kindInjection && kind != kindDetector {
			what := "stage " + s.Stage
			if s.Rule != "" {
				what += " (rule " + s.Rule + ")"
			}
			p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: flagged by %s, which tune does not change: review it", id, what))
			found = true
			continue
		}
		if len(s.Evidence) == 0 {
			p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: stage %s flagged it without evidence paths (recorded before tune's audit fields)", id, s.Stage))
			found = true
			continue
		}
		if kind == kindDetector {
			var paths []string
			for _, e := range s.Evidence {
				if e.Path != "" && !slices.Contains(paths, e.Path) {
					paths = append(paths, e.Path)
				}
			}
			p.collectFP(ev, s.Stage, paths)
		}
		for _, e := range s.Evidence {
			if e.Path == "" || e.Label == "" {
				continue
			}
			// As narrow as the stage lets it be: its own rules when it names them (one shell
			// rule, not every command injection in a command).
			rule := exclude.Rule{Tool: nonEmpty(ev.Tool), Server: nonEmpty(ev.Server), Paths: []string{exclude.GeneralPath(e.Path)}, Labels: []string{e.Label},
				Rules: slices.Sorted(slices.Values(e.Rules))}
			key := s.Stage + "\x00" + strings.Join(rule.Server, ",") + "\x00" + strings.Join(rule.Tool, ",") + "\x00" + rule.Paths[0] + "\x00" + e.Label + "\x00" + strings.Join(rule.Rules, ",")
			x := p.excl[key]
			if x == nil {
				x = &Exclusion{Stage: s.Stage, Rule: rule}
				p.excl[key] = x
			}
			if !slices.Contains(x.Support, id) {
				x.Support = append(x.Support, id)
			}
			found = true
		}
	}
	if !found {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: marked false positive, but no stage's verdict flagged it (the action came from %q)", id, ev.Stage))
		return
	}
	p.fixture(ev, abi.ActionAllow)
}

// falseNegative proposes a deny rule for the exact call (its recorded arguments).
func (p *proposer) falseNegative(ev audit.Event) {
	id := ev.Label.Ref
	if flagged(ev.Action) {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: marked false negative, but the decision was %s", id, ev.Action))
		return
	}
	if len(ev.Arguments) == 0 || ev.Method != "tools/call" {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: marked false negative; its arguments were not recorded (audit.arguments: full records them), so no rule can name the call", id))
		return
	}
	args := map[string][]string{}
	var leaves map[string]any
	if err := json.Unmarshal(ev.Arguments, &leaves); err != nil {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: arguments are not an object", id))
		return
	}
	for k, v := range leaves {
		if s, ok := v.(string); ok && !strings.ContainsAny(k, ".*?|#@\\") {
			args[k] = []string{s} // a value with * or ? matches more: stricter for a deny
		}
	}
	if len(args) == 0 {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: marked false negative; no string argument to name the call by", id))
		return
	}
	p.collectFN(ev)
	p.r.Rules = append(p.r.Rules, Rule{ID: "tune-deny-" + strings.ToLower(id), Priority: p.firstPriority() - 1, Action: abi.ActionDeny,
		Reason: "tune: marked false negative by " + ev.Label.By, Server: nonEmpty(ev.Server), Tool: nonEmpty(ev.Tool), Arguments: args, Support: []string{id}})
	p.fixture(ev, abi.ActionDeny)
}

// firstPriority is the lowest priority number of the bundle's rules (1 when there are none).
func (p *proposer) firstPriority() int {
	low := 1
	for i, r := range p.rules {
		if i == 0 || r.Priority < low {
			low = r.Priority
		}
	}
	return low
}

// approvals proposes allow rules from held calls people approved: calls held by one rule of
// the rules stage, of one server and tool, approved at least MinApprovals times, whose
// path-like arguments share a directory; the rule is scoped to it and dropped if any denied
// call of the group would match it.
func (p *proposer) approvals(events []audit.Event) {
	type group struct {
		server, tool, rule string
		approved, denied   []audit.Event
	}
	groups := map[string]*group{}
	for _, ev := range events {
		if ev.Kind != audit.KindDecision && ev.Kind != "" || ev.Approval == nil || ev.RequestedAction != abi.ActionAsk {
			continue
		}
		switch ev.Approval.Decision {
		case audit.ApprovalApproved:
			p.r.Approved++
		case audit.ApprovalDenied:
			p.r.Denied++
		default:
			continue
		}
		if ev.Stage != p.rulesStage || p.rulesStage == "" {
			continue // held by another stage: an allow rule would not release it
		}
		k := ev.Server + "\x00" + ev.Tool + "\x00" + ev.Rule
		g := groups[k]
		if g == nil {
			g = &group{server: ev.Server, tool: ev.Tool, rule: ev.Rule}
			groups[k] = g
		}
		if ev.Approval.Decision == audit.ApprovalApproved {
			g.approved = append(g.approved, ev)
		} else {
			g.denied = append(g.denied, ev)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		if len(g.approved) < p.o.MinApprovals {
			continue
		}
		what := fmt.Sprintf("%s on %s (held by rule %s): approved %d times", g.tool, cmp.Or(g.server, "any server"), g.rule, len(g.approved))
		args, ok := commonPrefixes(g.approved)
		if !ok {
			p.r.Unused = append(p.r.Unused, what+", but its arguments were not recorded (audit.arguments: full) or share no path prefix: no rule proposed")
			continue
		}
		rule := Rule{ID: "tune-allow-" + slug(g.server, g.tool, g.rule), Priority: p.priorityOf(g.rule) - 1, Action: abi.ActionAllow,
			Reason: fmt.Sprintf("tune: approved %d times by a person", len(g.approved)), Server: nonEmpty(g.server), Tool: nonEmpty(g.tool), Arguments: args}
		for _, ev := range g.approved {
			rule.Support = append(rule.Support, ev.ID)
		}
		if d := rule.matchesAny(g.denied); d != "" {
			p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s, but the rule would also allow %s, which a person denied: no rule proposed", what, d))
			continue
		}
		p.r.Rules = append(p.r.Rules, rule)
	}
}

// priorityOf is the priority of the bundle rule id (its lowest number when it is not found).
func (p *proposer) priorityOf(id string) int {
	for _, r := range p.rules {
		if r.ID == id {
			return r.Priority
		}
	}
	return p.firstPriority()
}

// commonPrefixes returns, for each string argument every event has as a path (it starts with
// / or ~/, or holds a /), the glob of the deepest directory they share (at least two levels:
// /workspace/app/** but never /** or /home/**); false when the arguments were not recorded or
// no argument qualifies.
func commonPrefixes(evs []audit.Event) (map[string][]string, bool) {
	var common map[string]string
	for i, ev := range evs {
		var args map[string]any
		if len(ev.Arguments) == 0 || json.Unmarshal(ev.Arguments, &args) != nil {
			return nil, false
		}
		dirs := map[string]string{}
		for k, v := range args {
			if s, ok := v.(string); ok && strings.Contains(s, "/") && !strings.Contains(s, "..") && !strings.ContainsAny(k, ".*?|#@\\") {
				dirs[k] = path.Dir(path.Clean(s))
			}
		}
		if i == 0 {
			common = dirs
			continue
		}
		for k, d := range common {
			nd, ok := dirs[k]
			if !ok {
				delete(common, k)
				continue
			}
			common[k] = sharedDir(d, nd)
		}
	}
	out := map[string][]string{}
	for k, d := range common {
		if depth(d) >= 2 {
			out[k] = []string{strings.TrimSuffix(d, "/") + "/**"}
		}
	}
	return out, len(out) > 0
}

func sharedDir(a, b string) string {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return strings.Join(as[:n], "/")
}

// depth counts a directory's named levels below its root (/ or ~).
func depth(d string) int {
	n := 0
	for _, s := range strings.Split(d, "/") {
		if s != "" && s != "~" && s != "." {
			n++
		}
	}
	if strings.HasPrefix(d, "/home/") || strings.HasPrefix(d, "/Users/") {
		n-- // /home/alice is one level of a person's files
	}
	return n
}

// matchesAny returns the id of the first event the rule would match ("" for none).
func (r Rule) matchesAny(evs []audit.Event) string {
	for _, ev := range evs {
		var args map[string]any
		_ = json.Unmarshal(ev.Arguments, &args)
		all := true
		for k, globs := range r.Arguments {
			s, _ := args[k].(string)
			if !glob.Any(globs, path.Clean(s)) { // as plugins/rules matches arguments
				all = false
				break
			}
		}
		if all {
			return ev.ID
		}
	}
	return ""
}

// fixture records the labelled call as a fixture expecting want, when its arguments were
// recorded.
func (p *proposer) fixture(ev audit.Event, want string) {
	if len(ev.Arguments) == 0 || ev.Method != "tools/call" || ev.Tool == "" {
		return
	}
	params, _ := json.Marshal(map[string]any{"name": ev.Tool, "arguments": ev.Arguments})
	p.fixtures = append(p.fixtures, bundle.Fixture{Name: "tune: " + ev.Label.Ref + " marked " + ev.Label.Verdict + " by " + ev.Label.By,
		Method: "tools/call", Params: params, Server: ev.Server, Principal: ev.Principal, Expected: want})
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func slug(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		for _, r := range strings.ToLower(p) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// ErrOutExists is returned when Options.Out exists and is not empty.
var ErrOutExists = errors.New("tune: the output folder exists and is not empty")

// write copies the bundle to o.Out with the proposals applied.
func (p *proposer) write(m *bundle.Manifest, rulesFile string) error {
	o, r := p.o, p.r
	if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
		return fmt.Errorf("%w: %s", ErrOutExists, o.Out)
	}
	if err := bundle.CopyDir(o.Bundle, o.Out); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(o.Out, bundle.SignatureFile)) // the proposal is signed anew
	mpath := filepath.Join(o.Out, bundle.ManifestFile)
	b, err := os.ReadFile(mpath)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", bundle.ManifestFile, err)
	}
	root := doc.Content[0]
	r.Version = strings.SplitN(m.Version, "-tune.", 2)[0] + "-tune." + o.Now.UTC().Format("20060102150405")
	setScalar(root, "version", r.Version)
	if m.Sequence > 0 {
		r.Sequence = m.Sequence + 1
		setScalar(root, "sequence", strconv.FormatUint(r.Sequence, 10))
	}
	for i := range r.Exclusions {
		x := &r.Exclusions[i]
		st := stageNode(root, x.Stage)
		if st == nil {
			return fmt.Errorf("tune: stage %s not in %s", x.Stage, bundle.ManifestFile)
		}
		cfg := mapping(st, "config")
		list := child(cfg, "exclude")
		if list == nil {
			list = &yaml.Node{Kind: yaml.SequenceNode}
			cfg.Content = append(cfg.Content, scalar("exclude"), list)
		}
		x.Reason = fmt.Sprintf("tune: %d decisions marked false positive (%s)", len(x.Support), strings.Join(first(x.Support, 5), ", "))
		var n yaml.Node
		if err := n.Encode(x.Rule); err != nil {
			return err
		}
		n.Style = yaml.FlowStyle
		list.Content = append(list.Content, &n)
	}
	if r.Fixtures = len(p.fixtures); r.Fixtures > 0 {
		dir := cmp.Or(m.Fixtures, "fixtures")
		if m.Fixtures == "" {
			setScalar(root, "fixtures", dir)
		}
		if err := os.MkdirAll(filepath.Join(o.Out, dir), 0o755); err != nil {
			return err
		}
		fb, _ := json.MarshalIndent(p.fixtures, "", " ")
		if err := os.WriteFile(filepath.Join(o.Out, dir, "tune-labels.json"), append(fb, '\n'), 0o644); err != nil {
			return err
		}
	}
	if err := p.writeThresholds(root); err != nil {
		return err
	}
	if p.model != nil {
		if err := p.writeModel(child(root, "models")); err != nil {
			return err
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	if err := os.WriteFile(mpath, out, 0o644); err != nil {
		return err
	}
	if len(r.Rules) > 0 {
		return p.writeRules(rulesFile)
	}
	return nil
}

func (p *proposer) writeRules(file string) error {
	fp := filepath.Join(p.o.Out, file)
	b, err := os.ReadFile(fp)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	list := child(doc.Content[0], "rules")
	if list == nil {
		return fmt.Errorf("tune: %s has no rules list", file)
	}
	for _, r := range p.r.Rules {
		when := map[string]any{}
		if len(r.Server) > 0 {
			when["server"] = r.Server
		}
		if len(r.Tool) > 0 {
			when["tool"] = r.Tool
		}
		if len(r.Arguments) > 0 {
			when["arguments"] = r.Arguments
		}
		var n yaml.Node
		if err := n.Encode(map[string]any{"id": r.ID, "priority": r.Priority, "action": r.Action,
			"reason": r.Reason + " (" + strings.Join(first(r.Support, 5), ", ") + ")", "when": when}); err != nil {
			return err
		}
		list.Content = append(list.Content, &n)
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	return os.WriteFile(fp, out, 0o644)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func mapping(m *yaml.Node, key string) *yaml.Node {
	if c := child(m, key); c != nil && c.Kind == yaml.MappingNode {
		return c
	}
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = n
			return n
		}
	}
	m.Content = append(m.Content, scalar(key), n)
	return n
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func setScalar(m *yaml.Node, key, v string) {
	if c := child(m, key); c != nil {
		c.Kind, c.Value, c.Tag, c.Style = yaml.ScalarNode, v, "", 0
		return
	}
	m.Content = append(m.Content, scalar(key), scalar(v))
}

func stageNode(root *yaml.Node, name string) *yaml.Node {
	stages := child(root, "stages")
	if stages == nil {
		return nil
	}
	for _, s := range stages.Content {
		if n := child(s, "name"); n != nil && n.Value == name {
			return s
		}
	}
	return nil
}
