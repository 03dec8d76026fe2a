package policytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

// ErrUsage marks options that cannot run (exit code 2 in the CLI), as do bundle errors.
var ErrUsage = errors.New("policy test: usage")

// Options say what to test.
type Options struct {
	Bundle     string   // bundle folder; required
	Fixtures   []string // fixture files (each an object or an array)
	FixtureDir string   // folder of *.json fixtures; with no Fixtures either, the bundle's own
	// Expect, if set, is the action every fixture without its own expected must reach.
	Expect   string
	CacheDir string       // compiled module cache; "" = memory only (ignored with Build)
	Deps     hostfn.Deps  // host function backends (sample, infer, kv); zero = none (ignored with Build)
	Logger   *slog.Logger // nil = discard
	// Build, if set, verifies and builds the bundle folder without running its fixtures: the
	// CLI passes host/gateway.Core.Build, so policy test runs the same stages, models and
	// signature check as every other mode. nil = a bare runtime with Deps and no models (a
	// stage that needs inference is then unavailable), activated through an ephemeral
	// bundle.Manager with no trust policy.
	Build func(ctx context.Context, dir string) (*bundle.Bundle, error)
	// Serve, if set, also decides each fixture the way a call through the gateway is decided
	// (the CLI passes one on host/proxy's Engine.Judge: unjudged methods pass quietly, ask and
	// sample go by the bundle's fallback, a response fixture is judged after its request) and
	// returns the final action, allow or deny, reported as Result.Served. nil = not reported.
	Serve func(ctx context.Context, ch *chain.Chain, env *abi.Envelope) (string, error)
}

// StageResult is one stage's part in a fixture's decision.
type StageResult struct {
	Stage  string  `json:"stage"`
	Action string  `json:"action"`
	Score  float64 `json:"score"`
	Error  string  `json:"error,omitempty"`
}

// Result is one fixture's outcome.
type Result struct {
	Fixture  string `json:"fixture"`
	Expected string `json:"expected,omitempty"`
	Decision string `json:"decision"`
	// Served is what serve answers the call (allow or deny) when Options.Serve is set: Decision
	// is the chain's own action (ask, sample, none included), which fixtures expect.
	Served string        `json:"served,omitempty"`
	Reason string        `json:"reason,omitempty"`
	Rule   string        `json:"rule,omitempty"`
	Stage  string        `json:"stage,omitempty"`
	Pass   bool          `json:"pass"`
	Stages []StageResult `json:"stages"`
}

// Run builds the bundle and evaluates every fixture. An error (usage, bundle, fixture file) means
// nothing was judged; mismatches are reported in the results (Pass false).
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Bundle == "" {
		return nil, fmt.Errorf("%w: --bundle DIR is required", ErrUsage)
	}
	if len(o.Fixtures) == 0 && o.FixtureDir == "" {
		// No fixtures named: the bundle's own (bundle.yaml fixtures:).
		m, err := bundle.LoadManifest(o.Bundle)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", o.Bundle, err) // what is wrong, not "no fixtures folder"
		}
		if m.Fixtures != "" {
			o.FixtureDir = filepath.Join(o.Bundle, m.Fixtures)
		} else {
			return nil, fmt.Errorf("%w: give --fixture FILE or --fixture-dir DIR (the bundle names no fixtures folder)", ErrUsage)
		}
	}
	if o.Expect != "" && !abi.ValidAction(o.Expect) {
		return nil, fmt.Errorf("%w: --expect %q is not an action (allow, deny, ask, sample, none)", ErrUsage, o.Expect)
	}
	var fixtures []bundle.Fixture
	for _, f := range o.Fixtures {
		fs, err := bundle.ReadFixtureFile(f)
		if err != nil {
			return nil, err
		}
		fixtures = append(fixtures, fs...)
	}
	if o.FixtureDir != "" {
		fs, err := bundle.ReadFixtures(o.FixtureDir)
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("%w: no *.json fixtures in %s", ErrUsage, o.FixtureDir)
		}
		fixtures = append(fixtures, fs...)
	}
	build := o.Build
	if build == nil {
		native, err := firstparty.Natives()
		if err != nil {
			return nil, err
		}
		rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: o.CacheDir, Logger: o.Logger, Native: native})
		if err != nil {
			return nil, err
		}
		defer rt.Close(ctx)
		build = func(ctx context.Context, dir string) (*bundle.Bundle, error) {
			// The one activation path, without a trust policy (no keys: nothing to check with).
			m, err := bundle.NewManager(bundle.ManagerOptions{Active: &chain.Active{}, Ephemeral: true, AllowUnsigned: true, Logger: o.Logger,
				Build: bundle.BuildOptions{Runtime: rt, Deps: o.Deps, Logger: o.Logger, SkipFixtures: true}})
			if err != nil {
				return nil, err
			}
			if _, _, err := m.Activate(ctx, dir, "dir:"+dir); err != nil {
				return nil, err
			}
			return m.Bundle(), nil
		}
	}
	b, err := build(ctx, o.Bundle)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.Bundle, err)
	}
	defer b.Chain.CloseWhenDrained(ctx)
	out := make([]Result, 0, len(fixtures))
	for _, f := range fixtures {
		env, err := f.Envelope("policy-test")
		if err != nil {
			return nil, err
		}
		d, err := b.Chain.Evaluate(ctx, env)
		if err != nil {
			return nil, fmt.Errorf("fixture %s: %w", f.Name, err)
		}
		r := Result{Fixture: f.Name, Expected: f.Expected, Decision: d.Action, Reason: d.Reason, Rule: d.Rule, Stage: d.Stage, Stages: []StageResult{}}
		if o.Serve != nil {
			senv, err := f.Envelope("policy-test")
			if err != nil {
				return nil, err
			}
			if r.Served, err = o.Serve(ctx, b.Chain, senv); err != nil {
				return nil, fmt.Errorf("fixture %s: serve: %w", f.Name, err)
			}
		}
		if r.Expected == "" {
			r.Expected = o.Expect
		}
		r.Pass = r.Expected == "" || r.Expected == r.Decision
		for _, s := range d.Stages {
			r.Stages = append(r.Stages, StageResult{Stage: s.Stage, Action: s.Action, Score: s.Score, Error: s.Error})
		}
		out = append(out, r)
	}
	return out, nil
}

// Failed counts the results that did not reach their expected action.
func Failed(rs []Result) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}

// WriteJSON prints one JSON object per fixture, one per line.
func WriteJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints one line per fixture and a summary.
func WriteText(w io.Writer, rs []Result) error {
	for _, r := range rs {
		mark := "PASS"
		if !r.Pass {
			mark = "FAIL"
		}
		exp := r.Expected
		if exp == "" {
			exp = "-"
		}
		var st, errs []string
		for _, s := range r.Stages {
			if s.Error != "" {
				// A failed stage is shown, never hidden behind its failure mode.
				st = append(st, fmt.Sprintf("%s=%s(error)", s.Stage, s.Action))
				errs = append(errs, s.Stage+": "+s.Error)
				continue
			}
			st = append(st, fmt.Sprintf("%s=%s(%.2f)", s.Stage, s.Action, s.Score))
		}
		line := fmt.Sprintf("%s  %-32s expected %-6s got %-6s", mark, r.Fixture, exp, r.Decision)
		if r.Rule != "" {
			line += " rule " + r.Rule
		}
		if r.Served != "" {
			line += " served " + r.Served
		}
		if len(st) > 0 {
			line += "  [" + strings.Join(st, " ") + "]"
		}
		if !r.Pass && r.Reason != "" {
			line += "\n      reason: " + r.Reason
		}
		for _, e := range errs {
			line += "\n      stage error: " + strings.ReplaceAll(e, "\n", " ")
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d fixtures, %d passed, %d failed\n", len(rs), len(rs)-Failed(rs), Failed(rs))
	return err
}
