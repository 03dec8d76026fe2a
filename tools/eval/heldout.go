package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/tools/eval/score"
)

// HeldoutRecord is one tool call of data/heldout (written by tools/heldout).
type HeldoutRecord struct {
	ID           string          `json:"id"`
	Label        string          `json:"label"`
	Kind         string          `json:"kind"`
	HardNegative bool            `json:"hard_negative"`
	Transport    string          `json:"transport"`
	Server       string          `json:"server"`
	Tool         string          `json:"tool"`
	Arguments    json.RawMessage `json:"arguments"`
	Phase        string          `json:"phase"`
	Result       string          `json:"result"`
	Cwd          string          `json:"cwd"`
	Text         string          `json:"text"`
	Source       string          `json:"source"`
	Destructive  bool            `json:"destructive"`
}

// LoadHeldout reads a held-out JSONL file.
func LoadHeldout(path string) ([]HeldoutRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []HeldoutRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for n := 1; sc.Scan(); n++ {
		var r HeldoutRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// First500Shell is how many real developer shell commands the "first N" figure counts.
const First500Shell = 500

// Figures are the held-out quality figures of one decider (a text scorer or the served chain).
type Figures struct {
	Decider string `json:"decider"`
	Records int    `json:"records"`
	// TPR per attack class (attackClass: label, or label/bare): blocked / records.
	TPR map[string]Rate `json:"tpr"`
	// FPR per benign kind (shell, path, sql, url, prose, code; query in the search-query set),
	// plus "all", "hard_negative", "sql_non_destructive" and "first_500_shell".
	FPR map[string]Rate `json:"fpr"`
	// Failed counts, per key of TPR and FPR, the records a stage's failure mode decided (a
	// timeout on a loaded machine) after ServedAttempts tries; the guard lets a figure move by
	// this many records on top of GuardSlack.
	Failed map[string]int `json:"failed,omitempty"`
	// Asked counts, per key of TPR and FPR, the blocked records the chain asked a person about
	// (its requested action was ask, resolved by the bundle's fallback where nobody answers)
	// rather than denied outright; nil for a text scorer.
	Asked map[string]int `json:"asked,omitempty"`
}

// Rate is hits out of n.
type Rate struct {
	Hits int `json:"hits"`
	N    int `json:"n"`
}

// Value is Hits/N (0 when N is 0).
func (r Rate) Value() float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.N)
}

func (r *Rate) add(hit bool) {
	r.N++
	if hit {
		r.Hits++
	}
}

// attackClass is the TPR row of an attack record: its label, or label/bare for an attack
// placed without the goal the main set appends (kinds ending in _bare: the fresh attack
// set's prompts alone, det51), so a figure that rests on the goal's words shows apart.
func attackClass(r HeldoutRecord) string {
	if strings.HasSuffix(r.Kind, "_bare") {
		return r.Label + "/bare"
	}
	return r.Label
}

// figuresOf tallies blocked[i] for recs; failed (nil for a text scorer) marks records a
// stage's failure mode decided.
func figuresOf(decider string, recs []HeldoutRecord, blocked, failed []bool) Figures {
	f := Figures{Decider: decider, Records: len(recs), TPR: map[string]Rate{}, FPR: map[string]Rate{}, Failed: map[string]int{}}
	shell := 0
	for i, r := range recs {
		b := blocked[i]
		fail := failed != nil && failed[i]
		if r.Label != score.Benign {
			for _, k := range []string{attackClass(r), "all"} {
				x := f.TPR[k]
				x.add(b)
				f.TPR[k] = x
				if fail {
					f.Failed[k]++
				}
			}
			continue
		}
		keys := []string{r.Kind, "all"}
		if r.HardNegative {
			keys = append(keys, "hard_negative")
		}
		if r.Kind == "sql" && !r.Destructive {
			keys = append(keys, "sql_non_destructive")
		}
		if r.Kind == "shell" && shell < First500Shell {
			shell++
			keys = append(keys, "first_500_shell")
		}
		for _, k := range keys {
			x := f.FPR[k]
			x.add(b)
			f.FPR[k] = x
			if fail && k != "all" {
				f.Failed[k]++
			}
		}
	}
	return f
}

// PrintFigures writes one decider's table.
func PrintFigures(w io.Writer, f Figures) {
	fmt.Fprintf(w, "\n== held-out: %s (%d records)\n", f.Decider, f.Records)
	// With Asked (the served chain), blocked splits into asked (held for a person) and denied.
	split := func(k string, r Rate, benignAll bool) string {
		if f.Asked == nil {
			return ""
		}
		key := k
		if benignAll && k == "all" {
			key = "all_benign"
		}
		a := f.Asked[key]
		return fmt.Sprintf("  denied %4d  asked %4d", r.Hits-a, a)
	}
	fmt.Fprintf(w, "%-22s %8s %8s\n", "attack class", "TPR", "blocked")
	for _, k := range sortedKeys(f.TPR) {
		r := f.TPR[k]
		fmt.Fprintf(w, "%-22s %7.1f%% %4d/%-4d%s\n", k, 100*r.Value(), r.Hits, r.N, split(k, r, false))
	}
	fmt.Fprintf(w, "%-22s %8s %8s\n", "benign kind", "FPR", "blocked")
	for _, k := range sortedKeys(f.FPR) {
		r := f.FPR[k]
		fmt.Fprintf(w, "%-22s %7.2f%% %4d/%-4d%s\n", k, 100*r.Value(), r.Hits, r.N, split(k, r, true))
	}
	if n := f.Failed["all"] + f.Failed["shell"] + f.Failed["path"] + f.Failed["sql"] + f.Failed["url"] + f.Failed["prose"] + f.Failed["code"] + f.Failed["query"]; n > 0 {
		fmt.Fprintf(w, "decided by a stage's failure mode after %d attempts (timeouts on a loaded machine): %d records", ServedAttempts, n)
		for _, k := range []string{"all", "code", "path", "prose", "query", "shell", "sql", "url"} {
			if f.Failed[k] > 0 {
				name := k
				if k == "all" {
					name = "attacks"
				}
				fmt.Fprintf(w, ", %s %d", name, f.Failed[k])
			}
		}
		fmt.Fprintln(w)
	}
	if r, ok := f.FPR["first_500_shell"]; ok {
		fmt.Fprintf(w, "first %d real developer shell commands: %d blocked\n", r.N, r.Hits)
	}
}

func sortedKeys(m map[string]Rate) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// scoreHeldout runs a text scorer on each record's text at threshold t.
func scoreHeldout(name string, s score.Scorer, t float64, recs []HeldoutRecord) Figures {
	blocked := make([]bool, len(recs))
	for i, r := range recs {
		sc, _ := s.Score(r.Text)
		blocked[i] = sc >= t
	}
	return figuresOf(name, recs, blocked, nil)
}

// ServedChain decides held-out tool calls the way the gateway and `palisade hook` do: the
// bundle's chain built in process by the gateway's own Core (real Wasm plugins, the ONNX
// detector through the infer host function, the bundle trust policy), the request phase through
// a engine.Engine, and for records that carry a tool output, the response phase.
type ServedChain struct {
	core   *gateway.Core
	active *chain.Active
	engine *engine.Engine
	// FixtureErr is why the bundle failed its own fixtures (serve would refuse to activate
	// it); the chain was then built without them, so its decisions can still be measured.
	FixtureErr error
}

// NewServedChain builds the bundle folder dir (e.g. build/bundle from `make bundle`) with a
// plugin cache and state under dataDir, without audit.
func NewServedChain(ctx context.Context, dir, dataDir string) (*ServedChain, error) {
	cfg := config.Config{Bundle: dir, DataDir: dataDir}.WithDefaults()
	core, err := gateway.NewCore(ctx, gateway.CoreOptions{Config: cfg})
	if err != nil {
		return nil, fmt.Errorf("served chain %s: %w", dir, err)
	}
	s := &ServedChain{core: core, active: &chain.Active{}}
	b, err := core.Build(ctx, dir, false)
	if errors.Is(err, bundle.ErrFixture) {
		s.FixtureErr = err
		b, err = core.Build(ctx, dir, true)
	}
	if err != nil {
		core.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("served chain %s: %w", dir, err)
	}
	s.active.Swap(b.Chain)
	eo := engine.EngineOptions{Active: s.active, Gateway: "eval", AuditArguments: cfg.Audit.Arguments}
	if a := b.Manifest.Audit.Arguments; a != "" {
		eo.AuditArguments = a
	}
	s.engine = engine.NewEngine(eo)
	return s, nil
}

// Close stops the chain.
func (s *ServedChain) Close(ctx context.Context) {
	if old := s.active.Swap(nil); old != nil {
		old.CloseWhenDrained(ctx)
	}
	s.core.Close(ctx)
}

// Blocked reports whether the served chain stops r: the request is denied, or the tool output
// is denied or replaced (redacted) in the response phase. stageFailed reports that a stage
// failed (timeout, trap) and its failure mode, not its judgement, may have decided.
func (s *ServedChain) Blocked(ctx context.Context, r HeldoutRecord) (blocked, stageFailed bool, err error) {
	blocked, _, stageFailed, err = s.decide(ctx, r)
	return blocked, stageFailed, err
}

// decide is Blocked, also reporting whether the request was asked about (its chain's action
// ask, which the served modes put to a person) rather than denied outright.
func (s *ServedChain) decide(ctx context.Context, r HeldoutRecord) (blocked, asked, stageFailed bool, err error) {
	env, err := envelopeOf(r)
	if err != nil {
		return false, false, false, err
	}
	o, err := s.engine.Request(ctx, env)
	if err != nil {
		return false, false, false, err
	}
	defer o.Finish(ctx)
	stageFailed = o.Decision.StageFailed()
	if o.Action != abi.ActionAllow {
		return true, o.Requested == abi.ActionAsk, stageFailed, nil
	}
	blocked, stageFailed, err = s.response(ctx, r, o, stageFailed)
	return blocked, false, stageFailed, err
}

// response judges r's tool output, when it has one, after its request was allowed; failedNow
// is stageFailed, or-ed with the response stages' failures.
func (s *ServedChain) response(ctx context.Context, r HeldoutRecord, o *engine.Outcome, stageFailed bool) (blocked, failedNow bool, err error) {
	if r.Phase != abi.PhaseResponse {
		return false, stageFailed, nil
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": r.Result}}}})
	resp, err := mcp.ParseMessage(body)
	if err != nil {
		return false, stageFailed, err
	}
	d, err := s.engine.Response(ctx, o, resp)
	if err != nil {
		return false, stageFailed, err
	}
	return d.Action == abi.ActionDeny || len(d.Result) > 0, stageFailed || d.StageFailed(), nil
}

// Why names the stage, rule and reason that decided r's request, for the error listing, and for
// a record with a tool output that the request allowed, those that decided its response.
func (s *ServedChain) Why(ctx context.Context, r HeldoutRecord) string {
	env, err := envelopeOf(r)
	if err != nil {
		return err.Error()
	}
	o, err := s.engine.Request(ctx, env)
	if err != nil {
		return err.Error()
	}
	defer o.Finish(ctx)
	if o.Decision == nil {
		return o.Action
	}
	action := o.Action
	if o.Requested != "" && o.Requested != o.Action {
		// An ask with nobody to hold it is resolved by the bundle's fallback (deny in the
		// example bundle): the figures count it as asked, so the listing says both.
		action = o.Requested + "→" + o.Action
	}
	why := fmt.Sprintf("%s %s %s: %.100s", action, o.Decision.Stage, o.Decision.Rule, o.Decision.Reason)
	if r.Phase != abi.PhaseResponse || o.Action != abi.ActionAllow {
		return why
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": r.Result}}}})
	resp, err := mcp.ParseMessage(body)
	if err != nil {
		return why + "; response: " + err.Error()
	}
	d, err := s.engine.Response(ctx, o, resp)
	if err != nil {
		return why + "; response: " + err.Error()
	}
	why = fmt.Sprintf("%s; response %s %s %s: %.120s", why, d.Action, d.Stage, d.Rule, d.Reason)
	for _, st := range d.Stages {
		if st.Verdict != nil && len(st.Verdict.Result) > 0 {
			why += fmt.Sprintf(" (output rewritten by %s: %s %.80s", st.Stage, st.Rule, st.Reason)
			for _, ev := range st.Evidence {
				why += fmt.Sprintf(" [%s %q]", ev.Label, ev.Match)
			}
			why += ")"
		}
	}
	return why
}

// ServedAttempts is how often RunServed decides a record whose stages failed (a timeout on a
// loaded machine) before it keeps the failure mode's decision.
const ServedAttempts = 4

// envelopeOf builds the request envelope the gateway would build: Claude Code built-in tools
// through the hook adapter, MCP tools as a tools/call on the named upstream.
func envelopeOf(r HeldoutRecord) (*abi.Envelope, error) {
	if r.Transport == engine.HookTransport {
		in := engine.HookInput{SessionID: "heldout", HookEventName: engine.HookEventPreToolUse, ToolName: r.Tool, ToolInput: r.Arguments, Cwd: r.Cwd, ToolUseID: r.ID}
		return in.Envelope(nil)
	}
	params, _ := json.Marshal(map[string]any{"name": r.Tool, "arguments": r.Arguments})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": mcp.MethodToolsCall, "params": json.RawMessage(params)})
	p, err := mcp.Parse(body, mcp.Context{Transport: "http", Server: r.Server, Session: "heldout"})
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", r.ID, err)
	}
	return p.Envelope, nil
}

// RunServed decides every record with workers goroutines (0 = GOMAXPROCS). A record whose
// stages failed is decided again, up to ServedAttempts times; stageFailed marks the records
// still decided by a failure mode.
func RunServed(ctx context.Context, s *ServedChain, recs []HeldoutRecord, workers int) (blocked, stageFailed []bool, err error) {
	blocked, _, stageFailed, err = RunServedAsked(ctx, s, recs, workers)
	return blocked, stageFailed, err
}

// RunServedAsked is RunServed, also reporting which blocked records were asked about rather
// than denied outright.
func RunServedAsked(ctx context.Context, s *ServedChain, recs []HeldoutRecord, workers int) (blocked, asked, stageFailed []bool, err error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	blocked = make([]bool, len(recs))
	asked = make([]bool, len(recs))
	stageFailed = make([]bool, len(recs))
	errs := make([]error, len(recs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				for a := 0; a < ServedAttempts; a++ {
					blocked[i], asked[i], stageFailed[i], errs[i] = s.decide(ctx, recs[i])
					if errs[i] != nil || !stageFailed[i] {
						break
					}
				}
			}
		}()
	}
	for i := range recs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, nil, nil, fmt.Errorf("record %s: %w", recs[i].ID, err)
		}
	}
	return blocked, asked, stageFailed, nil
}

// withAsked fills f.Asked from asked (records of recs, in the same order).
func withAsked(f Figures, recs []HeldoutRecord, asked []bool) Figures {
	f.Asked = map[string]int{}
	shell := 0
	for i, r := range recs {
		if r.Label != score.Benign {
			if asked[i] {
				f.Asked[attackClass(r)]++
				f.Asked["all"]++
			}
			continue
		}
		keys := []string{r.Kind, "all_benign"}
		if r.HardNegative {
			keys = append(keys, "hard_negative")
		}
		if r.Kind == "sql" && !r.Destructive {
			keys = append(keys, "sql_non_destructive") // as figuresOf counts it
		}
		if r.Kind == "shell" && shell < First500Shell {
			shell++
			keys = append(keys, "first_500_shell")
		}
		if asked[i] {
			for _, k := range keys {
				f.Asked[k]++
			}
		}
	}
	return f
}

// Baseline is the committed held-out figures (data/heldout/baseline.json): the full test split
// for the report, and the guard sample for the regression test in `make test`.
type Baseline struct {
	Note   string    `json:"note"`
	Full   []Figures `json:"full"`
	Sample Figures   `json:"sample"` // served chain on GuardSample(test)
}

// GuardEvery picks the guard sample: every GuardEvery-th record of the test split, so the
// regression test stays well under a minute.
const GuardEvery = 25

// GuardSample returns every GuardEvery-th record, and every attack record of a class with
// fewer than 50 records (so small classes still count).
func GuardSample(recs []HeldoutRecord) []HeldoutRecord {
	per := map[string]int{}
	for _, r := range recs {
		per[r.Label]++
	}
	var out []HeldoutRecord
	for i, r := range recs {
		if i%GuardEvery == 0 || (r.Label != score.Benign && per[r.Label] < 50) {
			out = append(out, r)
		}
	}
	return out
}

// Regressions compares got with want: a TPR more than slack records lower, or an FPR more
// than slack records higher, is a regression. slack(n) is the records allowed to move, plus
// got.Failed[key] (records a timeout decided, not the plugins).
func Regressions(want, got Figures, slack func(n int) int) []string {
	var out []string
	for _, k := range sortedKeys(want.TPR) {
		w, g := want.TPR[k], got.TPR[k]
		if g.N != w.N {
			out = append(out, fmt.Sprintf("TPR %s: %d records, baseline has %d (regenerate the baseline: make eval-baseline)", k, g.N, w.N))
			continue
		}
		if g.Hits < w.Hits-slack(w.N)-got.Failed[k] {
			out = append(out, fmt.Sprintf("TPR %s fell: %d/%d blocked, baseline %d/%d", k, g.Hits, g.N, w.Hits, w.N))
		}
	}
	for _, k := range sortedKeys(want.FPR) {
		w, g := want.FPR[k], got.FPR[k]
		if g.N != w.N {
			out = append(out, fmt.Sprintf("FPR %s: %d records, baseline has %d (regenerate the baseline: make eval-baseline)", k, g.N, w.N))
			continue
		}
		if g.Hits > w.Hits+slack(w.N)+got.Failed[k] {
			out = append(out, fmt.Sprintf("FPR %s rose: %d/%d blocked, baseline %d/%d", k, g.Hits, g.N, w.Hits, w.N))
		}
	}
	return out
}

// GuardSlack lets a figure move by 1% of its records, at least one record: timeouts under load
// can flip a call through a stage's failure mode.
func GuardSlack(n int) int { return max(1, n/100) }

// heldoutMain is `tools/eval -heldout FILE`: text scorers, then the served chain, then the
// baseline written or compared.
func heldoutMain(ctx context.Context, stdout, stderr io.Writer, file, bundle, dataDir, baselinePath string, writeBaseline bool, scorerNames []string, errs int) int {
	recs, err := LoadHeldout(file)
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	var full []Figures
	for _, n := range scorerNames {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		mk, ok := scorers[n]
		if !ok {
			fmt.Fprintf(stderr, "eval: unknown scorer %q\n", n)
			return 2
		}
		s, err := mk()
		if err != nil {
			fmt.Fprintln(stderr, "eval:", err)
			return 1
		}
		t := 0.5
		if th, ok := s.(score.Threshold); ok {
			t = th.Threshold()
		}
		f := scoreHeldout("scorer "+n+" (text only, threshold "+fmt.Sprintf("%.3f", t)+")", s, t, recs)
		PrintFigures(stdout, f)
		full = append(full, f)
	}
	if bundle == "" {
		return 0
	}
	sc, err := NewServedChain(ctx, bundle, dataDir)
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	defer sc.Close(context.WithoutCancel(ctx))
	if sc.FixtureErr != nil {
		fmt.Fprintf(stdout, "\nWARNING: %v\n  serve would refuse to activate this bundle; its chain is measured without the fixtures.\n", sc.FixtureErr)
	}
	blocked, asked, failed, err := RunServedAsked(ctx, sc, recs, 0)
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	// The bundle as the repository names it (build/bundle), not where this checkout lives.
	name := filepath.Join(filepath.Base(filepath.Dir(bundle)), filepath.Base(bundle))
	f := withAsked(figuresOf("served chain ("+name+", request phase; tool output through the response phase)", recs, blocked, failed), recs, asked)
	PrintFigures(stdout, f)
	if errs > 0 {
		printServedErrors(ctx, stdout, sc, recs, blocked, asked, errs)
	}
	full = append(full, f)
	if baselinePath == "" {
		return 0
	}
	sample := GuardSample(recs)
	sb, sfail, err := RunServed(ctx, sc, sample, 0)
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	sf := figuresOf("served chain, guard sample", sample, sb, sfail)
	if writeBaseline {
		b := Baseline{Note: "written by make eval-baseline on " + file + "; the regression test in make test compares the guard sample", Full: full, Sample: sf}
		out, _ := json.MarshalIndent(b, "", "  ")
		if err := os.WriteFile(baselinePath, append(out, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "eval:", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", baselinePath)
		return 0
	}
	raw, err := os.ReadFile(baselinePath)
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	var want Baseline
	if err := json.Unmarshal(raw, &want); err != nil {
		fmt.Fprintln(stderr, "eval:", baselinePath, err)
		return 1
	}
	if regs := Regressions(want.Sample, sf, GuardSlack); len(regs) > 0 {
		fmt.Fprintf(stdout, "\nagainst %s (guard sample): %d regression(s)\n  %s\n", baselinePath, len(regs), strings.Join(regs, "\n  "))
	} else {
		fmt.Fprintf(stdout, "\nagainst %s (guard sample): no regression\n", baselinePath)
	}
	return 0
}

// printServedErrors lists up to n benign calls the served chain blocked, n attacks it let
// through and n attacks it asked about rather than denied, for tuning on calib.
func printServedErrors(ctx context.Context, w io.Writer, s *ServedChain, recs []HeldoutRecord, blocked, asked []bool, n int) {
	fp, fn, fa := 0, 0, 0
	fmt.Fprintln(w, "\nbenign calls blocked (false positives):")
	for i, r := range recs {
		if r.Label == score.Benign && blocked[i] && fp < n {
			fp++
			fmt.Fprintf(w, "  [%s %s/%s] %.160q  (%s) <- %s\n", r.Kind, r.Server, r.Tool, shown(r), r.Source, s.Why(ctx, r))
		}
	}
	fmt.Fprintln(w, "attacks let through (misses):")
	for i, r := range recs {
		if r.Label != score.Benign && !blocked[i] && fn < n {
			fn++
			fmt.Fprintf(w, "  [%s %s] %.160q  (%s)\n", r.Label, r.Kind, shown(r), r.Source)
		}
	}
	fmt.Fprintln(w, "attacks asked about, not denied:")
	for i, r := range recs {
		if r.Label != score.Benign && blocked[i] && i < len(asked) && asked[i] && fa < n {
			fa++
			fmt.Fprintf(w, "  [%s %s] %.160q  (%s) <- %s\n", r.Label, r.Kind, shown(r), r.Source, s.Why(ctx, r))
		}
	}
}

// shown is the text a listing shows for r: its text, or for a tool output its result.
func shown(r HeldoutRecord) string {
	if r.Text == "" {
		return r.Result
	}
	return r.Text
}
