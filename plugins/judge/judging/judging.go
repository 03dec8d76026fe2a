package judging

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/tidwall/gjson"
)

// Sampler calls the host's sample function.
type Sampler func(abi.SampleRequest) (abi.SampleResponse, error)

// Band is a half-open range [Min, Max) of the risk stage's score in which the judge runs.
type Band struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"` // 0 = 1.01 (no upper bound)
}

// Config is the judge stage's config. Every field is optional.
type Config struct {
	Band            *Band   `json:"band,omitempty"`             // nil = the judge does not run on risk alone
	RiskStage       string  `json:"risk_stage,omitempty"`       // "" = "risk"
	Always          bool    `json:"always,omitempty"`           // judge every request it is matched to
	DefaultGuidance string  `json:"default_guidance,omitempty"` // when no rule gave guidance
	OnError         string  `json:"on_error,omitempty"`         // deny | ask; "" = deny (fail closed)
	MinConfidence   float64 `json:"min_confidence,omitempty"`   // an allow below this becomes ask; 0 = 0.5
	MaxContextBytes int     `json:"max_context_bytes,omitempty"`
}

// Judge is a configured judge stage. It is immutable and safe for concurrent use.
type Judge struct{ c Config }

// New parses and validates the stage config (JSON; empty = defaults).
func New(configJSON []byte) (*Judge, error) {
	var c Config
	if strings.TrimSpace(string(configJSON)) != "" {
		dec := json.NewDecoder(strings.NewReader(string(configJSON)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("judge: config: %w", err)
		}
	}
	if c.RiskStage == "" {
		c.RiskStage = "risk"
	}
	switch c.OnError {
	case "":
		c.OnError = abi.ActionDeny
	case abi.ActionDeny, abi.ActionAsk:
	default:
		return nil, fmt.Errorf("judge: config: on_error %q, want deny or ask", c.OnError)
	}
	if c.MinConfidence == 0 {
		c.MinConfidence = 0.5
	}
	if c.MinConfidence < 0 || c.MinConfidence > 1 {
		return nil, fmt.Errorf("judge: config: min_confidence %v, want [0,1]", c.MinConfidence)
	}
	if b := c.Band; b != nil {
		if b.Max == 0 {
			b.Max = 1.01
		}
		if b.Min < 0 || b.Min >= b.Max {
			return nil, fmt.Errorf("judge: config: band [%v, %v) is empty", b.Min, b.Max)
		}
	}
	if c.MaxContextBytes <= 0 {
		c.MaxContextBytes = 2048
	}
	return &Judge{c: c}, nil
}

// Trigger says why the judge runs.
type Trigger struct {
	Kind     string // "sample" (a stage asked), "risk_band", "always"; "" = do not run
	Stage    string // the stage that asked, or the risk stage
	Guidance string
	Score    float64 // risk score, for risk_band
}

// Trigger decides whether env (raw envelope JSON) needs the judge.
func (j *Judge) Trigger(env []byte) Trigger {
	if ph := gjson.GetBytes(env, "phase").String(); ph != "" && ph != abi.PhaseRequest {
		return Trigger{}
	}
	var t Trigger
	gjson.GetBytes(env, "prior").ForEach(func(_, p gjson.Result) bool {
		stage := p.Get("stage").String()
		if p.Get("action").String() == abi.ActionSample && t.Kind != "sample" {
			g := p.Get("guidance").String()
			if g == "" {
				g = p.Get("reason").String()
			}
			t = Trigger{Kind: "sample", Stage: stage, Guidance: g}
		}
		if b := j.c.Band; b != nil && t.Kind == "" && stage == j.c.RiskStage {
			if s := p.Get("score").Float(); s >= b.Min && s < b.Max {
				t = Trigger{Kind: "risk_band", Stage: stage, Score: s}
			}
		}
		return true
	})
	if t.Kind == "" && j.c.Always {
		t.Kind = "always"
	}
	if t.Kind != "" && t.Guidance == "" {
		t.Guidance = j.c.DefaultGuidance
	}
	if t.Kind == "risk_band" {
		t.Guidance = strings.TrimSpace(t.Guidance + " The risk stage scored this call " + strconv.FormatFloat(t.Score, 'f', 2, 64) + " on a 0-1 scale: decide whether it is safe to run.")
	}
	return t
}

// Request builds the sample request for env.
func (j *Judge) Request(env []byte, t Trigger) abi.SampleRequest {
	e := gjson.ParseBytes(env)
	tool := e.Get("tool").String()
	if tool == "" {
		tool = e.Get("method").String()
	}
	req := abi.SampleRequest{Guidance: t.Guidance, Tool: tool, Server: e.Get("server").String()}
	switch {
	case e.Get("arguments").Exists():
		req.Arguments = json.RawMessage(e.Get("arguments").Raw)
	case e.Get("uri").Exists(): // resources/read
		req.Arguments, _ = json.Marshal(map[string]string{"uri": e.Get("uri").String()})
	case e.Get("prompt").Exists(): // prompts/get
		req.Arguments, _ = json.Marshal(map[string]string{"prompt": e.Get("prompt").String()})
	}
	// Context: what earlier stages said, so the model can weigh it (fenced as untrusted anyway).
	var ctx strings.Builder
	if m := e.Get("method").String(); m != "" && m != "tools/call" {
		ctx.WriteString("method " + m + "; ")
	}
	e.Get("prior").ForEach(func(_, p gjson.Result) bool {
		line := p.Get("stage").String() + ": " + p.Get("action").String()
		if s := p.Get("score"); s.Exists() {
			line += " score " + strconv.FormatFloat(s.Float(), 'f', 2, 64)
		}
		if r := p.Get("reason").String(); r != "" {
			line += " (" + r + ")"
		}
		if ctx.Len()+len(line) > j.c.MaxContextBytes {
			return false
		}
		ctx.WriteString(line + "; ")
		return true
	})
	req.Context = strings.TrimSuffix(ctx.String(), "; ")
	return req
}

// Meta is the verdict metadata the audit event records.
type Meta struct {
	Trigger    string   `json:"trigger"`
	Stage      string   `json:"trigger_stage,omitempty"`
	Decision   string   `json:"decision,omitempty"`
	Confidence float64  `json:"confidence"`
	Reasons    []string `json:"reasons,omitempty"`
	Provider   string   `json:"provider,omitempty"`
	Error      string   `json:"error,omitempty"`
	Downgraded bool     `json:"downgraded,omitempty"` // a low-confidence allow became ask
}

// Evaluate runs the judge on env when triggered and returns its verdict; otherwise no opinion.
func (j *Judge) Evaluate(env []byte, sample Sampler) abi.Verdict {
	t := j.Trigger(env)
	if t.Kind == "" {
		return abi.Verdict{Action: abi.ActionNone}
	}
	resp, err := sample(j.Request(env, t))
	m := Meta{Trigger: t.Kind, Stage: t.Stage, Provider: resp.Provider}
	if err == nil && resp.Error != "" {
		err = fmt.Errorf("%s", resp.Error)
	}
	if err == nil && !validDecision(resp) {
		err = fmt.Errorf("host returned an invalid decision %q (confidence %v)", resp.Decision, resp.Confidence)
	}
	if err != nil {
		m.Error = err.Error()
		v := abi.Verdict{Action: j.c.OnError, Rule: "judge-error", Labels: []string{"judge", "judge_error"},
			Reason: "LLM judge unavailable, failing " + map[string]string{abi.ActionDeny: "closed", abi.ActionAsk: "to a human"}[j.c.OnError] + ": " + capReason(err.Error())}
		if j.c.OnError == abi.ActionDeny {
			v.Score = 1
		}
		v.Metadata, _ = json.Marshal(m)
		return v
	}
	m.Decision, m.Confidence, m.Reasons = resp.Decision, resp.Confidence, resp.Reasons
	v := abi.Verdict{Action: resp.Decision, Score: resp.Confidence, Rule: "judge-" + strings.ReplaceAll(t.Kind, "_", "-"), Labels: []string{"judge"}}
	if v.Action == abi.ActionAllow && resp.Confidence < j.c.MinConfidence {
		v.Action = abi.ActionAsk
		m.Downgraded = true
	}
	prov := resp.Provider
	if prov == "" {
		prov = "unknown provider"
	}
	v.Reason = "LLM judge (" + prov + ") " + resp.Decision + " at confidence " + strconv.FormatFloat(resp.Confidence, 'f', 2, 64)
	if m.Downgraded {
		v.Reason += ", below " + strconv.FormatFloat(j.c.MinConfidence, 'f', 2, 64) + ": asking a human"
	}
	if len(resp.Reasons) > 0 {
		v.Reason += ": " + capReason(strings.Join(resp.Reasons, "; "))
	}
	v.Metadata, _ = json.Marshal(m)
	return v
}

func validDecision(r abi.SampleResponse) bool {
	switch r.Decision {
	case abi.ActionAllow, abi.ActionDeny, abi.ActionAsk:
		return r.Confidence >= 0 && r.Confidence <= 1
	}
	return false
}

func capReason(s string) string {
	if len(s) <= 600 {
		return s
	}
	cut := 600
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
