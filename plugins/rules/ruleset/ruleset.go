// Package ruleset is the logic of Palisade's first-party rules plugin: priority-ordered rules with
// conditions on tool name, arguments (by key path), server, method, cwd, agent, the caller's
// principal and a time window; the lowest priority number among matching rules decides. It is
// plain Go so `go test` and fuzzing run it natively; main.go is the wasip1 shim.
package ruleset

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/glob"
	"github.com/tidwall/gjson"
)

// Rule is one policy rule.
type Rule struct {
	ID       string `json:"id"`
	Priority int    `json:"priority"`
	Action   string `json:"action"`
	Reason   string `json:"reason"`
	Final    bool   `json:"final"`
	Guidance string `json:"guidance"`
	When     When   `json:"when"`
	// Timeout and OnTimeout apply to ask rules: how long the call is held for a person ("30s")
	// and what happens when nobody decides (allow or deny). They reach the host as verdict
	// metadata {"timeout": ..., "on_timeout": ...}; "" = the gateway's approvals defaults.
	Timeout   string `json:"timeout"`
	OnTimeout string `json:"on_timeout"`
}

// When holds a rule's conditions; all given conditions must hold, and a list holds when any of its
// globs matches.
type When struct {
	Tool      []string            `json:"tool"`
	Server    []string            `json:"server"`
	Method    []string            `json:"method"`
	Agent     []string            `json:"agent"`
	Cwd       []string            `json:"cwd"`
	URI       []string            `json:"uri"`
	Arguments map[string][]string `json:"arguments"` // gjson key path → globs over the value
	Time      *Window             `json:"time"`
	// EnginePaths holds when a path-like argument value, the uri, or a word or redirect of a
	// shell argument names one of the engine's own paths (the envelope's `engine`, ABI 1.1)
	// or something below one. Without `engine` in the envelope it never holds.
	EnginePaths bool `json:"engine_paths"`
	// Commands are globs over each command a shell argument runs (argv joined by spaces,
	// argv[0] by base name, after wrappers such as sudo and sh -c are resolved); `*` crosses
	// `/` here, and `{engine}` stands for the base name of the engine's binary.
	Commands []string `json:"commands"`
	// Principal holds conditions on who is calling (the envelope's `principal`, ABI 1.1):
	// issuer, subject, client_id, scopes and claims, e.g. `{claims: {groups: sre}}`.
	Principal *Principal `json:"principal"`

	commands []string // compiled Commands
}

// Window is a time-of-day and weekday window.
type Window struct {
	Days []string `json:"days"` // mon..sun; empty = every day
	From string   `json:"from"` // HH:MM, inclusive
	To   string   `json:"to"`   // HH:MM, exclusive; To < From wraps midnight
	TZ   string   `json:"tz"`   // IANA name; "" = UTC

	from, to int
	days     uint8
	loc      *time.Location
}

// Config is the rules plugin's configuration.
type Config struct {
	Rules []Rule `json:"rules"`
}

// Engine evaluates envelopes against compiled rules.
type Engine struct {
	rules  []Rule
	engine engineCache
	tools  toolCache
}

var dayIndex = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// New validates and compiles rules. Rules are sorted by priority (stable on ties).
func New(c Config) (*Engine, error) {
	rs := append([]Rule(nil), c.Rules...)
	for i := range rs {
		r := &rs[i]
		if r.ID == "" {
			r.ID = fmt.Sprintf("rule-%d", i)
		}
		switch r.Action {
		case abi.ActionAllow, abi.ActionDeny, abi.ActionAsk, abi.ActionSample:
		default:
			return nil, fmt.Errorf("rules[%d] (%s): action %q must be allow, deny, ask or sample", i, r.ID, r.Action)
		}
		if r.Timeout != "" {
			if d, err := time.ParseDuration(r.Timeout); err != nil || d <= 0 {
				return nil, fmt.Errorf("rules[%d] (%s): timeout %q must be a positive duration such as 30s", i, r.ID, r.Timeout)
			}
		}
		switch r.OnTimeout {
		case "", abi.ActionAllow, abi.ActionDeny:
		default:
			return nil, fmt.Errorf("rules[%d] (%s): on_timeout %q must be allow or deny", i, r.ID, r.OnTimeout)
		}
		if len(r.When.Commands) > 0 {
			r.When.commands = commandGlobs(r.When.Commands)
		}
		if w := r.When.Time; w != nil {
			if err := w.compile(); err != nil {
				return nil, fmt.Errorf("rules[%d] (%s): time: %w", i, r.ID, err)
			}
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority < rs[j].Priority })
	return &Engine{rules: rs}, nil
}

// Parse decodes a JSON config (rules list or {"rules": [...]}).
func Parse(b []byte) (Config, error) {
	var c Config
	t := strings.TrimSpace(string(b))
	if strings.HasPrefix(t, "[") {
		err := json.Unmarshal(b, &c.Rules)
		return c, err
	}
	err := json.Unmarshal(b, &c)
	return c, err
}

func hhmm(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	hi, err1 := strconv.Atoi(h)
	mi, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hi < 0 || hi > 24 || mi < 0 || mi > 59 {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	return hi*60 + mi, nil
}

func (w *Window) compile() error {
	var err error
	w.from, w.to = 0, 24*60
	if w.From != "" {
		if w.from, err = hhmm(w.From); err != nil {
			return err
		}
	}
	if w.To != "" {
		if w.to, err = hhmm(w.To); err != nil {
			return err
		}
	}
	for _, d := range w.Days {
		i, ok := dayIndex[strings.ToLower(d)[:min(3, len(d))]]
		if !ok {
			return fmt.Errorf("day %q", d)
		}
		w.days |= 1 << i
	}
	w.loc = time.UTC
	if w.TZ != "" {
		l, err := time.LoadLocation(w.TZ)
		if err != nil {
			return fmt.Errorf("tz %q: %w", w.TZ, err)
		}
		w.loc = l
	}
	return nil
}

func (w *Window) contains(t time.Time) bool {
	t = t.In(w.loc)
	if w.days != 0 && w.days&(1<<int(t.Weekday())) == 0 {
		return false
	}
	m := t.Hour()*60 + t.Minute()
	if w.from <= w.to {
		return m >= w.from && m < w.to
	}
	return m >= w.from || m < w.to // wraps midnight
}

// Result is the rule that matched, if any.
type Result struct {
	Rule    *Rule
	Matched bool
	// HidesTool: the rule is a deny with no condition on the call's arguments (arguments,
	// commands, engine_paths) or the time, and no rule before it that could match other
	// arguments or another time says anything but deny. So every call of this tool by this
	// caller (a principal condition narrows who), whatever its arguments and whenever it
	// comes, is denied by this rule set, and the gateway may leave the tool out of the
	// caller's tools/list (verdict metadata {"hides_tool": true}).
	HidesTool bool
}

// onArguments reports whether the rule's conditions read the call's arguments.
func (w *When) onArguments() bool {
	return len(w.Arguments) > 0 || w.EnginePaths || len(w.Commands) > 0
}

// Evaluate decides an envelope given as raw JSON. now is used when the envelope has no time.
func (e *Engine) Evaluate(env []byte, now time.Time) Result {
	in := input{env: env}
	fields := gjson.GetManyBytes(env, "tool", "server", "method", "agent", "cwd", "uri", "time", "prompt")
	for i := range in.head {
		in.head[i] = fields[i].String()
	}
	return e.evaluate(&in, now)
}

// EvaluateView decides a call given as a view (sdk/ABI.md "The view"): the same decision as
// Evaluate on the JSON envelope it was laid out from (TestViewResultsMatch).
func (e *Engine) EvaluateView(v abi.View, now time.Time) Result {
	in := input{view: v, isView: true}
	for i, id := range [...]int{abi.FieldTool, abi.FieldServer, abi.FieldMethod, abi.FieldAgent, abi.FieldCwd, abi.FieldURI, abi.FieldTime, abi.FieldPrompt} {
		in.head[i] = v.Get(id)
	}
	return e.evaluate(&in, now)
}

// CheckView reports a view this rule set cannot judge safely: one whose header has the engine's
// parts (binary, home, paths, pids) but not the engine's JSON (field 34), which the self-guard
// reads. A host that laid out such a view predates the field; judging without it would miss
// every engine path, so the stage must fail instead (its failure mode decides).
func CheckView(v abi.View) error {
	if _, ok := v.Field(abi.FieldEngine); ok {
		return nil
	}
	for _, id := range []int{abi.FieldEngineBinary, abi.FieldEngineHome, abi.FieldEnginePath, abi.FieldEnginePid} {
		if _, ok := v.Field(id); ok {
			return errors.New("rules: the view has the engine's paths but not its JSON (view field 34): the host is older than this plugin; upgrade the gateway")
		}
	}
	return nil
}

// input is what a rule reads of one call: the JSON envelope, or its view.
type input struct {
	env    []byte
	view   abi.View
	isView bool
	// head holds tool, server, method, agent, cwd, uri, time, prompt.
	head [8]string
}

// get returns the envelope's member name (arguments, principal, engine, tool_info) as gjson
// reads it: from the envelope, or parsed from the view's copy of the same JSON.
func (in *input) get(name string) gjson.Result {
	if !in.isView {
		return gjson.GetBytes(in.env, name)
	}
	var raw string
	switch name {
	case "arguments":
		r, _ := in.view.Root(abi.PartArguments)
		raw = r.Raw
	case "principal":
		raw = in.view.Get(abi.FieldPrincipal)
	case "engine":
		raw = in.view.Get(abi.FieldEngine)
	case "tool_info":
		raw = in.view.Get(abi.FieldToolInfo)
	}
	return gjson.Parse(raw)
}

func (e *Engine) evaluate(in *input, now time.Time) Result {
	fields := &in.head
	tool := fields[0]
	if tool == "" {
		tool = fields[7]
	}
	if ts := fields[6]; ts != "" {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			now = t
		}
	}
	var args gjson.Result
	argsLoaded := false
	var principal gjson.Result
	principalLoaded := false
	var c *call
	argsBefore := false // a rule before this one that is not a deny reads the arguments or the time
	for i := range e.rules {
		r := &e.rules[i]
		w := &r.When
		if r.Action != abi.ActionDeny && (w.onArguments() || w.Time != nil) {
			argsBefore = true // it may match other arguments or another time (checked before it is skipped)
		}
		if !glob.Any(w.Tool, tool) || !glob.Any(w.Server, fields[1]) ||
			!glob.Any(w.Method, fields[2]) || !glob.Any(w.Agent, fields[3]) ||
			!glob.Any(w.Cwd, fields[4]) || !glob.Any(w.URI, fields[5]) {
			continue
		}
		if w.Time != nil && !w.Time.contains(now) {
			continue
		}
		if len(w.Arguments) > 0 {
			if !argsLoaded {
				args = in.get("arguments")
				argsLoaded = true
			}
			if !argsMatch(args, w.Arguments) {
				continue
			}
		}
		if w.Principal != nil {
			if !principalLoaded {
				principal = in.get("principal")
				principalLoaded = true
			}
			if !w.Principal.match(principal) {
				continue
			}
		}
		if w.EnginePaths || len(w.commands) > 0 {
			if c == nil {
				if !argsLoaded {
					args = in.get("arguments")
					argsLoaded = true
				}
				c = e.loadCall(in, args)
			}
			if w.EnginePaths && !c.touchesEngine() || len(w.commands) > 0 && !c.runs(w.commands) {
				continue
			}
		}
		hides := r.Action == abi.ActionDeny && !w.onArguments() && w.Time == nil && !argsBefore
		return Result{Rule: r, Matched: true, HidesTool: hides}
	}
	return Result{}
}

func argsMatch(args gjson.Result, conds map[string][]string) bool {
	for path, pats := range conds {
		v := args.Get(path)
		if !v.Exists() {
			return false
		}
		if v.IsArray() {
			ok := false
			v.ForEach(func(_, el gjson.Result) bool {
				if glob.Any(pats, el.String()) {
					ok = true
					return false
				}
				return true
			})
			if !ok {
				return false
			}
			continue
		}
		if !glob.Any(pats, v.String()) {
			return false
		}
	}
	return true
}

// noneVerdict is the verdict of a call no rule matched, shared (callers must not modify it).
var noneVerdict = []byte(`{"action":"none"}`)

// Verdict encodes the result as verdict JSON without reflection. The verdict of a call no rule
// matched is one shared slice: do not modify it.
func (r Result) Verdict() []byte {
	if !r.Matched {
		return noneVerdict[:len(noneVerdict):len(noneVerdict)]
	}
	b := make([]byte, 0, 128)
	b = append(b, `{"action":`...)
	b = strconv.AppendQuote(b, r.Rule.Action)
	b = append(b, `,"rule":`...)
	b = strconv.AppendQuote(b, r.Rule.ID)
	if r.Rule.Reason != "" {
		b = append(b, `,"reason":`...)
		b = strconv.AppendQuote(b, r.Rule.Reason)
	}
	if r.Rule.Guidance != "" {
		b = append(b, `,"guidance":`...)
		b = strconv.AppendQuote(b, r.Rule.Guidance)
	}
	if r.Rule.Final {
		b = append(b, `,"final":true`...)
	}
	if r.Rule.Action == abi.ActionDeny {
		b = append(b, `,"score":1`...)
	}
	if r.HidesTool {
		b = append(b, `,"metadata":{"hides_tool":true}`...)
	} else if r.Rule.Timeout != "" || r.Rule.OnTimeout != "" {
		b = append(b, `,"metadata":{`...)
		if r.Rule.Timeout != "" {
			b = append(b, `"timeout":`...)
			b = strconv.AppendQuote(b, r.Rule.Timeout)
		}
		if r.Rule.OnTimeout != "" {
			if r.Rule.Timeout != "" {
				b = append(b, ',')
			}
			b = append(b, `"on_timeout":`...)
			b = strconv.AppendQuote(b, r.Rule.OnTimeout)
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	return b
}
