package judging

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
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

// message is what the judge reads of an envelope: from its JSON (fromJSON) or from its view
// (fromView), so both give the same trigger, request and verdict.
type message struct {
	phase, method, tool, server string
	args                        string // raw JSON
	uri, prompt                 string
	hasArgs, hasURI, hasPrompt  bool
	prior                       []priorVerdict
	// env is the JSON envelope whose request fields (method to prompt) are not read yet: only
	// a message that triggers the judge needs them.
	env []byte
}

// priorVerdict is one earlier verdict (the envelope's prior[i]).
type priorVerdict struct {
	stage, action, reason, guidance string
	score                           float64
	hasScore                        bool
}

// fromJSON reads what the trigger needs from env (raw envelope JSON) the way gjson.Get reads
// it (the first of a repeated member counts); request fills in the rest when it is needed.
func fromJSON(env []byte) message {
	m := message{env: env, phase: gjson.GetBytes(env, "phase").String()}
	gjson.GetBytes(env, "prior").ForEach(func(_, p gjson.Result) bool {
		var pv priorVerdict
		var seen uint8
		p.ForEach(func(k, v gjson.Result) bool {
			bit := uint8(0)
			switch k.Str {
			case "stage":
				bit = 1
			case "action":
				bit = 2
			case "reason":
				bit = 4
			case "guidance":
				bit = 8
			case "score":
				bit = 16
			}
			if bit == 0 || seen&bit != 0 {
				return true
			}
			seen |= bit
			switch bit {
			case 1:
				pv.stage = v.String()
			case 2:
				pv.action = v.String()
			case 4:
				pv.reason = v.String()
			case 8:
				pv.guidance = v.String()
			case 16:
				pv.score, pv.hasScore = v.Float(), true
			}
			return true
		})
		m.prior = append(m.prior, pv)
		return true
	})
	return m
}

// load reads the request fields of a JSON message.
func (m *message) load() {
	if m.env == nil {
		return
	}
	e := gjson.ParseBytes(m.env)
	m.env = nil
	m.method, m.tool, m.server = e.Get("method").String(), e.Get("tool").String(), e.Get("server").String()
	if a := e.Get("arguments"); a.Exists() {
		m.args, m.hasArgs = a.Raw, true
	}
	if u := e.Get("uri"); u.Exists() {
		m.uri, m.hasURI = u.String(), true
	}
	if p := e.Get("prompt"); p.Exists() {
		m.prompt, m.hasPrompt = p.String(), true
	}
}

// ErrNoPrior is returned for a view without the prior table: a host that did not say what the
// earlier stages decided, which is what triggers the judge.
var ErrNoPrior = errors.New("judge: view without earlier verdicts (layout 1); the stage needs layout 2")

// fromView reads a view that carries the prior table (layout 2). A score of 0 is the JSON
// prior's absent score (the host leaves a zero score out). Its strings alias the view.
func fromView(v *abi.View) message {
	m := message{phase: v.Get(abi.FieldPhase), method: v.Get(abi.FieldMethod), tool: v.Get(abi.FieldTool), server: v.Get(abi.FieldServer)}
	if r, ok := v.Root(abi.PartArguments); ok {
		m.args, m.hasArgs = r.Raw, true
	}
	m.uri, m.hasURI = v.Field(abi.FieldURI)
	m.prompt, m.hasPrompt = v.Field(abi.FieldPrompt)
	if n := v.NumPrior(); n > 0 {
		m.prior = make([]priorVerdict, n)
		for i := range n {
			p := v.PriorAt(i)
			m.prior[i] = priorVerdict{stage: p.Stage, action: p.Action, reason: p.Reason, guidance: p.Guidance, score: p.Score, hasScore: p.Score != 0}
		}
	}
	return m
}

// Trigger decides whether env (raw envelope JSON) needs the judge.
func (j *Judge) Trigger(env []byte) Trigger {
	m := fromJSON(env)
	return j.trigger(&m)
}

func (j *Judge) trigger(m *message) Trigger {
	if m.phase != "" && m.phase != abi.PhaseRequest {
		return Trigger{}
	}
	var t Trigger
	for _, p := range m.prior {
		if p.action == abi.ActionSample && t.Kind != "sample" {
			g := p.guidance
			if g == "" {
				g = p.reason
			}
			t = Trigger{Kind: "sample", Stage: p.stage, Guidance: g}
		}
		if b := j.c.Band; b != nil && t.Kind == "" && p.stage == j.c.RiskStage {
			if s := p.score; s >= b.Min && s < b.Max {
				t = Trigger{Kind: "risk_band", Stage: p.stage, Score: s}
			}
		}
	}
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
	m := fromJSON(env)
	return j.request(&m, t)
}

func (j *Judge) request(m *message, t Trigger) abi.SampleRequest {
	m.load()
	tool := m.tool
	if tool == "" {
		tool = m.method
	}
	req := abi.SampleRequest{Guidance: t.Guidance, Tool: tool, Server: m.server}
	switch {
	case m.hasArgs:
		req.Arguments = json.RawMessage(m.args)
	case m.hasURI: // resources/read
		req.Arguments, _ = json.Marshal(map[string]string{"uri": m.uri})
	case m.hasPrompt: // prompts/get
		req.Arguments, _ = json.Marshal(map[string]string{"prompt": m.prompt})
	}
	// Context: what earlier stages said, so the model can weigh it (fenced as untrusted anyway).
	var ctx strings.Builder
	if m.method != "" && m.method != "tools/call" {
		ctx.WriteString("method " + m.method + "; ")
	}
	for _, p := range m.prior {
		line := p.stage + ": " + p.action
		if p.hasScore {
			line += " score " + strconv.FormatFloat(p.score, 'f', 2, 64)
		}
		if p.reason != "" {
			line += " (" + p.reason + ")"
		}
		if ctx.Len()+len(line) > j.c.MaxContextBytes {
			break
		}
		ctx.WriteString(line + "; ")
	}
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

// RawSampler calls the host's sample function with request JSON and returns response JSON.
type RawSampler func(req []byte) ([]byte, error)

// Evaluate runs the judge on env when triggered and returns its verdict; otherwise no opinion.
// It is EvaluateJSON with typed values, for native callers and tests.
func (j *Judge) Evaluate(env []byte, sample Sampler) abi.Verdict {
	raw := func(req []byte) ([]byte, error) {
		var r abi.SampleRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("judge: request JSON: %w", err)
		}
		resp, err := sample(r)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
	var v abi.Verdict
	if err := json.Unmarshal(j.EvaluateJSON(env, raw, nil), &v); err != nil {
		return abi.Verdict{Action: j.c.OnError, Rule: "judge-error", Reason: "judge: verdict JSON: " + err.Error()}
	}
	return v
}

// EvaluateJSON is the Wasm hot path: it builds the sample request and the verdict by hand and
// reads the response with gjson, with no encoding/json reflection. The verdict is appended to
// buf.
func (j *Judge) EvaluateJSON(env []byte, sample RawSampler, buf []byte) []byte {
	m := fromJSON(env)
	return j.evaluate(&m, sample, buf)
}

// EvaluateViewJSON is EvaluateJSON on the view (sdk/ABI.md "The view", layout 2), which gives the
// same verdict as the JSON envelope it was laid out from. A view without the prior table is an
// error (ErrNoPrior), never read as if no stage had asked for the judge.
func (j *Judge) EvaluateViewJSON(v *abi.View, sample RawSampler, buf []byte) ([]byte, error) {
	if !v.HasPrior() {
		return buf, ErrNoPrior
	}
	m := fromView(v)
	return j.evaluate(&m, sample, buf), nil
}

func (j *Judge) evaluate(msg *message, sample RawSampler, buf []byte) []byte {
	t := j.trigger(msg)
	if t.Kind == "" {
		return append(buf, `{"action":"none"}`...)
	}
	out, err := sample(j.requestJSON(msg, t))
	m := Meta{Trigger: t.Kind, Stage: t.Stage}
	var resp gjson.Result
	if err == nil {
		if !gjson.ValidBytes(out) {
			err = fmt.Errorf("host returned invalid JSON")
		} else {
			resp = gjson.ParseBytes(out)
			m.Provider = resp.Get("provider").String()
			if e := resp.Get("error").String(); e != "" {
				err = fmt.Errorf("%s", e)
			}
		}
	}
	if err == nil {
		m.Decision = resp.Get("decision").String()
		c := resp.Get("confidence")
		m.Confidence = c.Float()
		resp.Get("reasons").ForEach(func(_, r gjson.Result) bool {
			if r.Type == gjson.String {
				m.Reasons = append(m.Reasons, r.Str)
			}
			return true
		})
		if !validDecision(m.Decision, m.Confidence) || c.Type != gjson.Number {
			err = fmt.Errorf("host returned an invalid decision %q (confidence %s)", m.Decision, c.Raw)
			m.Decision, m.Confidence, m.Reasons = "", 0, nil
		}
	}
	if err != nil {
		m.Error = err.Error()
		how := "closed"
		score := "1"
		if j.c.OnError == abi.ActionAsk {
			how, score = "to a human", ""
		}
		b := append(buf, `{"action":`...)
		b = appendString(b, j.c.OnError)
		b = append(b, `,"reason":`...)
		b = appendString(b, "LLM judge unavailable, failing "+how+": "+capReason(err.Error()))
		b = append(b, `,"rule":"judge-error"`...)
		if score != "" {
			b = append(b, `,"score":1`...)
		}
		b = append(b, `,"labels":["judge","judge_error"],"metadata":`...)
		b = m.appendJSON(b)
		return append(b, '}')
	}
	action := m.Decision
	if action == abi.ActionAllow && m.Confidence < j.c.MinConfidence {
		action = abi.ActionAsk
		m.Downgraded = true
	}
	prov := m.Provider
	if prov == "" {
		prov = "unknown provider"
	}
	reason := "LLM judge (" + prov + ") " + m.Decision + " at confidence " + strconv.FormatFloat(m.Confidence, 'f', 2, 64)
	if m.Downgraded {
		reason += ", below " + strconv.FormatFloat(j.c.MinConfidence, 'f', 2, 64) + ": asking a human"
	}
	if len(m.Reasons) > 0 {
		reason += ": " + capReason(strings.Join(m.Reasons, "; "))
	}
	b := append(buf, `{"action":`...)
	b = appendString(b, action)
	b = append(b, `,"reason":`...)
	b = appendString(b, reason)
	b = append(b, `,"rule":`...)
	b = appendString(b, "judge-"+strings.ReplaceAll(t.Kind, "_", "-"))
	if m.Confidence != 0 {
		b = append(b, `,"score":`...)
		b = strconv.AppendFloat(b, m.Confidence, 'g', -1, 64)
	}
	b = append(b, `,"labels":["judge"],"metadata":`...)
	b = m.appendJSON(b)
	return append(b, '}')
}

// requestJSON encodes the sample request for m by hand.
func (j *Judge) requestJSON(m *message, t Trigger) []byte {
	r := j.request(m, t)
	b := make([]byte, 0, 256+len(r.Arguments)+len(r.Context)+len(r.Guidance))
	b = append(b, `{"guidance":`...)
	b = appendString(b, r.Guidance)
	b = append(b, `,"tool":`...)
	b = appendString(b, r.Tool)
	b = append(b, `,"server":`...)
	b = appendString(b, r.Server)
	if len(r.Arguments) > 0 {
		b = append(b, `,"arguments":`...)
		b = append(b, r.Arguments...) // raw JSON from the envelope (or built by Request)
	}
	b = append(b, `,"context":`...)
	b = appendString(b, r.Context)
	return append(b, '}')
}

func (m *Meta) appendJSON(b []byte) []byte {
	b = append(b, `{"trigger":`...)
	b = appendString(b, m.Trigger)
	if m.Stage != "" {
		b = append(b, `,"trigger_stage":`...)
		b = appendString(b, m.Stage)
	}
	if m.Decision != "" {
		b = append(b, `,"decision":`...)
		b = appendString(b, m.Decision)
	}
	b = append(b, `,"confidence":`...)
	b = strconv.AppendFloat(b, m.Confidence, 'g', -1, 64)
	if len(m.Reasons) > 0 {
		b = append(b, `,"reasons":[`...)
		for i, r := range m.Reasons {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, r)
		}
		b = append(b, ']')
	}
	if m.Provider != "" {
		b = append(b, `,"provider":`...)
		b = appendString(b, m.Provider)
	}
	if m.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, m.Error)
	}
	if m.Downgraded {
		b = append(b, `,"downgraded":true`...)
	}
	return append(b, '}')
}

func validDecision(d string, c float64) bool {
	switch d {
	case abi.ActionAllow, abi.ActionDeny, abi.ActionAsk:
		return c >= 0 && c <= 1
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

// appendString appends s as a JSON string (see sdk/go/jsonw).
func appendString(b []byte, s string) []byte { return jsonw.AppendString(b, s) }
