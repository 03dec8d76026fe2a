package chain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/glob"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Evaluator is what a stage calls: a plugin pool (host/plugin) or a stand-in for a stage whose
// plugin is unavailable.
type Evaluator interface {
	Evaluate(ctx context.Context, envelope []byte) ([]byte, error)
}

// boundedEvaluator is an Evaluator that bounds its wait for capacity and the call together by
// a duration it is given (host/plugin's Plugin), so the chain need not make a context with a
// timer for every stage call.
type boundedEvaluator interface {
	EvaluateWithin(ctx context.Context, envelope []byte, bound time.Duration) ([]byte, error)
}

// verdictEvaluator is a boundedEvaluator that decodes the verdict itself, with the decoder it
// is given, before its instance is released (host/plugin's Plugin): the output is read where it
// lies, never copied out. The decoder keeps no byte of it (DecodeVerdict copies what it keeps).
type verdictEvaluator interface {
	EvaluateVerdict(ctx context.Context, envelope []byte, bound time.Duration, dst *abi.Verdict, decode func(out []byte, dst *abi.Verdict) error) error
}

// decodeInto is DecodeVerdict into dst, as verdictEvaluator takes it.
func decodeInto(b []byte, dst *abi.Verdict) (err error) {
	*dst, err = DecodeVerdict(b)
	return err
}

// Closer is implemented by evaluators that hold resources.
type Closer interface {
	Close(ctx context.Context) error
}

// ErrUnavailable marks a stage whose plugin could not be provided (e.g. inference without its
// runtime library); the stage's failure mode applies on every call.
var ErrUnavailable = errors.New("chain: stage unavailable")

// Match selects the messages a stage sees. Empty lists match everything, except Methods, whose
// zero value means tools/call only.
type Match struct {
	Methods []string // glob patterns over the JSON-RPC method
	Tools   []string // glob patterns over tool (or prompt) name; resource URI for resources/read
	Servers []string // glob patterns over the upstream name
}

// DefaultMethods is the Methods a stage matches when its Match names none.
var DefaultMethods = []string{"tools/call"}

// Matches reports whether env is for this stage.
func (m Match) Matches(env *abi.Envelope) bool {
	methods := m.Methods
	if len(methods) == 0 {
		methods = DefaultMethods
	}
	if !glob.Any(methods, env.Method) || !glob.Any(m.Servers, env.Server) {
		return false
	}
	if len(m.Tools) == 0 {
		return true
	}
	target := env.Tool
	switch {
	case env.Prompt != "":
		target = env.Prompt
	case env.URI != "":
		target = env.URI
	}
	return glob.Any(m.Tools, target)
}

// What a bundle does with a message no stage matches (Coverage.Action).
const (
	// UncoveredJudge runs Coverage.Stages on the message whatever they match (the default).
	UncoveredJudge = "judge"
	// UncoveredPass lets the message through without a stage.
	UncoveredPass = "pass"
	// UncoveredRefuse denies the message.
	UncoveredRefuse = "refuse"
)

// Values of Decision.Coverage: how the message was covered.
const (
	CoveredByStage = "stages"  // at least one stage matched it
	CoveredJudged  = "judged"  // no stage matched: Coverage.Stages judged it
	CoveredPassed  = "passed"  // no stage matched: passed as the bundle declares
	CoveredRefused = "refused" // no stage matched: refused as the bundle declares
	RuleUncovered  = "coverage/uncovered"
	StageCoverage  = "coverage"
)

// Coverage is a bundle's declaration for the messages its stages do not match: every message in
// either direction reaches the chain, and one no stage covers is judged, passed or refused as
// declared here, never passed by omission.
type Coverage struct {
	// Action for an uncovered message whose method is in neither Pass nor Refuse: judge
	// (default), pass or refuse.
	Action string
	// Stages judge an uncovered message (Action judge), whatever their Match and phase; empty =
	// every stage of the message's phase.
	Stages []string
	// Pass and Refuse are method globs, per phase, declared to pass (they carry no text to the
	// model) or be refused when no stage matches them, before Action applies.
	Pass   Methods
	Refuse Methods
}

// Methods are method globs for each phase.
type Methods struct {
	Request  []string // requests and notifications, whoever sends them
	Response []string // answers
}

// For returns the globs of phase.
func (m Methods) For(phase string) []string {
	if phase == abi.PhaseResponse {
		return m.Response
	}
	return m.Request
}

// Stage is one step of a chain.
type Stage struct {
	Name       string
	Plugin     Evaluator
	Match      Match
	Request    bool // runs in the request phase
	Response   bool // runs in the response phase
	FailClosed bool // a failure counts as deny (true) or as no opinion (false)
	NeedsPrior bool // reads earlier verdicts: starts a new group and waits for the ones before
	// ResolvesSample marks a judge: when the merged action so far is sample, this stage's
	// opinion (allow, ask or deny) replaces it instead of merging by severity.
	ResolvesSample bool
	// OnlyOnSample skips the stage unless an earlier verdict of the message is sample (a judge
	// that decides nothing else: the example bundle's, on ~35-55 µs of guest time a call). It
	// still counts for coverage; skipped, it merges as none would.
	OnlyOnSample bool
	Timeout      time.Duration
	// Observe runs the stage and records its verdict (StageResult.Observe) without merging
	// it: a stage tried on live traffic before it enforces.
	Observe bool
	// View hands the stage the view of the envelope (sdk/ABI.md "The view"; its describe says
	// input "view") instead of the JSON envelope. The chain lays the view out once per message
	// for every such stage; a message it cannot lay out (or whose view would be too large) goes
	// to the stage as the JSON envelope, which a view stage also reads.
	View bool
	// ViewPrior marks a View stage that reads earlier verdicts from the view (its describe
	// says view layout 2 or later): it gets a layout-2 view, the message's view with the prior
	// table added, holding what the JSON envelope's prior would (the group's earlier verdicts).
	// A NeedsPrior View stage without ViewPrior (layout 1 carries no prior) gets the JSON
	// envelope.
	ViewPrior bool
}

// viewInput reports whether s is handed a view, when the message has one.
func (s *Stage) viewInput() bool { return s.View && (!s.NeedsPrior || s.ViewPrior) }

// priorView reports whether s is handed the layout-2 view with the group's prior.
func (s *Stage) priorView() bool { return s.View && s.ViewPrior }

func (s *Stage) inPhase(phase string) bool {
	if phase == abi.PhaseResponse {
		return s.Response
	}
	return s.Request
}

// Info identifies the bundle a chain was built from.
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	// Degraded names the stages that cannot run here ("stage: why"), when the operator serves
	// the bundle degraded; each fails by its failure mode on every call.
	Degraded []string `json:"degraded,omitempty"`
}

// Options configure a chain.
type Options struct {
	Info          Info
	Stages        []*Stage
	DefaultAction string // when no stage has an opinion; "" = deny
	// AskFallback and SampleFallback resolve ask and sample when no human or judge decides
	// them (allow or deny; "" = deny).
	AskFallback    string
	SampleFallback string
	// Uncovered is what happens to a message no stage matches in its phase (see Coverage).
	Uncovered Coverage
	// Uncertain maps a stage's uncertain verdict to ask, deny or sample per way in: keys are
	// envelope transports (http, stdio, hook, mcp, fixture, playground) and "default"; a
	// transport not named takes default, and without default uncertain is ask.
	Uncertain map[string]string
	// Observe puts the whole bundle in observe mode: it decides and records, and the engine
	// enforces nothing (host/proxy: the audit event's detail.observed says what would have
	// happened).
	Observe bool
	// ShowDenied keeps tools the caller may never call in tools/list (bundle.yaml
	// tools_list.hide_denied: false); by default they are left out.
	ShowDenied bool
	// Extra is free data carried with the chain (the bundle's manifest, for admin views).
	Extra  any
	Logger *slog.Logger // nil = discard
	// OnStage, if set, is called after each stage call (for metrics).
	OnStage func(stage, phase, action string, d time.Duration, err error)
	// OnClose, if set, runs once after the chain has closed its stages.
	OnClose func()
}

// Chain is an immutable, ordered list of stages built from one bundle.
type Chain struct {
	o      Options
	groups [][]*Stage
	// inflight counts the calls in Evaluate; procs is GOMAXPROCS at New, 0 below
	// minFanOutProcs (idle, fanOutProcs).
	inflight atomic.Int32
	procs    int
	// noOpinion is the reason of a decision no stage had an opinion on, made once at New
	// rather than concatenated on every such call.
	noOpinion string

	mu      sync.Mutex
	refs    int
	closing bool
	closed  chan struct{}
	once    sync.Once
}

// New builds a chain. Stages are grouped: a group is a run of stages that read no earlier
// verdicts, so they may run concurrently; a stage with NeedsPrior starts a new group.
func New(o Options) (*Chain, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DefaultAction == "" {
		o.DefaultAction = abi.ActionDeny
	}
	if !abi.ValidAction(o.DefaultAction) {
		return nil, fmt.Errorf("chain: default action %q is not an action", o.DefaultAction)
	}
	for k, a := range o.Uncertain {
		if !UncertainTarget(a) {
			return nil, fmt.Errorf("chain: uncertain %s: %q is not ask, deny or sample", k, a)
		}
	}
	switch o.Uncovered.Action {
	case "":
		o.Uncovered.Action = UncoveredJudge
	case UncoveredJudge, UncoveredPass, UncoveredRefuse:
	default:
		return nil, fmt.Errorf("chain: uncovered action %q is not judge, pass or refuse", o.Uncovered.Action)
	}
	c := &Chain{o: o, closed: make(chan struct{}), procs: fanOutProcs(runtime.GOMAXPROCS(0)),
		noOpinion: "no stage had an opinion; bundle default " + o.DefaultAction}
	var g []*Stage
	seen := map[string]bool{}
	for _, s := range o.Stages {
		if s.Name == "" || seen[s.Name] {
			return nil, fmt.Errorf("chain: stage name %q is empty or repeated", s.Name)
		}
		seen[s.Name] = true
		if s.NeedsPrior && len(g) > 0 {
			c.groups = append(c.groups, g)
			g = nil
		}
		g = append(g, s)
	}
	if len(g) > 0 {
		c.groups = append(c.groups, g)
	}
	for _, n := range o.Uncovered.Stages {
		if !seen[n] {
			return nil, fmt.Errorf("chain: uncovered stages: no stage is named %q", n)
		}
	}
	return c, nil
}

// Observing reports whether the bundle is in observe mode (Options.Observe).
func (c *Chain) Observing() bool { return c.o.Observe }

// HidesDenied reports whether tools/list leaves out the tools the caller may never call
// (Options.ShowDenied unset).
func (c *Chain) HidesDenied() bool { return !c.o.ShowDenied }

// Covered reports whether a stage of the chain matches env in its phase.
func (c *Chain) Covered(env *abi.Envelope) bool {
	phase := env.Phase
	if phase == "" {
		phase = abi.PhaseRequest
	}
	for _, s := range c.o.Stages {
		if s.inPhase(phase) && s.Match.Matches(env) {
			return true
		}
	}
	return false
}

// Uncovered returns the chain's declaration for messages no stage matches.
func (c *Chain) Uncovered() Coverage { return c.o.Uncovered }

// uncoveredAction is what the chain does with env, which no stage matches: judge, pass or refuse.
func (c *Chain) uncoveredAction(env *abi.Envelope, phase string) string {
	u := c.o.Uncovered
	if pass := u.Pass.For(phase); len(pass) > 0 && glob.Any(pass, env.Method) {
		return UncoveredPass
	}
	if refuse := u.Refuse.For(phase); len(refuse) > 0 && glob.Any(refuse, env.Method) {
		return UncoveredRefuse
	}
	return u.Action
}

// judgesUncovered reports whether s judges messages no stage matches (phase is theirs).
func (c *Chain) judgesUncovered(s *Stage, phase string) bool {
	if len(c.o.Uncovered.Stages) == 0 {
		return s.inPhase(phase)
	}
	return slices.Contains(c.o.Uncovered.Stages, s.Name)
}

// Info returns the bundle identity.
func (c *Chain) Info() Info { return c.o.Info }

// Stages returns the stages in order.
func (c *Chain) Stages() []*Stage { return slices.Clone(c.o.Stages) }

// Fallback returns how action (ask or sample) resolves without a human or judge: allow or deny.
func (c *Chain) Fallback(action string) string {
	f := c.o.AskFallback
	if action == abi.ActionSample {
		f = c.o.SampleFallback
	}
	if f != abi.ActionAllow {
		return abi.ActionDeny
	}
	return f
}

// Extra returns the free data given in Options.Extra or SetExtra.
func (c *Chain) Extra() any { return c.o.Extra }

// SetExtra sets the free data; call it before the chain is shared.
func (c *Chain) SetExtra(v any) { c.o.Extra = v }

// UncertainTarget reports whether a is what an uncertain verdict may become: ask, deny or
// sample (never allow: a stage that found something is never waved through by a mapping).
func UncertainTarget(a string) bool {
	return a == abi.ActionAsk || a == abi.ActionDeny || a == abi.ActionSample
}

// UncertainAction is what a stage's uncertain verdict becomes for a message that came in by
// transport (Options.Uncertain).
func (c *Chain) UncertainAction(transport string) string {
	if a, ok := c.o.Uncertain[transport]; ok {
		return a
	}
	if a, ok := c.o.Uncertain["default"]; ok {
		return a
	}
	return abi.ActionAsk
}

// DefaultAction is the action when no stage has an opinion.
func (c *Chain) DefaultAction() string { return c.o.DefaultAction }

// Decision is the merged outcome of one phase.
type Decision struct {
	Action       string          // merged action (ask and sample are not resolved here)
	Reason       string          // from the deciding stage
	Rule         string          // from the deciding stage
	Stage        string          // the deciding stage; "" when the default applied
	Default      bool            // no stage had an opinion
	Guidance     string          // from a sample verdict
	Score        float64         // highest stage score
	Labels       []string        // union of labels
	Arguments    json.RawMessage // replacement arguments (request phase), last writer wins
	Result       json.RawMessage // replacement result (response phase), last writer wins
	RequireToken bool
	Fallback     string
	Stages       []abi.StageResult
	// Coverage says how the message was covered (CoveredByStage, CoveredJudged, ...).
	Coverage string
}

// StageFailed reports whether a stage of d failed (a timeout or trap: its failure mode, not its
// judgement, spoke). A nil decision has no failed stage.
func (d *Decision) StageFailed() bool {
	if d == nil {
		return false
	}
	for _, st := range d.Stages {
		if st.Error != "" {
			return true
		}
	}
	return false
}

type firstGroupKey struct{}

// WithFirstGroupOnly returns ctx under which Evaluate runs only the chain's first group of
// stages (those before the first NeedsPrior stage): for a question about what those stages
// alone say (the engine's tools/list filter), without running a judge or any later stage.
func WithFirstGroupOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, firstGroupKey{}, true)
}

// newDecision makes a decision, room for its n stage results (stages, empty, of capacity n: one
// result a stage at most, no regrowth; Evaluate sets it as the decision's Stages once a stage
// is to run) and n verdict slots, in one allocation for up to 12 stages. They live as long as
// one another: the decision keeps pointers into the verdicts.
func newDecision(n int) (_ *Decision, stages []abi.StageResult, verdicts []abi.Verdict) {
	switch {
	case n <= 2:
		m := new(struct {
			d Decision
			r [2]abi.StageResult
			v [2]abi.Verdict
		})
		return &m.d, m.r[:0:n], m.v[:n:n]
	case n <= 4:
		m := new(struct {
			d Decision
			r [4]abi.StageResult
			v [4]abi.Verdict
		})
		return &m.d, m.r[:0:n], m.v[:n:n]
	case n <= 6:
		m := new(struct {
			d Decision
			r [6]abi.StageResult
			v [6]abi.Verdict
		})
		return &m.d, m.r[:0:n], m.v[:n:n]
	case n <= 8:
		m := new(struct {
			d Decision
			r [8]abi.StageResult
			v [8]abi.Verdict
		})
		return &m.d, m.r[:0:n], m.v[:n:n]
	case n <= 12:
		m := new(struct {
			d Decision
			r [12]abi.StageResult
			v [12]abi.Verdict
		})
		return &m.d, m.r[:0:n], m.v[:n:n]
	}
	return &Decision{}, make([]abi.StageResult, 0, n), make([]abi.Verdict, n)
}

// Evaluate runs the stages for env.Phase. It never returns an error for a stage failure (that is
// the stage's failure mode); it returns an error only when env cannot be encoded or ctx ends.
func (c *Chain) Evaluate(ctx context.Context, env *abi.Envelope) (*Decision, error) {
	d, stages, verdicts := newDecision(len(c.o.Stages))
	d.Action = abi.ActionNone
	phase := env.Phase
	if phase == "" {
		phase = abi.PhaseRequest
	}
	decidingSev := -1
	prior := env.Prior
	defer func() { env.Prior = prior }()
	d.Coverage = CoveredByStage
	selected := func(s *Stage) bool { return s.inPhase(phase) && s.Match.Matches(env) }
	if !c.Covered(env) {
		switch c.uncoveredAction(env, phase) {
		case UncoveredPass:
			// As if every stage had no opinion: a call gets the bundle's default action.
			d.Action, d.Default, d.Coverage = c.o.DefaultAction, true, CoveredPassed
			d.Reason = fmt.Sprintf("no stage covers %s (%s); bundle %s passes it (default %s)", env.Method, phase, c.o.Info.Name, c.o.DefaultAction)
			return d, nil
		case UncoveredRefuse:
			d.Action, d.Coverage, d.Rule, d.Stage = abi.ActionDeny, CoveredRefused, RuleUncovered, StageCoverage
			d.Reason = fmt.Sprintf("no stage covers %s (%s); bundle %s refuses uncovered messages", env.Method, phase, c.o.Info.Name)
			return d, nil
		}
		d.Coverage = CoveredJudged
		selected = func(s *Stage) bool { return c.judgesUncovered(s, phase) }
		if !slices.ContainsFunc(c.o.Stages, selected) {
			// Judge, by stages the bundle has none of in this phase: it declared that phase
			// unjudged (a rules-only bundle's answers), which is what the decision says.
			d.Action, d.Default, d.Coverage = c.o.DefaultAction, true, CoveredPassed
			d.Reason = fmt.Sprintf("no stage covers %s (%s) and bundle %s has no stage to judge it (default %s)", env.Method, phase, c.o.Info.Name, c.o.DefaultAction)
			return d, nil
		}
	}
	c.inflight.Add(1)
	defer c.inflight.Add(-1)
	// The envelope is encoded once, without prior verdicts; each group's input is that encoding
	// with its prior spliced in. It is encoded again only after a stage rewrote the arguments
	// (request) or the result (response). The view is laid out once from that encoding; a
	// group with a ViewPrior stage gets a copy of it with the group's prior table appended
	// (layout 2), not laid out again.
	var base, view []byte
	onlyFirst, _ := ctx.Value(firstGroupKey{}).(bool)
	d.Stages = stages
	gr := groupRuns.Get().(*groupRun)
	gr.c, gr.ctx, gr.phase, gr.transport = c, ctx, phase, env.Transport
	defer gr.release()
	for gi, g := range c.groups {
		if gi > 0 && onlyFirst {
			break
		}
		gr.reset(len(g))
		for _, s := range g {
			if selected(s) && (!s.OnlyOnSample || sampled(prior, d.Stages)) {
				gr.run = append(gr.run, s)
			}
		}
		run := gr.run
		if len(run) == 0 {
			continue
		}
		if base == nil {
			env.Prior = nil
			b, err := appendEnvelope(make([]byte, 0, envelopeSize(env)), env)
			if err != nil {
				return nil, fmt.Errorf("chain: encode envelope: %w", err)
			}
			base, view = b, nil
		}
		pr := priorOf(prior, d.Stages)
		if view == nil && slices.ContainsFunc(run, (*Stage).viewInput) {
			view = c.layOut(base)
		}
		gr.view, gr.pview, gr.in = view, nil, nil
		if len(view) > 0 && slices.ContainsFunc(run, (*Stage).priorView) {
			v, err := abi.AppendViewPrior(nil, view, pr)
			if err != nil {
				// Not expected (the view is AppendView's); those stages get JSON instead.
				c.o.Logger.Warn("prior not added to the view; its stages get JSON", "err", err)
			}
			gr.pview = v
		}
		// JSON is encoded only when a stage of the group gets it.
		if slices.ContainsFunc(run, gr.wantsJSON) {
			b, err := withPrior(base, pr)
			if err != nil {
				return nil, fmt.Errorf("chain: encode envelope: %w", err)
			}
			gr.in = b
		}
		results := gr.results[:len(run)]
		// The verdicts of this Evaluate's stages, one slot a stage, made with the decision
		// (newDecision) rather than one a stage: the decision keeps pointers into them
		// (StageResult.Verdict), so they are never pooled; each Evaluate makes its own.
		if len(verdicts) < len(run) { // not expected: a stage runs once a call
			verdicts = make([]abi.Verdict, max(len(run), len(c.o.Stages)))
		}
		gr.verdicts, verdicts = verdicts[:len(run):len(run)], verdicts[len(run):]
		// Helper goroutines, one per idle core and at most one fewer than the stages, take the
		// group's stages from the back while the caller's goroutine takes them from the front
		// (groupWork). A helper that starts after the caller has taken every stage finds none
		// and is not waited for, so a late start (the other core busy) costs the call nothing
		// beyond running the group inline. With every core busy the group runs inline: more
		// goroutines would only add their start, stack growth and wake-ups to the same CPU work.
		if spread := max(0, min(len(run)-1, c.idle())); spread == 0 {
			for i := range run {
				gr.callAt(i)
			}
		} else {
			w := newGroupWork(len(run))
			callAt := gr.callAt
			for range spread {
				go w.help(callAt)
			}
			w.run(callAt)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		final := false
		for i, r := range results {
			if run[i].Observe {
				// Recorded, not merged: an observed stage enforces nothing.
				r.Observe = true
				d.Stages = append(d.Stages, r)
				continue
			}
			d.Stages = append(d.Stages, r)
			sev := abi.Severity(r.Action)
			if run[i].ResolvesSample && d.Action == abi.ActionSample && r.Action != abi.ActionNone && r.Action != abi.ActionSample && r.Error == "" {
				// The judge decided what a stage handed it.
				decidingSev = sev
				d.Action, d.Reason, d.Rule, d.Stage = r.Action, r.Reason, r.Rule, r.Stage
			} else if sev > decidingSev && r.Action != abi.ActionNone {
				decidingSev = sev
				d.Action, d.Reason, d.Rule, d.Stage = r.Action, r.Reason, r.Rule, r.Stage
			}
			if r.Score > d.Score {
				d.Score = r.Score
			}
			for _, l := range r.Labels {
				if !slices.Contains(d.Labels, l) {
					d.Labels = append(d.Labels, l)
				}
			}
			if v := r.Verdict; v != nil {
				if v.Guidance != "" {
					d.Guidance = v.Guidance
				}
				if len(v.Arguments) > 0 {
					d.Arguments = v.Arguments
				}
				if len(v.Result) > 0 {
					d.Result = v.Result
				}
				if v.RequireToken {
					d.RequireToken = true
				}
				if v.Fallback != "" {
					d.Fallback = v.Fallback
				}
				if v.Final && v.Action == abi.ActionAllow {
					final = true
				}
			}
		}
		if d.Action == abi.ActionDeny {
			return d, nil // a decisive deny short-circuits
		}
		if final && d.Action == abi.ActionAllow {
			return d, nil
		}
		// Arguments replaced by a stage are what later stages judge.
		if len(d.Arguments) > 0 && phase == abi.PhaseRequest && !bytes.Equal(env.Arguments, d.Arguments) {
			env.Arguments = d.Arguments
			base = nil
		}
		if len(d.Result) > 0 && phase == abi.PhaseResponse && !bytes.Equal(env.Result, d.Result) {
			env.Result = d.Result
			base = nil
		}
	}
	if d.Action == abi.ActionNone {
		d.Action = c.o.DefaultAction
		d.Default = true
		if d.Reason == "" {
			d.Reason = c.noOpinion
		}
	}
	return d, nil
}

// groupRun is one group's stages in one Evaluate and the inputs they get: methods where
// closures were, and slices kept in groupRuns, so that running a group allocates nothing of
// its own (the run, the results and four closures a group before: 20 allocations a served call
// of the example chain, BenchmarkServedPath).
type groupRun struct {
	c                *Chain
	ctx              context.Context
	phase, transport string
	run              []*Stage
	results          []abi.StageResult
	view, pview, in  []byte // the view, the view with the group's prior, the JSON with it
	// verdicts holds one slot a stage of run, where call decodes its verdict: this
	// Evaluate's own memory, never the pool's (release drops it).
	verdicts []abi.Verdict
}

var groupRuns = sync.Pool{New: func() any { return new(groupRun) }}

// reset empties the run and makes room for n stages and their results.
func (g *groupRun) reset(n int) {
	if cap(g.run) < n {
		g.run, g.results = make([]*Stage, 0, n), make([]abi.StageResult, n)
	}
	clear(g.results)
	g.run = g.run[:0]
}

// release drops every reference the group held and returns it to groupRuns. A helper goroutine
// that started after its group was done holds callAt but never calls it (groupWork has nothing
// left to hand it), so the pooled value is not touched again by an old Evaluate.
func (g *groupRun) release() {
	clear(g.run[:cap(g.run)])
	clear(g.results)
	g.c, g.ctx, g.view, g.pview, g.in, g.verdicts = nil, nil, nil, nil, nil, nil
	groupRuns.Put(g)
}

// input is the input stage s gets: the view, the view with the prior, or the JSON (in).
func (g *groupRun) input(s *Stage) []byte {
	switch {
	case len(g.view) == 0 || !s.viewInput():
		return g.in
	case s.priorView():
		if g.pview == nil { // it could not be made: JSON instead
			return g.in
		}
		return g.pview
	}
	return g.view
}

// wantsJSON reports whether stage s gets the JSON envelope (no view for it).
func (g *groupRun) wantsJSON(s *Stage) bool {
	return len(g.view) == 0 || !s.viewInput() || (s.priorView() && g.pview == nil)
}

func (g *groupRun) callAt(i int) {
	g.results[i] = g.c.call(g.ctx, g.run[i], g.phase, g.transport, g.input(g.run[i]), &g.verdicts[i])
}

// groupWork hands a group's stages, by index, to the caller's goroutine (from the front) and to
// helper goroutines (from the back); each stage is taken once. The caller waits only for the
// stages a helper took: a helper that has not started when the caller finds nothing left takes
// nothing and ends, and the caller does not wait for it.
type groupWork struct {
	mu     sync.Mutex
	lo, hi int // stages lo..hi-1 are not taken yet
	left   sync.WaitGroup
}

func newGroupWork(n int) *groupWork {
	w := &groupWork{hi: n}
	w.left.Add(n)
	return w
}

// take returns the next stage from the front (or the back) and false when none is left.
func (w *groupWork) take(back bool) (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lo >= w.hi {
		return 0, false
	}
	if back {
		w.hi--
		return w.hi, true
	}
	w.lo++
	return w.lo - 1, true
}

// help runs stages from the back until none is left.
func (w *groupWork) help(call func(int)) { w.drain(true, call) }

// run runs stages from the front until none is left, then waits for those helpers took.
func (w *groupWork) run(call func(int)) {
	w.drain(false, call)
	w.left.Wait()
}

// drain runs stages taken from the back (or the front) until none is left.
func (w *groupWork) drain(back bool, call func(int)) {
	for {
		i, ok := w.take(back)
		if !ok {
			return
		}
		call(i)
		w.left.Done()
	}
}

// minFanOutProcs is the fewest cores on which a group's stages are spread over helper
// goroutines. Below it every group runs inline: on two cores (where the client, the upstream,
// NATS and the audit share them with the calls) spreading cost more than it saved, measured
// with the gateway's own time on a quiet machine, three alternations of loadgen (2026-12-01):
// at c=1 own p50 285–301 µs inline against 312–354 with the spread, CPU a call 668–707 against
// 727–893; at c=16 2,104–2,162 calls/s against 1,733–1,907 and 387–430 µs a call against
// 449–491. Four cores and more keep the spread, not measured here.
const minFanOutProcs = 4

// fanOutProcs is the cores Evaluate may spread a group over (Chain.procs): 0, always inline,
// below minFanOutProcs.
func fanOutProcs(procs int) int {
	if procs < minFanOutProcs {
		return 0
	}
	return procs
}

// idle is the number of cores no call in Evaluate is using: GOMAXPROCS when the chain was built
// minus the calls in Evaluate (this one included).
func (c *Chain) idle() int { return c.procs - int(c.inflight.Load()) }

// maxViewGrowth bounds a view against its envelope: a view larger than twice the JSON plus
// 64 KiB (a message of many tiny values, 40 bytes of node each) is not used, and view stages get
// the JSON envelope instead, which fits the memory their cap was sized for.
const maxViewGrowth = 2

// layOut returns the view of the JSON envelope base, or an empty slice (not nil: laid out once)
// when it cannot be laid out or would be too large; view stages then get the JSON envelope.
func (c *Chain) layOut(base []byte) []byte {
	v, err := abi.AppendView(nil, base) // allocated at the size it comes to
	if err != nil {
		c.o.Logger.Debug("envelope not laid out as a view; view stages get JSON", "err", err)
		return []byte{}
	}
	if len(v) > maxViewGrowth*len(base)+64<<10 {
		c.o.Logger.Debug("view too large; view stages get JSON", "view_bytes", len(v), "envelope_bytes", len(base))
		return []byte{}
	}
	return v
}

// withPrior returns the envelope encoding base (which has no "prior") with prior added. prior is
// the envelope's last field, so the bytes equal encoding the envelope with it.
func withPrior(base []byte, prior []abi.Prior) ([]byte, error) {
	if len(prior) == 0 {
		return base, nil
	}
	pb, err := json.Marshal(prior)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(base)+len(pb)+10)
	out = append(out, base[:len(base)-1]...)
	out = append(out, `,"prior":`...)
	out = append(out, pb...)
	return append(out, '}'), nil
}

// sampled reports whether any verdict a stage would read as prior (priorOf) is sample.
func sampled(base []abi.Prior, rs []abi.StageResult) bool {
	return slices.ContainsFunc(base, func(p abi.Prior) bool { return p.Action == abi.ActionSample }) ||
		slices.ContainsFunc(rs, func(r abi.StageResult) bool { return r.Action == abi.ActionSample })
}

func priorOf(base []abi.Prior, rs []abi.StageResult) []abi.Prior {
	if len(rs) == 0 {
		return base
	}
	out := append(make([]abi.Prior, 0, len(base)+len(rs)), base...) // one allocation, at its size
	for _, r := range rs {
		p := abi.Prior{Stage: r.Stage, Action: r.Action, Score: r.Score, Labels: r.Labels, Rule: r.Rule, Reason: r.Reason}
		if r.Verdict != nil {
			p.Guidance = r.Verdict.Guidance
		}
		out = append(out, p)
	}
	return out
}

// call runs stage s on in. Its verdict is decoded into slot, which the result's Verdict points
// at: the caller's, one slot a stage call, not shared with another call.
func (c *Chain) call(ctx context.Context, s *Stage, phase, transport string, in []byte, slot *abi.Verdict) abi.StageResult {
	r := abi.StageResult{Stage: s.Name, Phase: phase}
	start := time.Now()
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		// A child of the request's span (host/proxy); with tracing off there is none and this
		// costs one context lookup.
		var stage trace.Span
		ctx, stage = span.TracerProvider().Tracer(tracerScope).Start(ctx, "palisade.stage "+s.Name,
			trace.WithAttributes(attribute.String("palisade.stage", s.Name), attribute.String("palisade.phase", phase)))
		defer func() {
			stage.SetAttributes(attribute.String("palisade.action", r.Action), attribute.Float64("palisade.score", r.Score))
			if r.Error != "" {
				stage.SetStatus(codes.Error, r.Error)
			}
			stage.End()
		}()
	}
	var out []byte
	var err error
	decoded := false // the verdict is in slot already (verdictEvaluator)
	if s.Plugin == nil {
		err = ErrUnavailable
	} else if e, ok := s.Plugin.(verdictEvaluator); ok && s.Timeout > 0 {
		// Decoded where the output lies, before its instance is released: no copy of it.
		err, decoded = e.EvaluateVerdict(ctx, in, s.Timeout*4, slot, decodeInto), true
	} else {
		// The plugin runtime enforces the timeout; the bound of four times it covers waiting
		// for a pooled instance too. A host/plugin plugin applies it itself, with no timer
		// unless it has to wait; another evaluator gets a context with that deadline.
		if b, ok := s.Plugin.(boundedEvaluator); ok && s.Timeout > 0 {
			out, err = b.EvaluateWithin(ctx, in, s.Timeout*4)
		} else {
			cctx := ctx
			if s.Timeout > 0 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, s.Timeout*4)
				defer cancel()
			}
			out, err = s.Plugin.Evaluate(cctx, in)
		}
	}
	var v abi.Verdict
	switch {
	case err == nil && decoded:
		v = *slot
	case err == nil:
		v, err = DecodeVerdict(out)
	}
	el := time.Since(start)
	r.LatencyUS = el.Microseconds()
	if err != nil {
		r.Error = err.Error()
		if s.FailClosed {
			r.Action = abi.ActionDeny
			r.Reason = fmt.Sprintf("stage %s failed (fail closed): %s", s.Name, firstLine(err.Error()))
		} else {
			r.Action = abi.ActionNone
			r.Reason = fmt.Sprintf("stage %s failed (fail open): %s", s.Name, firstLine(err.Error()))
		}
		c.o.Logger.Warn("stage failed", "stage", s.Name, "phase", phase, "fail_closed", s.FailClosed, "err", err)
	} else {
		r.Action, r.Score, r.Labels, r.Reason, r.Rule, r.Evidence = v.Action, v.Score, v.Labels, v.Reason, v.Rule, v.Evidence
		*slot = v
		r.Verdict = slot
		if v.Action == abi.ActionUncertain {
			// Mapped here, before merging: the decision is ask, deny or sample for this way in.
			r.Uncertain, r.Action = true, c.UncertainAction(transport)
		}
		if v.Incomplete && v.Action != abi.ActionDeny {
			// The stage could not look at everything: never clean. Failure mode decides.
			r.Error = "incomplete verdict"
			if s.FailClosed {
				r.Action = abi.ActionDeny
				r.Reason = fmt.Sprintf("stage %s could not examine all input (fail closed): %s", s.Name, v.Reason)
			}
			c.o.Logger.Warn("stage verdict incomplete", "stage", s.Name, "phase", phase, "fail_closed", s.FailClosed)
		}
	}
	if c.o.OnStage != nil {
		c.o.OnStage(s.Name, phase, r.Action, el, err)
	}
	return r
}

// tracerScope names the instrumentation scope of stage spans.
const tracerScope = "github.com/added060/palisade"

// ErrBadVerdict is returned by DecodeVerdict for output that is not a valid verdict.
var ErrBadVerdict = errors.New("chain: invalid verdict")

// DecodeVerdict parses and validates a plugin's output.
func DecodeVerdict(b []byte) (abi.Verdict, error) {
	v, ok := decodeVerdictFast(b)
	if !ok {
		v = abi.Verdict{}
		if err := json.Unmarshal(b, &v); err != nil {
			return v, fmt.Errorf("%w: %v", ErrBadVerdict, err)
		}
	}
	if v.Action == "" {
		v.Action = abi.ActionNone
	}
	if !abi.ValidAction(v.Action) && v.Action != abi.ActionUncertain {
		return v, fmt.Errorf("%w: action %q", ErrBadVerdict, v.Action)
	}
	if v.Score < 0 || v.Score > 1 {
		return v, fmt.Errorf("%w: score %v outside [0,1]", ErrBadVerdict, v.Score)
	}
	return v, nil
}

// Acquire takes a reference; the chain does not close until every reference is released.
// It returns false if the chain is already closing.
func (c *Chain) acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.refs++
	return true
}

func (c *Chain) release() {
	c.mu.Lock()
	c.refs--
	done := c.closing && c.refs == 0
	c.mu.Unlock()
	if done {
		c.shutdown()
	}
}

// CloseWhenDrained marks the chain closing and closes its stages once the last reference is
// released (at once if there is none). It returns when the stages are closed or ctx ends.
func (c *Chain) CloseWhenDrained(ctx context.Context) error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
	} else {
		c.closing = true
		idle := c.refs == 0
		c.mu.Unlock()
		if idle {
			c.shutdown()
		}
	}
	select {
	case <-c.closed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Chain) shutdown() { c.once.Do(c.closeStages) }

func (c *Chain) closeStages() {
	for _, s := range c.o.Stages {
		if cl, ok := s.Plugin.(Closer); ok {
			cl.Close(context.Background())
		}
	}
	close(c.closed)
	if c.o.OnClose != nil {
		c.o.OnClose()
	}
}

// Closed is closed once the chain's stages are closed.
func (c *Chain) Closed() <-chan struct{} { return c.closed }

// firstLine is the first line of a stage error: what a client is told. A trap's Wasm stack
// trace stays in the stage result's Error (audit) and the log, not in the deny sent out.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}
