package riskscore

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

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
type Scorer struct {
	weights       map[string]float64
	levels        Levels
	high, med     Row
	low           Row
	stageSignals  map[string]string
	verdictStages map[string]bool
	envSignals    bool
	defCrit       string
	noSignals     string
	reviewAction  string
	exact         map[string]Profile
	globs         []globProfile
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
	s := &Scorer{weights: DefaultWeights(), levels: c.Levels, envSignals: c.EnvelopeSignals}
	for k, w := range c.Weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("risk: config: weights.%s = %v, want >= 0", k, w)
		}
		s.weights[k] = w
	}
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
	s.stageSignals = DefaultStageSignals()
	if c.StageSignals != nil {
		s.stageSignals = c.StageSignals
	}
	s.verdictStages = map[string]bool{"judge": true}
	if c.VerdictStages != nil {
		s.verdictStages = map[string]bool{}
		for _, v := range c.VerdictStages {
			s.verdictStages[v] = true
		}
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
	s.exact = map[string]Profile{}
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
				s.exact[pat] = p
			}
		}
	}
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
	if p, ok := s.exact[tool]; ok {
		return p, true
	}
	for _, g := range s.globs {
		if ok, _ := path.Match(g.pat, tool); ok {
			return g.p, true
		}
	}
	return Profile{}, false
}

// Result is a scored envelope, before it becomes a verdict.
type Result struct {
	Tool         string             `json:"-"`
	Signals      map[string]float64 `json:"signals"`
	Weights      map[string]float64 `json:"weights"` // weights of the signals that counted
	Composite    float64            `json:"composite"`
	Level        string             `json:"level"` // low | medium | high | none (no signals)
	Criticality  string             `json:"criticality"`
	Irreversible bool               `json:"irreversible,omitempty"`
	Regulatory   bool               `json:"regulatory,omitempty"`
	Profiled     bool               `json:"profiled"`
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

func clamp01(f float64) float64 {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}

// Signals extracts the signals from an envelope (raw JSON): each earlier stage named in the
// stage map feeds its signal (the maximum when several feed one); with envelope signals
// trusted, params._meta["palisade/signals"] adds more (again keeping the maximum).
func (s *Scorer) Signals(envelope []byte) map[string]float64 {
	sig := map[string]float64{}
	put := func(name string, v float64) {
		v = clamp01(v)
		if old, ok := sig[name]; !ok || v > old {
			sig[name] = v
		}
	}
	gjson.GetBytes(envelope, "prior").ForEach(func(_, p gjson.Result) bool {
		stage := p.Get("stage").String()
		name, ok := s.stageSignals[stage]
		if !ok || name == "" {
			return true
		}
		action := p.Get("action").String()
		score := p.Get("score").Float()
		if s.verdictStages[stage] {
			// A judge's score is its confidence in its own decision.
			switch action {
			case abi.ActionDeny:
				put(name, score)
			case abi.ActionAllow:
				put(name, 1-score)
			case abi.ActionAsk:
				put(name, math.Max(0.5, score))
			}
			return true // none/sample: the judge did not decide
		}
		if action == abi.ActionDeny && score == 0 {
			score = 1 // a deny without a score is full risk
		}
		put(name, score)
		return true
	})
	if s.envSignals {
		gjson.GetBytes(envelope, `params._meta.palisade/signals`).ForEach(func(k, v gjson.Result) bool {
			if v.Type == gjson.Number {
				put(k.String(), v.Float())
			}
			return true
		})
	}
	return sig
}

// Score scores an envelope.
func (s *Scorer) Score(envelope []byte) Result {
	tool := gjson.GetBytes(envelope, "tool").String()
	r := Result{Tool: tool, Signals: s.Signals(envelope), Criticality: s.defCrit}
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
	c, used, present := Composite(r.Signals, s.weights)
	r.Weights = used
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
	v := abi.Verdict{Score: r.Composite, Labels: []string{r.Level}}
	crit := strings.ToLower(r.Criticality)
	c := strconv.FormatFloat(r.Composite, 'f', -1, 64)
	on := " on a " + crit + "-criticality tool"
	switch {
	case r.Level == "none" && r.Criticality == CritHigh:
		v.Action = s.noSignals
		v.Rule = "risk-" + crit + "-no-signals"
		v.Reason = "no risk signals for a HIGH-criticality tool"
	case r.Level == "none":
		v.Action = abi.ActionAllow
		v.Rule = "risk-" + crit + "-no-signals"
		v.Reason = "no risk signals; " + crit + "-criticality tool"
	case row.Deny != nil && r.Composite >= *row.Deny:
		v.Action = abi.ActionDeny
		v.Rule = "risk-" + crit + "-deny"
		v.Reason = "risk " + c + " (" + r.Level + ") >= " + strconv.FormatFloat(*row.Deny, 'f', -1, 64) + on
	case row.Ask != nil && r.Composite >= *row.Ask:
		v.Action = s.reviewAction
		v.Rule = "risk-" + crit + "-review"
		v.Reason = "risk " + c + " (" + r.Level + ") >= " + strconv.FormatFloat(*row.Ask, 'f', -1, 64) + on + ": needs review"
		if v.Action == abi.ActionSample {
			v.Guidance = "The risk stage scored this call " + c + " (" + r.Level + ") on a " + crit + "-criticality tool, in the band that needs review. Allow only if the call is clearly safe and intended."
		}
	default:
		v.Action = abi.ActionAllow
		v.Rule = "risk-" + crit + "-allow"
		v.Reason = "risk " + c + " (" + r.Level + ")" + on
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
	if ph := gjson.GetBytes(envelope, "phase").String(); ph != "" && ph != abi.PhaseRequest {
		return abi.Verdict{Action: abi.ActionNone}, Result{}, false
	}
	if m := gjson.GetBytes(envelope, "method").String(); m != "tools/call" {
		return abi.Verdict{Action: abi.ActionNone}, Result{}, false
	}
	r := s.Score(envelope)
	return s.decide(&r), r, true
}
