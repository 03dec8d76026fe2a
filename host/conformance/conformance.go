package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/schema"
)

// HugeInputBytes is the size of the oversized envelope Check sends (the host's default body limit).
const HugeInputBytes = 4 << 20

// Options configure Check.
type Options struct {
	// Fixtures is a folder of *.json fixture files (see Fixture); "" = no fixtures.
	Fixtures string
	// Config is the config handed to the plugin (config_get); key "config" holds the stage config JSON.
	// nil = {"config": "{}"}.
	Config map[string]string
	// Deps back the sample, infer and kv host functions. A nil KV gets a fresh in-memory store;
	// nil Sampler and Inferer answer every call with an error, as a host without them does.
	Deps hostfn.Deps
	// Timeout is the per-call limit for ordinary envelopes and fixtures; 0 = 2s (generous:
	// conformance is not a benchmark).
	Timeout time.Duration
	// HostileTimeout is the per-call limit for the hostile inputs (4 MiB, deep nesting); 0 = 20s.
	// Those checks look for traps; how long a plugin takes on 4 MiB is reported, not judged,
	// because it depends on the machine.
	HostileTimeout time.Duration
	// MaxPages caps plugin memory in 64 KiB pages; 0 = the runtime default (256 = 16 MiB).
	MaxPages uint32
}

// Fixture is one expectation, read from a JSON file:
//
//	{"name": "...", "envelope": {...}, "expected": "deny"}
//	{"method": "tools/call", "params": {"name": "echo", "arguments": {}}, "expected": "allow"}
//
// A fixture without an envelope is an MCP request; Check builds the request-phase envelope the
// gateway would. expected_rule, when set, must equal the verdict's rule.
type Fixture struct {
	Name         string          `json:"name,omitempty"`
	Envelope     json.RawMessage `json:"envelope,omitempty"`
	Method       string          `json:"method,omitempty"`
	Params       json.RawMessage `json:"params,omitempty"`
	Expected     string          `json:"expected"`
	ExpectedRule string          `json:"expected_rule,omitempty"`
}

// Result is the outcome of one check.
type Result struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Report is everything Check found.
type Report struct {
	Describe *abi.Describe `json:"describe,omitempty"` // nil when describe is not exported
	Checks   []Result      `json:"checks"`
	Fixtures []Result      `json:"fixtures"`
}

// Passed reports whether every check and fixture passed.
func (r *Report) Passed() bool {
	for _, c := range slices.Concat(r.Checks, r.Fixtures) {
		if !c.OK {
			return false
		}
	}
	return true
}

// Failures counts the checks and fixtures that failed.
func (r *Report) Failures() int {
	n := 0
	for _, c := range slices.Concat(r.Checks, r.Fixtures) {
		if !c.OK {
			n++
		}
	}
	return n
}

// WriteText writes the report for a terminal: one line per check, then a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(res Result) {
		mark := "ok  "
		if !res.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %s", mark, res.Name)
		if res.Detail != "" {
			fmt.Fprintf(&b, ": %s", res.Detail)
		}
		b.WriteByte('\n')
	}
	for _, c := range r.Checks {
		line(c)
	}
	for _, c := range r.Fixtures {
		line(c)
	}
	total := len(r.Checks) + len(r.Fixtures)
	fmt.Fprintf(&b, "%d/%d passed\n", total-r.Failures(), total)
	_, err := io.WriteString(w, b.String())
	return err
}

// ErrNotLoadable is returned (wrapped) when the module cannot be compiled or started: nothing
// else can be checked.
var ErrNotLoadable = errors.New("conformance: plugin does not load")

// Check loads wasm through rt and runs every conformance check. The error is non-nil only when
// the checks could not run (the module does not load, the fixtures folder cannot be read); a
// plugin that breaks the contract gives a Report with failures and a nil error.
func Check(ctx context.Context, rt *plugin.Runtime, wasm []byte, o Options) (Report, error) {
	o = o.withDefaults()
	var rep Report
	p, err := rt.Load(ctx, plugin.Spec{
		Name:          "conformance",
		Wasm:          wasm,
		Config:        o.Config,
		Timeout:       max(o.Timeout, o.HostileTimeout),
		MaxPages:      o.MaxPages,
		PoolSize:      1,
		HostFunctions: hostfn.Build("conformance", []string{hostfn.CapSample, hostfn.CapInfer, hostfn.CapKV}, o.Deps),
	})
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrNotLoadable, err)
	}
	defer p.Close(context.WithoutCancel(ctx))
	add := func(name string, err error) {
		r := Result{Name: name, OK: err == nil}
		if err != nil {
			r.Detail = err.Error()
		}
		rep.Checks = append(rep.Checks, r)
	}
	// Ordinary calls run under o.Timeout; the plugin itself is loaded with the larger limit.
	call := func(parent context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(parent, o.Timeout)
	}

	// Exports.
	hasEval, err := p.Exports(ctx, "evaluate")
	if err == nil && !hasEval {
		err = errors.New("the module does not export evaluate")
	}
	add("exports evaluate", err)
	if !hasEval {
		return rep, nil
	}
	if ok, _ := p.Exports(ctx, "describe"); ok {
		d, err := checkDescribe(ctx, p)
		rep.Describe = d
		add("describe", err)
	}

	// Representative envelopes must give schema-valid verdicts; a plugin that asks for the
	// view gets each as a view too (and must read JSON as well: the host sends JSON for a
	// message it cannot lay out).
	for _, s := range samples() {
		cctx, cancel := call(ctx)
		add("verdict for "+s.name, checkVerdict(cctx, p, s.env))
		cancel()
		if rep.Describe != nil && rep.Describe.Input == abi.InputView {
			view, err := abi.AppendView(nil, s.env)
			if err == nil && rep.Describe.View >= abi.ViewLayout2 {
				// Layout 2, as the host sends it to a plugin that reads earlier verdicts
				// from the view: the sample has none.
				view, err = abi.AppendViewPrior(nil, view, nil)
			}
			if err == nil {
				cctx, cancel := call(ctx)
				err = checkVerdict(cctx, p, view)
				cancel()
			}
			add("verdict for "+s.name+" (view)", err)
		}
	}

	// Hostile input: surviving means no trap and no timeout; an error return is fine.
	huge := hugeEnvelope()
	for _, h := range []struct {
		name string
		in   []byte
	}{
		{"survives empty input", nil},
		{"survives malformed JSON", []byte(`{"abi":"1.0","method":"tools/call","arguments":{"a":[1,2,`)},
		{"survives non-object JSON", []byte(`[1,"two",null]`)},
		{"survives invalid UTF-8", []byte("{\"abi\":\"1.0\",\"id\":\"x\",\"phase\":\"request\",\"method\":\"tools/call\",\"tool\":\"\xff\xfe\"}")},
		{"survives deep nesting", []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))},
		{"survives a 4 MiB envelope", huge},
	} {
		hctx, cancel := context.WithTimeout(ctx, o.HostileTimeout)
		t0 := time.Now()
		err := survive(hctx, p, h.in)
		cancel()
		add(h.name, err)
		if err == nil && len(h.in) >= HugeInputBytes {
			rep.Checks[len(rep.Checks)-1].Detail = "took " + time.Since(t0).Round(time.Millisecond).String()
		}
	}
	// After all that, the plugin must still answer.
	cctx, cancel := call(ctx)
	add("still answers after hostile input", checkVerdict(cctx, p, samples()[0].env))
	cancel()

	// Fixtures.
	if o.Fixtures != "" {
		fx, err := LoadFixtures(o.Fixtures)
		if err != nil {
			return rep, err
		}
		for _, f := range fx {
			cctx, cancel := call(ctx)
			rep.Fixtures = append(rep.Fixtures, runFixture(cctx, p, f))
			cancel()
		}
	}
	return rep, nil
}

func (o Options) withDefaults() Options {
	if o.Config == nil {
		o.Config = map[string]string{"config": "{}"}
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.HostileTimeout <= 0 {
		o.HostileTimeout = 20 * time.Second
	}
	if o.Deps.KV == nil {
		o.Deps.KV = hostfn.NewMemKV()
	}
	return o
}

func checkDescribe(ctx context.Context, p *plugin.Plugin) (*abi.Describe, error) {
	out, err := p.Call(ctx, "describe", nil)
	if err != nil {
		return nil, fmt.Errorf("describe failed: %w", err)
	}
	if err := schema.Validate(schema.Describe, out); err != nil {
		return nil, fmt.Errorf("describe output %.200q: %w", out, err)
	}
	var d abi.Describe
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, fmt.Errorf("describe output: %w", err)
	}
	if err := abi.Compatible(d.ABI); err != nil {
		return &d, err
	}
	return &d, abi.CheckInput(d)
}

func checkVerdict(ctx context.Context, p *plugin.Plugin, env []byte) error {
	out, err := p.Evaluate(ctx, env)
	if err != nil {
		return err
	}
	return validVerdict(out)
}

func validVerdict(out []byte) error {
	if err := schema.Validate(schema.Verdict, out); err != nil {
		return fmt.Errorf("verdict %.200q: %w", out, err)
	}
	return nil
}

// survive calls evaluate with in. A verdict must be valid; an error return passes; a trap or a
// timeout fails.
func survive(ctx context.Context, p *plugin.Plugin, in []byte) error {
	out, err := p.Evaluate(ctx, in)
	switch {
	case errors.Is(err, plugin.ErrTrap):
		return fmt.Errorf("trapped: %w", err)
	case errors.Is(err, plugin.ErrTimeout):
		return fmt.Errorf("timed out: %w", err)
	case err != nil && !errors.Is(err, plugin.ErrPluginErr):
		return err
	case err != nil:
		return nil // a graceful error return
	}
	return validVerdict(out)
}

type sample struct {
	name string
	env  []byte
}

func samples() []sample {
	mk := func(e abi.Envelope) []byte {
		e.ABI, e.ID, e.Time = abi.Version, "01JCONFORMANCE0000000000000", "2026-11-22T10:00:00Z"
		if e.Phase == "" {
			e.Phase = abi.PhaseRequest
		}
		e.Transport, e.Server, e.Session = "test", "everything", "conformance"
		e.Client = &abi.Client{Name: "palisade-conformance", Version: "1"}
		b, _ := json.Marshal(e)
		return b
	}
	args := json.RawMessage(`{"message":"hello","path":"/tmp/x","command":"ls"}`)
	return []sample{
		{"tools/call", mk(abi.Envelope{Method: "tools/call", RequestID: json.RawMessage(`1`), Tool: "echo", Arguments: args,
			Params: json.RawMessage(`{"name":"echo","arguments":{"message":"hello","path":"/tmp/x","command":"ls"}}`)})},
		{"resources/read", mk(abi.Envelope{Method: "resources/read", RequestID: json.RawMessage(`2`), URI: "file:///etc/hosts",
			Params: json.RawMessage(`{"uri":"file:///etc/hosts"}`)})},
		{"prompts/get", mk(abi.Envelope{Method: "prompts/get", RequestID: json.RawMessage(`"p3"`), Prompt: "simple",
			Params: json.RawMessage(`{"name":"simple"}`)})},
		{"tools/list", mk(abi.Envelope{Method: "tools/list", RequestID: json.RawMessage(`4`)})},
		{"a response", mk(abi.Envelope{Method: "tools/call", Phase: abi.PhaseResponse, RequestID: json.RawMessage(`5`),
			Tool: "echo", Arguments: args, Result: json.RawMessage(`{"content":[{"type":"text","text":"Echo: hello"}]}`)})},
		{"an upstream error", mk(abi.Envelope{Method: "tools/call", Phase: abi.PhaseResponse, RequestID: json.RawMessage(`6`),
			Tool: "echo", Error: json.RawMessage(`{"code":-32602,"message":"bad arguments"}`)})},
	}
}

// hugeEnvelope is a valid tools/call envelope of HugeInputBytes whose one argument is large.
func hugeEnvelope() []byte {
	head := `{"abi":"1.0","id":"01JHUGE","phase":"request","method":"tools/call","tool":"echo","arguments":{"message":"`
	tail := `"}}`
	fill := HugeInputBytes - len(head) - len(tail)
	b := make([]byte, 0, HugeInputBytes)
	b = append(b, head...)
	for i := 0; i < fill; i++ {
		b = append(b, "abcdefghijklmnopqrstuvwxyz0123456789 "[i%37])
	}
	return append(b, tail...)
}

// LoadFixtures reads every *.json file in dir, sorted by name.
func LoadFixtures(dir string) ([]Fixture, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("fixtures %s: %w", dir, err)
	}
	if len(names) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("fixtures: %w", err)
		}
		return nil, fmt.Errorf("fixtures %s: no *.json files", dir)
	}
	slices.Sort(names)
	out := make([]Fixture, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("fixture: %w", err)
		}
		var f Fixture
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("fixture %s: %w", n, err)
		}
		if !abi.ValidAction(f.Expected) {
			return nil, fmt.Errorf("fixture %s: expected %q is not an action", n, f.Expected)
		}
		if len(f.Envelope) == 0 && f.Method == "" {
			return nil, fmt.Errorf("fixture %s: needs envelope or method", n)
		}
		if f.Name == "" {
			f.Name = strings.TrimSuffix(filepath.Base(n), ".json")
		}
		out = append(out, f)
	}
	return out, nil
}

// EnvelopeOf returns the envelope a fixture evaluates: its own, or the request-phase envelope
// built from its MCP method and params.
func (f Fixture) EnvelopeOf() ([]byte, error) {
	if len(f.Envelope) > 0 {
		return f.Envelope, nil
	}
	e := abi.Envelope{
		ABI: abi.Version, ID: "01JFIXTURE" + strings.ToUpper(strings.ReplaceAll(f.Name, " ", "")),
		Phase: abi.PhaseRequest, Transport: "test", Method: f.Method, RequestID: json.RawMessage(`1`),
		Params: f.Params,
	}
	if len(f.Params) > 0 {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			URI       string          `json:"uri"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			return nil, fmt.Errorf("fixture %s: params: %w", f.Name, err)
		}
		switch f.Method {
		case "tools/call":
			e.Tool, e.Arguments = p.Name, p.Arguments
		case "prompts/get":
			e.Prompt = p.Name
		case "resources/read":
			e.URI = p.URI
		}
	}
	return json.Marshal(e)
}

func runFixture(ctx context.Context, p *plugin.Plugin, f Fixture) Result {
	r := Result{Name: "fixture " + f.Name}
	env, err := f.EnvelopeOf()
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	out, err := p.Evaluate(ctx, env)
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	if err := validVerdict(out); err != nil {
		r.Detail = err.Error()
		return r
	}
	var v abi.Verdict
	_ = json.Unmarshal(out, &v)
	switch {
	case v.Action != f.Expected:
		r.Detail = fmt.Sprintf("got %s, want %s (reason %q)", v.Action, f.Expected, v.Reason)
	case f.ExpectedRule != "" && v.Rule != f.ExpectedRule:
		r.Detail = fmt.Sprintf("got rule %q, want %q", v.Rule, f.ExpectedRule)
	default:
		r.OK = true
		r.Detail = v.Action
		if v.Rule != "" {
			r.Detail += " (" + v.Rule + ")"
		}
	}
	return r
}
