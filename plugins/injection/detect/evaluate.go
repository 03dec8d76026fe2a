package detect

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/added060/palisade/plugins/internal/argkind"
	"github.com/added060/palisade/plugins/internal/shell"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/exclude"
	"github.com/added060/palisade/sdk/go/jsonw"
	"github.com/tidwall/gjson"
)

// Response modes: what the response phase does with tool output that fires.
const (
	ModeDeny   = "deny"
	ModeRedact = "redact"
)

// RedactionMarker replaces offending text in redact mode; %s is the label.
const RedactionMarker = "[REDACTED: %s]"

// maxEvidence caps the evidence list of one verdict.
const maxEvidence = 16

// Config is the stage config (config key "config", JSON). Every field is optional.
type Config struct {
	// Thresholds per category label; DefaultThreshold when absent.
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
	// Margin is the fail-safe margin subtracted from every threshold (default 0.05).
	Margin *float64 `json:"margin,omitempty"`
	// Categories enabled in the request phase (default: all).
	Categories []string `json:"categories,omitempty"`
	// ResponseCategories enabled in the response phase (default: prompt_injection only: tool
	// output legitimately holds paths, SQL and markup).
	ResponseCategories []string `json:"response_categories,omitempty"`
	// ResponseMode is deny (default) or redact.
	ResponseMode string `json:"response_mode,omitempty"`
	// Exclude lists findings that do not count: a category in an argument path of a tool
	// (sdk/go/exclude; `palisade tune` proposes them from false positives).
	Exclude exclude.List `json:"exclude,omitempty"`
}

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("injection: invalid config")

// ParseConfig decodes and validates the stage config. Empty input means defaults.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	if len(strings.TrimSpace(string(b))) == 0 {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for k, v := range c.Thresholds {
		if _, ok := ParseCategory(k); !ok {
			return c, fmt.Errorf("%w: thresholds: unknown category %q", ErrConfig, k)
		}
		if v <= 0 || v > 1 {
			return c, fmt.Errorf("%w: thresholds.%s: %v not in (0,1]", ErrConfig, k, v)
		}
	}
	for _, list := range [][]string{c.Categories, c.ResponseCategories} {
		for _, k := range list {
			if _, ok := ParseCategory(k); !ok {
				return c, fmt.Errorf("%w: unknown category %q", ErrConfig, k)
			}
		}
	}
	if c.Margin != nil && (*c.Margin < 0 || *c.Margin >= 1) {
		return c, fmt.Errorf("%w: margin %v not in [0,1)", ErrConfig, *c.Margin)
	}
	switch c.ResponseMode {
	case "", ModeDeny, ModeRedact:
	default:
		return c, fmt.Errorf("%w: response_mode %q: want deny or redact", ErrConfig, c.ResponseMode)
	}
	if err := c.Exclude.Validate(); err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for i, r := range c.Exclude {
		for _, k := range r.Labels {
			if _, ok := ParseCategory(k); !ok && k != "*" {
				return c, fmt.Errorf("%w: exclude[%d].labels: unknown category %q", ErrConfig, i, k)
			}
		}
	}
	return c, nil
}

// Evaluator turns envelopes into verdicts. It is immutable and safe for concurrent use.
type Evaluator struct {
	request  *Detector
	response *Detector
	// byKind holds, for each argument kind that judges fewer categories, a request detector
	// with only those enabled (nil entries use request).
	byKind [argkind.NumKinds]*Detector
	mode   string
	// kindsOff judges every argument as argkind.Unknown (context-free, as before kinds):
	// the split evaluation's baseline.
	kindsOff bool
	exclude  exclude.List
	// tools keeps the last call's argument classifier (view input).
	tools argkind.Cache
}

// NewEvaluator builds the request- and response-phase detectors from c.
func NewEvaluator(c Config) *Evaluator {
	th := map[Category]float64{}
	for k, v := range c.Thresholds {
		cat, _ := ParseCategory(k)
		th[cat] = v
	}
	disabled := func(enabled []string, def []Category) map[Category]bool {
		on := map[Category]bool{}
		for _, k := range enabled {
			cat, _ := ParseCategory(k)
			on[cat] = true
		}
		if len(enabled) == 0 {
			for _, cat := range def {
				on[cat] = true
			}
		}
		off := map[Category]bool{}
		for _, cat := range Categories() {
			if !on[cat] {
				off[cat] = true
			}
		}
		return off
	}
	mode := c.ResponseMode
	if mode == "" {
		mode = ModeDeny
	}
	reqOff := disabled(c.Categories, Categories())
	exhaustive := false // an exclusion that names rules needs every rule a text trips
	for _, r := range c.Exclude {
		exhaustive = exhaustive || len(r.Rules) > 0
	}
	e := &Evaluator{
		request:  New(Options{Thresholds: th, Margin: c.Margin, Disabled: reqOff, Exhaustive: exhaustive}),
		response: New(Options{Thresholds: th, Margin: c.Margin, Disabled: disabled(c.ResponseCategories, []Category{PromptInjection}), Exhaustive: exhaustive}),
		mode:     mode,
		exclude:  c.Exclude,
	}
	for k := range e.byKind {
		kind := argkind.Kind(k)
		if kind.Labels() == nil {
			continue
		}
		off := map[Category]bool{}
		for _, cat := range Categories() {
			if !kind.Applies(cat.String()) {
				off[cat] = true
			}
		}
		e.byKind[k] = New(Options{Thresholds: th, Margin: c.Margin, Disabled: reqOff, RulesOff: off, Exhaustive: exhaustive})
	}
	return e
}

// detectorFor returns the request-phase detector for an argument of kind k.
func (e *Evaluator) detectorFor(k argkind.Kind) *Detector {
	if !e.kindsOff && int(k) < len(e.byKind) && e.byKind[k] != nil {
		return e.byKind[k]
	}
	return e.request
}

// leaf is one string scanned, with its JSON path for evidence and what kind of argument it is.
type leaf struct {
	path string
	text string
	kind argkind.Kind
	// mismatch is set when the tool's input schema declares the argument's type and the value
	// violates it: a finding of its own (see schemaMismatch), and the value is judged strictly.
	mismatch argkind.Mismatch
	// codeSearch is set for every argument of a tool whose name says it searches code
	// (codeSearchTool): its query is judged without the search box's break-out rules.
	codeSearch bool
	// file is the file a file tool writes this text into (writtenInto): the text is judged
	// by what will run it as well (writtenFile).
	file string
	// root is the folder a Shell leaf runs in, as the call names it (the envelope's `cwd`, a
	// `cwd` argument beside the command): a path inside it is judged as the relative path,
	// when it can be a project's (shell.AnalyzeIn, issue 26, det68).
	root string
}

// finding is a leaf that fired.
type finding struct {
	leaf
	res   Result
	fired []Category
}

// EvaluateJSON evaluates an envelope and returns the verdict as JSON.
func (e *Evaluator) EvaluateJSON(env []byte) ([]byte, error) {
	v, err := e.Evaluate(env)
	if err != nil {
		return nil, err
	}
	return encodeVerdict(v)
}

// encodeVerdict encodes v without reflection (jsonw.AppendVerdict: the fields, order and
// omitempty rules of encoding/json), which costs far less inside Wasm than json.Marshal.
func encodeVerdict(v abi.Verdict) ([]byte, error) {
	return jsonw.AppendVerdict(make([]byte, 0, 256), v)
}

// Evaluate scans the envelope's phase-relevant strings. Request phase of a call (tools/call,
// resources/read, prompts/get): every string leaf of arguments and params._meta, and uri; of
// any other request or notification: every string leaf of params, with the response detector.
// Response phase of a call: result.content[].text, result.contents[].text, the string leaves of
// result.structuredContent (and result.messages for prompts/get); of any other answer: every
// string leaf of result. Both: error.message and the string leaves of error.data. It returns deny when a category fires (or, in
// the response phase with redact mode, no opinion plus the redacted result; in the request
// phase, uncertain when every category that fired rests on uncertain findings only), else none.
func (e *Evaluator) Evaluate(env []byte) (abi.Verdict, error) {
	if !gjson.ValidBytes(env) {
		return abi.Verdict{}, errors.New("injection: envelope is not valid JSON")
	}
	// A string view of env, not a copy: env is not written while the verdict is built, and
	// a copy of a multi-megabyte envelope is what made large calls run out of memory.
	root := gjson.Parse(unsafe.String(unsafe.SliceData(env), len(env)))
	phase := root.Get("phase").String()
	call := isCall(root.Get("method").String())
	var leaves []leaf
	d := e.request
	if depth := abi.Nesting(unsafe.String(unsafe.SliceData(env), len(env))); depth > MaxNesting {
		// Deeper than any tool's arguments: refuse to guess, and say so (never clean).
		return abi.Verdict{Action: abi.ActionNone, Incomplete: true, Rule: "injection/nesting",
			Reason: fmt.Sprintf("envelope nested %d levels deep (limit %d): not scanned", depth, MaxNesting)}, nil
	}
	if phase == abi.PhaseResponse {
		d = e.response
		res := root.Get("result")
		outKind := argkind.Unknown
		if call && readsSource(argkind.ForCall(root.Get("tool").String(), toolInfo(root.Get("tool_info"))), func(yield func(k, v string)) {
			root.Get("arguments").ForEach(func(k, v gjson.Result) bool {
				if v.Type == gjson.String {
					yield(k.String(), v.Str)
				}
				return true
			})
		}) {
			outKind = argkind.Code
		}
		if !call {
			// Any other answer (tools/list descriptions, initialize instructions, completion
			// values, ...) reaches the model as a whole: every string it holds.
			leaves = collectStrings(res, "result", nil, leaves)
		}
		for i, item := range res.Get("content").Array() {
			if !call {
				break
			}
			if t := item.Get("text"); t.Type == gjson.String {
				leaves = append(leaves, leaf{path: "result.content[" + strconv.Itoa(i) + "].text", text: t.String(), kind: outKind})
			}
		}
		for i, item := range res.Get("contents").Array() {
			if !call {
				break
			}
			if t := item.Get("text"); t.Type == gjson.String {
				leaves = append(leaves, leaf{path: "result.contents[" + strconv.Itoa(i) + "].text", text: t.String(), kind: outKind})
			}
		}
		if call {
			leaves = collectStrings(res.Get("structuredContent"), "result.structuredContent", nil, leaves)
			if root.Get("method").String() == "prompts/get" {
				// A prompt's messages are what the model reads.
				leaves = collectStrings(res.Get("messages"), "result.messages", nil, leaves)
			}
		}
		// An error answer reaches the model too: its message and the strings of its data.
		if e := root.Get("error"); e.Exists() {
			if m := e.Get("message"); m.Type == gjson.String {
				leaves = append(leaves, leaf{path: "error.message", text: m.String()})
			}
			leaves = collectStrings(e.Get("data"), "error.data", nil, leaves)
		}
	} else if call {
		tool := argkind.ForCall(root.Get("tool").String(), toolInfo(root.Get("tool_info")))
		leaves = collectStrings(root.Get("arguments"), "arguments", tool, leaves)
		writtenInto(leaves)
		leaves = callLeaves(leaves, root.Get("tool").String(), root.Get("cwd").String()) // delete.go
		if codeSearchTool(root.Get("tool").String()) {
			for i := range leaves {
				leaves[i].codeSearch = true
			}
		}
		if u := root.Get("uri"); u.Type == gjson.String {
			leaves = append(leaves, leaf{path: "uri", text: u.String(), kind: argkind.URL})
		}
		// _meta travels with the call to the server: an agent's text like the arguments.
		leaves = collectStrings(root.Get("params._meta"), "params._meta", nil, leaves)
	} else {
		// Any other request or notification (sampling and elicitation requests, log and
		// progress notifications, completion requests): every string its params carry, judged
		// as text written for a model to read, like tool output.
		d = e.response
		leaves = collectStrings(root.Get("params"), "params", nil, leaves)
	}
	return e.decide(message{phase: phase, call: call, names: func() (string, string) {
		return root.Get("server").String(), root.Get("tool").String()
	}, result: func() []byte { return env }}, d, leaves)
}

// message is what decide reads of a message besides its leaves.
type message struct {
	phase string
	call  bool
	// names returns the server and the tool (read only when exclusions need them).
	names func() (server, tool string)
	// result returns a JSON object whose "result" member is the message's result (the
	// envelope), for redaction.
	result func() []byte
}

// decide judges the leaves of one message with d (the phase's detector) and builds the verdict.
func (e *Evaluator) decide(m message, d *Detector, leaves []leaf) (abi.Verdict, error) {
	phase, call := m.phase, m.call
	incomplete := false
	var scores [NumCategories]float64
	var found []finding
	truncated := 0
	type seen struct {
		text string
		kind argkind.Kind
		mm   argkind.Mismatch
		cs   bool
		file string
	}
	type scan struct {
		res   Result
		fired []Category
	}
	// A text repeated across leaves of one kind is judged once: the first few scans are kept
	// in an array on the stack, the rest in a map made when needed.
	var few [4]struct {
		k seen
		s scan
	}
	nfew := 0
	var scanned map[seen]*scan
	lookup := func(k seen) *scan {
		for i := range few[:nfew] {
			if few[i].k == k {
				return &few[i].s
			}
		}
		return scanned[k]
	}
	remember := func(k seen, sc scan) {
		if nfew < len(few) {
			few[nfew].k, few[nfew].s = k, sc
			nfew++
			return
		}
		if scanned == nil {
			scanned = map[seen]*scan{}
		}
		p := new(scan)
		*p = sc
		scanned[k] = p
	}
	var server, tool string // read once, and only when there are exclusions to match
	// keep drops the categories an exclusion covers at l's path.
	keep := func(l leaf, res *Result, fired []Category) []Category {
		if len(e.exclude) == 0 || len(fired) == 0 {
			return fired
		}
		if server == "" && tool == "" {
			server, tool = m.names()
		}
		var out []Category
		for _, c := range fired {
			if !e.exclude.Excludes(server, tool, l.path, c.String(), hitRules(res, c)...) {
				out = append(out, c)
			}
		}
		return out
	}
	for _, l := range leaves {
		if l.text == "" {
			continue
		}
		if l.kind == argkind.Typed {
			continue // a value of the type the input schema declares: data, not text
		}
		if sc := lookup(seen{l.text, l.kind, l.mismatch, l.codeSearch, l.file}); sc != nil {
			if fired := keep(l, &sc.res, sc.fired); len(fired) > 0 {
				found = append(found, finding{leaf: l, res: sc.res, fired: fired})
			}
			continue
		}
		if e.kindsOff || l.kind == argkind.Shell && len(l.text) > shell.MaxParseBytes {
			l.kind = argkind.Unknown // context-free: every rule (stricter)
		}
		ld := d
		if phase != abi.PhaseResponse && call {
			ld = e.detectorFor(l.kind)
		}
		r := ld.Scan(l.text)
		if r.Truncated {
			truncated++
		}
		if judgeKind(&r, l, ld) {
			incomplete = true
		}
		catcherOnly(&r)
		schemaMismatch(&r, l, ld)
		if phase != abi.PhaseResponse && call {
			secretValues(&r, ld, l.text) // a credential's value leaving in the call (secretvalue.go)
		}
		for c, s := range r.Scores {
			scores[c] = max(scores[c], s)
		}
		fired := ld.Fired(&r)
		remember(seen{l.text, l.kind, l.mismatch, l.codeSearch, l.file}, scan{res: r, fired: fired})
		if fired := keep(l, &r, fired); len(fired) > 0 {
			found = append(found, finding{leaf: l, res: r, fired: fired})
		}
	}
	v := abi.Verdict{Action: abi.ActionNone, Metadata: scoresJSON(d, scores, phase, truncated)}
	if incomplete || truncated > 0 {
		v.Incomplete = true
		v.Reason = "part of the input could not be examined (see metadata)"
	}
	if len(found) == 0 {
		return v, nil
	}
	labelSet := map[Category]bool{}
	top, topScore, topRule, topPath := Category(0), -1.0, "", ""
	for _, f := range found {
		for _, c := range f.fired {
			labelSet[c] = true
			if f.res.Scores[c] > topScore {
				top, topScore, topPath = c, f.res.Scores[c], f.path
				topRule = ""
				for _, h := range f.res.Hits {
					if h.Category == c {
						topRule = h.Rule
						break
					}
				}
			}
			if len(v.Evidence) < maxEvidence {
				v.Evidence = append(v.Evidence, evidenceFor(f, c))
			}
		}
	}
	for _, c := range Categories() {
		if labelSet[c] {
			v.Labels = append(v.Labels, c.String())
		}
	}
	v.Score = round3(topScore)
	v.Rule = "injection/" + top.String() + "/" + topRule
	v.Reason = fmt.Sprintf("%s detected in %s (score %.2f)", top, topPath, topScore)
	for _, f := range found {
		if f.mismatch.Declared == "" || !slices.Contains(f.fired, mismatchCategory(f.mismatch)) {
			continue
		}
		// The clearest reason there is: the value is not what the tool declares it takes.
		v.Rule = "injection/" + mismatchCategory(f.mismatch).String() + "/" + ruleTypeMismatch
		v.Reason = fmt.Sprintf("%s holds %q, not %s as the tool's input schema declares; %s",
			f.path, truncateUTF8(f.text, 60), f.mismatch.Declared, v.Reason)
		break
	}
	keyFired := false // a key cannot be redacted: deny
	inError := false  // an error answer has no result to redact: deny
	for _, f := range found {
		keyFired = keyFired || strings.HasSuffix(f.path, "{key}")
		inError = inError || strings.HasPrefix(f.path, "error.")
	}
	if phase == abi.PhaseResponse && e.mode == ModeRedact && !keyFired && !inError {
		red, err := redact(m.result(), d, found)
		if err != nil {
			return abi.Verdict{}, err
		}
		v.Result = red
		v.Reason = "redacted " + v.Reason
		return v, nil
	}
	if phase != abi.PhaseResponse && allUncertain(found) {
		// Every finding is one a careful reviewer would ask about (a package install with
		// sudo, a script fetched over https from a named host and run): uncertain, which the
		// bundle maps per way in (ask by default: held for a person, or Claude Code's own
		// prompt in the hook).
		v.Action = abi.ActionUncertain
		v.Reason = "uncertain: " + v.Reason
		return v, nil
	}
	v.Action = abi.ActionDeny
	return v, nil
}

// allUncertain reports whether every category that fired in found rests on uncertain hits
// only (see Hit.Uncertain).
func allUncertain(found []finding) bool {
	for _, f := range found {
		for _, c := range f.fired {
			if !uncertainOnly(&f.res, c) {
				return false
			}
		}
	}
	return len(found) > 0
}

// isCall reports whether method is a call whose request text is its arguments or uri and
// whose answer's text is its content (tools/call, resources/read, prompts/get); "" counts as
// tools/call, the method an envelope without one stands for.
func isCall(method string) bool {
	switch method {
	case "", "tools/call", "resources/read", "prompts/get":
		return true
	}
	return false
}

// MaxNesting is the deepest JSON nesting the stage scans. Real tool arguments nest a few
// levels; a deeper envelope is not scanned and the verdict is marked incomplete, so the stage's
// failure mode decides (closed = deny) instead of a silent pass.
const MaxNesting = 512

// toolInfo decodes the envelope's tool_info (nil when absent or malformed).
// readsSource reports whether a call's top-level arguments (each yields key and string value)
// name a source file in a path argument: its output is that file's content, judged as code
// (argkind.Code: an HTML file's own `display:none`, a comment's "instead do", auth code's "the
// user's password" count only beside an instruction to the model, as in a code argument;
// data/heldout/wide calib's code_output). A page a fetch tool returns, a document, or any
// output of a call that names no source file is judged as text for the model, every rule.
func readsSource(tool *argkind.Tool, each func(yield func(k, v string))) bool {
	src := false
	each(func(k, v string) {
		if !src && tool.Of(k) == argkind.Path && sourceExt[strings.ToLower(path.Ext(strings.TrimSpace(v)))] {
			src = true
		}
	})
	return src
}

// sourceExt are the file name extensions of program source and markup a read tool returns.
var sourceExt = map[string]bool{".go": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true,
	".jsx": true, ".java": true, ".kt": true, ".scala": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true,
	".rs": true, ".rb": true, ".php": true, ".cs": true, ".swift": true, ".lua": true, ".pl": true, ".sh": true, ".bash": true,
	".zsh": true, ".ps1": true, ".html": true, ".htm": true, ".svg": true, ".css": true, ".scss": true, ".vue": true,
	".svelte": true, ".tmpl": true, ".gohtml": true,
	// issue 26, data/heldout/code-extra: Perl's modules (their '####' comment banners), PHP's
	// and PowerShell's modules and includes (a translation file's "密码" label), and the
	// template languages of web frameworks (Twig, Jinja, ERB, EJS, Handlebars, Mustache).
	".pm": true, ".psm1": true, ".inc": true, ".phtml": true, ".twig": true, ".j2": true, ".jinja": true,
	".erb": true, ".ejs": true, ".hbs": true, ".mustache": true}

func toolInfo(r gjson.Result) *abi.ToolInfo {
	if !r.IsObject() {
		return nil
	}
	var ti abi.ToolInfo
	if json.Unmarshal([]byte(r.Raw), &ti) != nil {
		return nil
	}
	return &ti
}

// maxPathBytes bounds an evidence path: deeper paths keep their first bytes and "…".
const maxPathBytes = 256

// collectStrings appends every string under r with its path: string values and object keys
// (a key is as much the agent's text as a value; its path ends in "{key}"). Nothing is
// skipped: the walk is iterative, so no nesting depth is too deep for it (abi.Nesting bounds
// what reaches here). tool classifies each value by its key (nil: response phase, no kinds).
func collectStrings(r gjson.Result, path string, tool *argkind.Tool, out []leaf) []leaf {
	type item struct {
		r    gjson.Result
		path string
		key  string
		decl argkind.Decl // what the schema declares for the members of the object holding it
		root bool
	}
	stack := []item{{r, path, "", argkind.Decl{}, true}}
	join := func(p, s string) string {
		if len(p) > maxPathBytes {
			if strings.HasSuffix(p, "…") {
				return p
			}
			return p + "…"
		}
		return p + s
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case it.r.Type == gjson.String:
			text := it.r.String()
			kind, mm := tool.JudgeIn(it.decl, it.key, text)
			out = append(out, leaf{path: it.path, text: text, kind: kind, mismatch: mm})
		case it.r.IsArray():
			var kids []item
			i := 0
			it.r.ForEach(func(_, v gjson.Result) bool {
				kids = append(kids, item{v, join(it.path, "["+strconv.Itoa(i)+"]"), it.key, it.decl, false})
				i++
				return true
			})
			for j := len(kids) - 1; j >= 0; j-- {
				stack = append(stack, kids[j])
			}
		case it.r.IsObject():
			var kids []item
			decl := it.decl.Object(it.key) // what the schema declares for this object's members
			if it.root {
				decl = tool.Root()
			}
			it.r.ForEach(func(k, v gjson.Result) bool {
				ks := k.String()
				kp := join(it.path, "."+ks)
				if ks != "" {
					out = append(out, leaf{path: kp + "{key}", text: ks})
				}
				kids = append(kids, item{v, kp, ks, decl, false})
				return true
			})
			for j := len(kids) - 1; j >= 0; j-- {
				stack = append(stack, kids[j])
			}
		}
	}
	return out
}

func evidenceFor(f finding, c Category) abi.Evidence {
	ev := abi.Evidence{Label: c.String(), Path: f.path, Rules: hitRules(&f.res, c)}
	for _, h := range f.res.Hits {
		if h.Category == c && h.Match != "" {
			ev.Match = h.Match
			return ev
		}
	}
	ev.Match = truncateUTF8(f.res.Norm.Text, 80)
	return ev
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

func scoresJSON(d *Detector, s [NumCategories]float64, phase string, truncated int) json.RawMessage {
	if s == ([NumCategories]float64{}) && truncated == 0 {
		// Nothing scored, the common call: the same bytes every time, built once (issue 27).
		switch phase {
		case abi.PhaseRequest:
			return noScoresRequest
		case abi.PhaseResponse:
			return noScoresResponse
		}
	}
	b := make([]byte, 0, 64)
	b = append(b, `{"scores":{`...)
	first := true
	for c, v := range s {
		if !d.enabled[c] || v == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, Category(c).String()...)
		b = append(b, '"', ':')
		b = strconv.AppendFloat(b, round3(v), 'f', -1, 64)
	}
	b = append(b, `},"phase":`...)
	b = strconv.AppendQuote(b, phase)
	if truncated > 0 {
		// strings longer than MaxScanBytes: only their head and tail were scanned
		b = append(b, `,"truncated":`...)
		b = strconv.AppendInt(b, int64(truncated), 10)
	}
	return append(b, '}')
}

// noScoresRequest and noScoresResponse are scoresJSON's answer when nothing scored. A verdict
// only reads its metadata (jsonw.AppendVerdict copies it), so every call can share them.
var (
	noScoresRequest  = scoresJSONBuild(abi.PhaseRequest)
	noScoresResponse = scoresJSONBuild(abi.PhaseResponse)
)

func scoresJSONBuild(phase string) json.RawMessage {
	b := strconv.AppendQuote([]byte(`{"scores":{},"phase":`), phase)
	b = append(b, '}')
	return b[:len(b):len(b)]
}

// redact returns the envelope's result with each offending text replaced: lines that fire on
// their own become the marker; when no single line fires (the injection spans lines) the
// whole text does.
func redact(env []byte, d *Detector, found []finding) (json.RawMessage, error) {
	var doc struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(env, &doc); err != nil {
		return nil, fmt.Errorf("injection: redact: %w", err)
	}
	repl := map[string]string{}
	for _, f := range found {
		repl[f.path] = redactText(d, f)
	}
	var walk func(v any, path string) any
	walk = func(v any, path string) any {
		switch x := v.(type) {
		case string:
			if r, ok := repl[path]; ok {
				return r
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i], path+"["+strconv.Itoa(i)+"]")
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				x[k] = walk(x[k], path+"."+k)
			}
		}
		return v
	}
	walk(doc.Result, "result")
	return json.Marshal(doc.Result)
}

func redactText(d *Detector, f finding) string {
	label := f.fired[0].String()
	marker := fmt.Sprintf(RedactionMarker, label)
	lines := strings.Split(f.text, "\n")
	if len(lines) > 1 {
		hit := false
		for i, ln := range lines {
			r := d.Scan(ln)
			if len(d.Fired(&r)) > 0 {
				lines[i] = marker
				hit = true
			}
		}
		if hit {
			return strings.Join(lines, "\n")
		}
	}
	return marker
}

// hitRules names the rules behind category c's hits in r, as `<category>/<rule>`, each once.
func hitRules(r *Result, c Category) []string {
	var out []string
	for _, h := range r.Hits {
		if h.Category == c && h.Rule != "" {
			id := c.String() + "/" + h.Rule
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// writtenInto marks the leaves that are text a file tool writes into a file (Write's
// content, Edit's and MultiEdit's new_string, NotebookEdit's new_source) with the file the
// call's file_path or notebook_path argument names, so that the text is judged by what will
// run it (writtenFile): an agent can write a script with one call and run it with an
// innocent-looking command in another (issue 26, det60).
func writtenInto(leaves []leaf) {
	file := ""
	for _, l := range leaves {
		switch {
		case l.kind == argkind.Path && (l.path == "arguments.file_path" || l.path == "arguments.notebook_path"):
			file = l.text
		case l.kind == argkind.Path && file == "" && (l.path == "arguments.path" || l.path == "arguments.filepath" || l.path == "arguments.filename" || l.path == "arguments.file"):
			// The MCP filesystem server's write_file and edit_file name the file `path`;
			// other servers' file tools `filepath`, `filename` or `file`.
			file = l.text
		}
	}
	// A list of files written in one call (GitHub's push_files: files[N].path and
	// files[N].content; GitLab's: files[N].file_path): each content with its own path.
	items := map[string]string{}
	for _, l := range leaves {
		parent, ok := strings.CutSuffix(l.path, ".path")
		if !ok {
			parent, ok = strings.CutSuffix(l.path, ".file_path")
		}
		if ok && l.kind == argkind.Path && strings.HasSuffix(parent, "]") {
			items[parent] = l.text
		}
	}
	for i, l := range leaves {
		if parent, ok := strings.CutSuffix(l.path, ".content"); ok && items[parent] != "" && (l.kind == argkind.Code || l.kind == argkind.Unknown) {
			leaves[i].kind, leaves[i].file = argkind.Code, items[parent]
		}
	}
	if file == "" {
		return
	}
	for i, l := range leaves {
		switch {
		case l.kind == argkind.Code && writtenText(l.path):
			leaves[i].file = file
		case l.kind == argkind.Unknown && editText(l.path):
			// edit_file's edits[N].newText: the text written into the file, judged as
			// Write's content is.
			leaves[i].kind, leaves[i].file = argkind.Code, file
		}
	}
}

// editText reports whether p is the MCP filesystem server's edit_file replacement text,
// edits[N].newText.
func editText(p string) bool {
	rest, ok := strings.CutPrefix(p, "arguments.edits[")
	if !ok {
		return false
	}
	n, tail, ok := strings.Cut(rest, "]")
	return ok && n != "" && strings.Trim(n, "0123456789") == "" && tail == ".newText"
}

// writtenText reports whether the argument at path p is text a file tool writes: content,
// new_string, new_source, or an edit's new_string (MultiEdit's edits[N].new_string).
func writtenText(p string) bool {
	switch p {
	case "arguments.content", "arguments.new_string", "arguments.new_source":
		return true
	}
	rest, ok := strings.CutPrefix(p, "arguments.edits[")
	if !ok {
		return false
	}
	n, tail, ok := strings.Cut(rest, "]")
	return ok && n != "" && strings.Trim(n, "0123456789") == "" && tail == ".new_string"
}
