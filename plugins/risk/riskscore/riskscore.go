package riskscore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/tidwall/gjson"
)

// Criticality of a tool.
const (
	CritHigh   = "HIGH"
	CritMedium = "MEDIUM"
	CritLow    = "LOW"
)

// Levels of the composite risk.
const (
	LevelLow    = "low"
	LevelMedium = "medium"
	LevelHigh   = "high"
)

// DefaultWeights are the signal weights used when the config names none.
func DefaultWeights() map[string]float64 {
	return map[string]float64{
		"grounding":           0.30,
		"self_consistency":    0.25,
		"verifier":            0.25,
		"numeric_instability": 0.10,
		"tool_mismatch":       0.10,
		"drift":               0.10,
	}
}

// DefaultStageSignals maps earlier stages (envelope.prior[].stage) to the signal their score
// feeds: injection findings mean the call is not grounded in the user's intent; the ML detector
// is an independent verifier; the LLM judge is a consistency check on the agent's reasoning.
func DefaultStageSignals() map[string]string {
	return map[string]string{"injection": "grounding", "detector": "verifier", "judge": "self_consistency"}
}

// Levels sets the composite thresholds: < Medium is low, < High is medium, otherwise high.
type Levels struct {
	Medium float64 `json:"medium"` // 0 = 0.20
	High   float64 `json:"high"`   // 0 = 0.35
}

// Row is one criticality's thresholds: composite >= Deny denies, >= Ask asks, otherwise allow.
// A nil threshold never triggers.
type Row struct {
	Deny *float64 `json:"deny,omitempty"`
	Ask  *float64 `json:"ask,omitempty"`
}

// Matrix is the policy matrix by criticality.
type Matrix struct {
	High   *Row `json:"high,omitempty"`   // nil = deny >= 0.35, ask >= 0.20
	Medium *Row `json:"medium,omitempty"` // nil = ask >= 0.50
	Low    *Row `json:"low,omitempty"`    // nil = always allow
}

// Profile describes one tool (from the bundle's profiles data file).
type Profile struct {
	Criticality  string `json:"criticality,omitempty"` // HIGH | MEDIUM | LOW
	Irreversible bool   `json:"irreversible,omitempty"`
	Regulatory   bool   `json:"regulatory,omitempty"`
	Fallback     string `json:"fallback,omitempty"`      // tool the gateway calls instead on deny
	RequireToken bool   `json:"require_token,omitempty"` // require an execution token on every allow
}

// Profiles is the profiles data file: tool name or glob (path.Match syntax) → profile.
type Profiles struct {
	Tools map[string]Profile `json:"tools"`
}

// Config is the stage config (bundle.yaml `config:` of the risk stage).
type Config struct {
	Weights            map[string]float64 `json:"weights,omitempty"`       // merged over DefaultWeights
	Levels             Levels             `json:"levels"`                  //
	Matrix             Matrix             `json:"matrix"`                  //
	StageSignals       map[string]string  `json:"stage_signals,omitempty"` // nil = DefaultStageSignals; "" value drops a stage
	VerdictStages      []string           `json:"verdict_stages,omitempty"`
	EnvelopeSignals    bool               `json:"envelope_signals,omitempty"`    // trust params._meta["palisade/signals"]
	DefaultCriticality string             `json:"default_criticality,omitempty"` // "" = MEDIUM
	NoSignals          string             `json:"no_signals,omitempty"`          // HIGH tool, no signal present: "" = ask
	// ReviewAction is the action in the review band (>= ask threshold): "" = ask (a human);
	// "sample" hands the call to the judge stage, with guidance, to resolve instead.
	ReviewAction string    `json:"review_action,omitempty"`
	Profiles     *Profiles `json:"profiles,omitempty"` // inline; the "profiles" data key wins
}

// Scorer evaluates envelopes against one config. It is immutable and safe for concurrent use.
//
// Its lookup tables are small sorted slices, not maps: inside Wasm (Go's wasip1 port on wazero)
// a map operation costs microseconds, a short linear scan far less.
type Scorer struct {
	weights       []named // sorted by name
	levels        Levels
	high, med     Row
	low           Row
	stageSignals  []stageSignal
	verdictStages []string
	envSignals    bool
	defCrit       string
	noSignals     string
	reviewAction  string
	exact         []exactProfile // sorted by name
	globs         []globProfile
}

type named struct {
	name string
	v    float64
}

type stageSignal struct{ stage, signal string }

type exactProfile struct {
	name string
	p    Profile
}

type globProfile struct {
	pat string
	p   Profile
}

func ptr(f float64) *float64 { return &f }

// New validates c and builds a Scorer. profiles, when non-empty, is the JSON of the "profiles"
// data file and replaces c.Profiles.
func New(configJSON, profilesJSON []byte) (*Scorer, error) {
	var c Config
	if len(strings.TrimSpace(string(configJSON))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(configJSON)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("risk: config: %w", err)
		}
	}
	if len(strings.TrimSpace(string(profilesJSON))) > 0 {
		var p Profiles
		dec := json.NewDecoder(strings.NewReader(string(profilesJSON)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("risk: profiles: %w", err)
		}
		c.Profiles = &p
	}
	s := &Scorer{levels: c.Levels, envSignals: c.EnvelopeSignals}
	weights := DefaultWeights()
	for k, w := range c.Weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("risk: config: weights.%s = %v, want >= 0", k, w)
		}
		weights[k] = w
	}
	for k, w := range weights {
		s.weights = append(s.weights, named{k, w})
	}
	sort.Slice(s.weights, func(i, j int) bool { return s.weights[i].name < s.weights[j].name })
	if s.levels.Medium == 0 {
		s.levels.Medium = 0.20
	}
	if s.levels.High == 0 {
		s.levels.High = 0.35
	}
	if !(0 < s.levels.Medium && s.levels.Medium <= s.levels.High && s.levels.High <= 1) {
		return nil, fmt.Errorf("risk: config: levels medium %v high %v, want 0 < medium <= high <= 1", s.levels.Medium, s.levels.High)
	}
	s.high = Row{Deny: ptr(0.35), Ask: ptr(0.20)}
	if c.Matrix.High != nil {
		s.high = *c.Matrix.High
	}
	s.med = Row{Ask: ptr(0.50)}
	if c.Matrix.Medium != nil {
		s.med = *c.Matrix.Medium
	}
	if c.Matrix.Low != nil {
		s.low = *c.Matrix.Low
	}
	for name, r := range map[string]Row{"high": s.high, "medium": s.med, "low": s.low} {
		for which, v := range map[string]*float64{"deny": r.Deny, "ask": r.Ask} {
			if v != nil && (*v < 0 || *v > 1) {
				return nil, fmt.Errorf("risk: config: matrix.%s.%s = %v, want [0,1]", name, which, *v)
			}
		}
	}
	ss := DefaultStageSignals()
	if c.StageSignals != nil {
		ss = c.StageSignals
	}
	for stage, sig := range ss {
		if sig != "" {
			s.stageSignals = append(s.stageSignals, stageSignal{stage, sig})
		}
	}
	sort.Slice(s.stageSignals, func(i, j int) bool { return s.stageSignals[i].stage < s.stageSignals[j].stage })
	s.verdictStages = []string{"judge"}
	if c.VerdictStages != nil {
		s.verdictStages = c.VerdictStages
	}
	var err error
	if s.defCrit, err = normCrit(c.DefaultCriticality, CritMedium); err != nil {
		return nil, fmt.Errorf("risk: config: default_criticality: %w", err)
	}
	switch c.NoSignals {
	case "":
		s.noSignals = abi.ActionAsk
	case abi.ActionAllow, abi.ActionAsk, abi.ActionDeny:
		s.noSignals = c.NoSignals
	default:
		return nil, fmt.Errorf("risk: config: no_signals %q, want allow, ask or deny", c.NoSignals)
	}
	switch c.ReviewAction {
	case "":
		s.reviewAction = abi.ActionAsk
	case abi.ActionAsk, abi.ActionSample:
		s.reviewAction = c.ReviewAction
	default:
		return nil, fmt.Errorf("risk: config: review_action %q, want ask or sample", c.ReviewAction)
	}
	if c.Profiles != nil {
		for pat, p := range c.Profiles.Tools {
			if p.Criticality, err = normCrit(p.Criticality, ""); err != nil {
				return nil, fmt.Errorf("risk: profiles: tools[%q].criticality: %w", pat, err)
			}
			if strings.ContainsAny(pat, "*?[") {
				if _, err := path.Match(pat, ""); err != nil {
					return nil, fmt.Errorf("risk: profiles: tools[%q]: %w", pat, err)
				}
				s.globs = append(s.globs, globProfile{pat, p})
			} else {
				s.exact = append(s.exact, exactProfile{pat, p})
			}
		}
	}
	sort.Slice(s.exact, func(i, j int) bool { return s.exact[i].name < s.exact[j].name })
	// Most specific (longest) glob first; ties by name, so matching is deterministic.
	sort.Slice(s.globs, func(i, j int) bool {
		if len(s.globs[i].pat) != len(s.globs[j].pat) {
			return len(s.globs[i].pat) > len(s.globs[j].pat)
		}
		return s.globs[i].pat < s.globs[j].pat
	})
	return s, nil
}

func normCrit(c, def string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(c)) {
	case "":
		return def, nil
	case CritHigh:
		return CritHigh, nil
	case CritMedium:
		return CritMedium, nil
	case CritLow:
		return CritLow, nil
	}
	return "", fmt.Errorf("%q, want HIGH, MEDIUM or LOW", c)
}

// Profile returns the profile for tool: an exact entry, else the longest matching glob.
func (s *Scorer) Profile(tool string) (Profile, bool) {
	if i := sort.Search(len(s.exact), func(i int) bool { return s.exact[i].name >= tool }); i < len(s.exact) && s.exact[i].name == tool {
		return s.exact[i].p, true
	}
	for _, g := range s.globs {
		if ok, _ := path.Match(g.pat, tool); ok {
			return g.p, true
		}
	}
	return Profile{}, false
}

// Signal is one named risk signal; Weight is 0 when the signal has no weight (it is reported
// but does not count).
type Signal struct {
	Name   string
	Value  float64
	Weight float64
}

// Result is a scored envelope, before it becomes a verdict. Its metadata encoding is
// {signals, weights (of the signals that counted), composite, level, criticality,
// irreversible, regulatory, profiled}.
type Result struct {
	Tool         string
	Signals      []Signal // sorted by name
	Composite    float64
	Level        string // low | medium | high | none (no weighted signal)
	Criticality  string
	Irreversible bool
	Regulatory   bool
	Profiled     bool
	profile      Profile
}

// Composite returns Σ risk_i·w_i / Σ w_i over the signals that have a positive weight, and the
// weights used. ok is false when no weighted signal is present.
func Composite(signals, weights map[string]float64) (c float64, used map[string]float64, ok bool) {
	used = map[string]float64{}
	var num, den float64
	for name, r := range signals {
		w := weights[name]
		if w <= 0 {
			continue
		}
		used[name] = w
		num += clamp01(r) * w
		den += w
	}
	if den == 0 {
		return 0, used, false
	}
	return num / den, used, true
}

// composite is Composite over the scorer's slices (no maps on the hot path).
func composite(sig []Signal) (float64, bool) {
	var num, den float64
	for _, x := range sig {
		if x.Weight > 0 {
			num += clamp01(x.Value) * x.Weight
			den += x.Weight
		}
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}

func clamp01(f float64) float64 {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}

// fields are the envelope fields the scorer reads, found in one pass over the JSON (gjson scans
// from the start on every lookup, and inside Wasm each scan is costly), or read from the view.
type fields struct {
	phase, method, tool string
	prior               gjson.Result
	params              gjson.Result
	view                *abi.View // the view's prior and params instead of prior and params
}

// fromView reads the fields from a view that carries the prior table (layout 2).
func fromView(v *abi.View) fields {
	return fields{phase: v.Get(abi.FieldPhase), method: v.Get(abi.FieldMethod), tool: v.Get(abi.FieldTool), view: v}
}

func parse(envelope []byte) fields {
	var f fields
	gjson.ParseBytes(envelope).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "phase":
			f.phase = v.String()
		case "method":
			f.method = v.String()
		case "tool":
			f.tool = v.String()
		case "prior":
			f.prior = v
		case "params":
			f.params = v
		}
		return true
	})
	return f
}

// Signals extracts the signals from an envelope (raw JSON): each earlier stage named in the
// stage map feeds its signal (the maximum when several feed one); with envelope signals
// trusted, params._meta["palisade/signals"] adds more (again keeping the maximum).
func (s *Scorer) Signals(envelope []byte) map[string]float64 {
	out := map[string]float64{}
	for _, x := range s.signals(parse(envelope)) {
		out[x.Name] = x.Value
	}
	return out
}

func (s *Scorer) weight(name string) float64 {
	for _, w := range s.weights {
		if w.name == name {
			return w.v
		}
	}
	return 0
}

func (s *Scorer) signalFor(stage string) string {
	for _, x := range s.stageSignals {
		if x.stage == stage {
			return x.signal
		}
	}
	return ""
}

func (s *Scorer) isVerdictStage(stage string) bool {
	for _, v := range s.verdictStages {
		if v == stage {
			return true
		}
	}
	return false
}

// signals returns the signals present, sorted by name, with their weights.
func (s *Scorer) signals(f fields) []Signal {
	// Room for the usual few signals, so that it is allocated once.
	sig := make([]Signal, 0, 4)
	put := func(name string, v float64) {
		v = clamp01(v)
		for i := range sig {
			if sig[i].Name == name {
				if v > sig[i].Value {
					sig[i].Value = v
				}
				return
			}
		}
		sig = append(sig, Signal{Name: name, Value: v, Weight: s.weight(name)})
	}
	prior := func(stage, action string, score float64) {
		name := s.signalFor(stage)
		if name == "" {
			return
		}
		if s.isVerdictStage(stage) {
			// A judge's score is its confidence in its own decision.
			switch action {
			case abi.ActionDeny:
				put(name, score)
			case abi.ActionAllow:
				put(name, 1-score)
			case abi.ActionAsk:
				put(name, math.Max(0.5, score))
			}
			return // none/sample: the judge did not decide
		}
		if action == abi.ActionDeny && score == 0 {
			score = 1 // a deny without a score is full risk
		}
		put(name, score)
	}
	if v := f.view; v != nil {
		for i := range v.NumPrior() {
			p := v.PriorAt(i)
			prior(p.Stage, p.Action, p.Score)
		}
		if s.envSignals {
			viewSignals(v, put)
		}
	} else {
		f.prior.ForEach(func(_, p gjson.Result) bool {
			var stage, action string
			var score float64
			p.ForEach(func(k, v gjson.Result) bool {
				switch k.Str {
				case "stage":
					stage = v.String()
				case "action":
					action = v.String()
				case "score":
					score = v.Float()
				}
				return true
			})
			prior(stage, action, score)
			return true
		})
		if s.envSignals && f.params.Exists() {
			f.params.Get(`_meta.palisade/signals`).ForEach(func(k, v gjson.Result) bool {
				if v.Type == gjson.Number {
					put(k.String(), v.Float())
				}
				return true
			})
		}
	}
	// Insertion sort: a handful of entries.
	for i := 1; i < len(sig); i++ {
		for j := i; j > 0 && sig[j].Name < sig[j-1].Name; j-- {
			sig[j], sig[j-1] = sig[j-1], sig[j]
		}
	}
	return sig
}

// viewSignals puts each number of params._meta["palisade/signals"] as gjson's ForEach reads it
// on the JSON path: an object's members by name, an array's items by index, a lone number
// under "".
func viewSignals(v *abi.View, put func(string, float64)) {
	r, ok := v.Root(abi.PartParams)
	if !ok {
		return
	}
	meta, ok := v.Member(r.Node, "_meta")
	if !ok {
		return
	}
	sig, ok := v.Member(meta, "palisade/signals")
	if !ok {
		return
	}
	num := func(n abi.Node) float64 {
		f, _ := strconv.ParseFloat(n.Value, 64) // gjson's reading: out of range is ±Inf
		return f
	}
	n := v.Node(sig)
	switch n.Type {
	case abi.NodeNumber:
		put("", num(n))
	case abi.NodeObject, abi.NodeArray:
		for c := sig + 1; c < n.End; c = v.Node(c).End {
			m := v.Node(c)
			if m.Type != abi.NodeNumber {
				continue
			}
			if n.Type == abi.NodeObject {
				put(m.Name, num(m))
			} else {
				put(strconv.Itoa(int(m.Index)), num(m))
			}
		}
	}
}

// Score scores an envelope.
func (s *Scorer) Score(envelope []byte) Result { return s.score(parse(envelope)) }

func (s *Scorer) score(f fields) Result {
	tool := f.tool
	r := Result{Tool: tool, Signals: s.signals(f), Criticality: s.defCrit}
	p, ok := s.Profile(tool)
	r.Profiled, r.profile = ok, p
	if ok {
		if p.Criticality != "" {
			r.Criticality = p.Criticality
		}
		r.Irreversible, r.Regulatory = p.Irreversible, p.Regulatory
		if p.Irreversible || p.Regulatory {
			r.Criticality = CritHigh // irreversible or regulated actions are always HIGH
		}
	}
	c, present := composite(r.Signals)
	r.Composite = math.Round(c*1e4) / 1e4
	switch {
	case !present:
		r.Level = "none"
	case r.Composite < s.levels.Medium:
		r.Level = LevelLow
	case r.Composite < s.levels.High:
		r.Level = LevelMedium
	default:
		r.Level = LevelHigh
	}
	return r
}

// Verdict applies the policy matrix to a scored envelope.
func (s *Scorer) Verdict(r Result) abi.Verdict {
	v := s.decide(&r)
	v.Metadata = r.appendJSON(nil)
	return v
}

// decide applies the matrix; it leaves Metadata empty.
func (s *Scorer) decide(r *Result) abi.Verdict {
	row := s.low
	switch r.Criticality {
	case CritHigh:
		row = s.high
	case CritMedium:
		row = s.med
	}
	v := abi.Verdict{Score: r.Composite, Labels: levelLabels(r.Level)}
	crit, rules := critNames(r.Criticality)
	// The reason is built in one buffer (one allocation, the string), not by concatenation.
	var rb [160]byte
	reason := func(parts ...string) string {
		b := rb[:0]
		for _, p := range parts {
			b = append(b, p...)
		}
		return string(b)
	}
	var cb [24]byte
	c := appendFloat(cb[:0], r.Composite)
	switch {
	case r.Level == "none" && r.Criticality == CritHigh:
		v.Action = s.noSignals
		v.Rule = rules[ruleNoSignals]
		v.Reason = "no risk signals for a HIGH-criticality tool"
	case r.Level == "none":
		v.Action = abi.ActionAllow
		v.Rule = rules[ruleNoSignals]
		v.Reason = reason("no risk signals; ", crit, "-criticality tool")
	case row.Deny != nil && r.Composite >= *row.Deny:
		v.Action = abi.ActionDeny
		v.Rule = rules[ruleDeny]
		var tb [24]byte
		v.Reason = reason("risk ", unsafeString(c), " (", r.Level, ") >= ", unsafeString(appendFloat(tb[:0], *row.Deny)), " on a ", crit, "-criticality tool")
	case row.Ask != nil && r.Composite >= *row.Ask:
		v.Action = s.reviewAction
		v.Rule = rules[ruleReview]
		var tb [24]byte
		v.Reason = reason("risk ", unsafeString(c), " (", r.Level, ") >= ", unsafeString(appendFloat(tb[:0], *row.Ask)), " on a ", crit, "-criticality tool: needs review")
		if v.Action == abi.ActionSample {
			v.Guidance = "The risk stage scored this call " + string(c) + " (" + r.Level + ") on a " + crit + "-criticality tool, in the band that needs review. Allow only if the call is clearly safe and intended."
		}
	default:
		v.Action = abi.ActionAllow
		v.Rule = rules[ruleAllow]
		v.Reason = reason("risk ", unsafeString(c), " (", r.Level, ") on a ", crit, "-criticality tool")
	}
	if v.Action == abi.ActionAllow && (r.Criticality == CritHigh || r.profile.RequireToken) {
		v.RequireToken = true
		v.Reason += "; execution token required"
	}
	if v.Action == abi.ActionDeny && r.profile.Fallback != "" {
		v.Fallback = r.profile.Fallback
		v.Reason += "; fallback " + r.profile.Fallback
	}
	return v
}

// Evaluate scores an envelope and returns its verdict. Response-phase envelopes and
// non-tools/call methods get no opinion.
func (s *Scorer) Evaluate(envelope []byte) abi.Verdict {
	v, r, scored := s.evaluate(envelope)
	if scored {
		v.Metadata = r.appendJSON(nil)
	}
	return v
}

func (s *Scorer) evaluate(envelope []byte) (abi.Verdict, Result, bool) {
	return s.evaluateFields(parse(envelope))
}

// ErrNoPrior is returned for a view without the prior table: a host that did not say what the
// earlier stages decided, which the score is made of.
var ErrNoPrior = errors.New("risk: view without earlier verdicts (layout 1); the stage needs layout 2")

// EvaluateView is Evaluate on the view (sdk/ABI.md "The view", layout 2), which gives the same
// verdict as the JSON envelope it was laid out from. A view without the prior table is an error
// (ErrNoPrior), never scored as if no stage had found anything.
func (s *Scorer) EvaluateView(v *abi.View) (abi.Verdict, error) {
	if !v.HasPrior() {
		return abi.Verdict{}, ErrNoPrior
	}
	out, r, scored := s.evaluateFields(fromView(v))
	if scored {
		out.Metadata = r.appendJSON(nil)
	}
	return out, nil
}

func (s *Scorer) evaluateFields(f fields) (abi.Verdict, Result, bool) {
	if f.phase != "" && f.phase != abi.PhaseRequest {
		return abi.Verdict{Action: abi.ActionNone}, Result{}, false
	}
	if f.method != "tools/call" {
		return abi.Verdict{Action: abi.ActionNone}, Result{}, false
	}
	r := s.score(f)
	return s.decide(&r), r, true
}

// The rule names per criticality, so that decide does not build them per call.
const (
	ruleNoSignals = iota
	ruleDeny
	ruleReview
	ruleAllow
)

var (
	rulesHigh   = [...]string{"risk-high-no-signals", "risk-high-deny", "risk-high-review", "risk-high-allow"}
	rulesMedium = [...]string{"risk-medium-no-signals", "risk-medium-deny", "risk-medium-review", "risk-medium-allow"}
	rulesLow    = [...]string{"risk-low-no-signals", "risk-low-deny", "risk-low-review", "risk-low-allow"}
)

// critNames returns the criticality in lower case and its rule names. Criticality is always
// one of CritHigh, CritMedium and CritLow (normCrit); anything else is named as it is.
func critNames(c string) (string, *[4]string) {
	switch c {
	case CritHigh:
		return "high", &rulesHigh
	case CritMedium:
		return "medium", &rulesMedium
	case CritLow:
		return "low", &rulesLow
	}
	crit := strings.ToLower(c)
	return crit, &[4]string{"risk-" + crit + "-no-signals", "risk-" + crit + "-deny", "risk-" + crit + "-review", "risk-" + crit + "-allow"}
}

// levelLabels returns the verdict's labels, one level. The known levels share a slice per
// level, capped at its length so that an append copies it.
func levelLabels(level string) []string {
	switch level {
	case LevelLow:
		return labelsLow[:1:1]
	case LevelMedium:
		return labelsMedium[:1:1]
	case LevelHigh:
		return labelsHigh[:1:1]
	case "none":
		return labelsNone[:1:1]
	}
	return []string{level}
}

var (
	labelsLow    = []string{LevelLow}
	labelsMedium = []string{LevelMedium}
	labelsHigh   = []string{LevelHigh}
	labelsNone   = []string{"none"}
)

// unsafeString views b as a string for the length of one concatenation.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
