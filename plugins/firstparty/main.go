//go:build wasip1

// Command firstparty is the five first-party stages in one module: rules, injection, detector,
// risk and judge, linked over their packages and dispatched on the stage config's `role` key,
// which the shim takes out before the rest of the config reaches the stage's package. Every
// stage of a bundle that names this module runs the same bytes, so the host decodes and compiles
// it, and the guest's Go runtime, once for all of them (host/plugin shares one compiled module
// between stages whose modules are identical); each stage keeps its own instances, config,
// capabilities and memory cap. Each role answers exactly as its single plugin
// (plugins/<role>/main.go) does, describe included.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o firstparty.wasm ./plugins/firstparty
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/plugins/injection/detect"
	"github.com/added060/palisade/plugins/judge/judging"
	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/plugins/rules/ruleset"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

// An instance serves one stage for its life: the role and the stage's state are set on the
// first call (describe or evaluate) and kept.
var (
	role    string
	cfg     []byte // the stage config without `role`
	initErr error
	ready   bool

	rulesEngine *ruleset.Engine
	evaluator   *detect.Evaluator
	scanCfg     scan.Config
	scorer      *riskscore.Scorer
	judge       *judging.Judge
	buf         = make([]byte, 0, 2048) // risk and judge's verdict, reused
)

// roles maps each role to its single plugin's describe.
var roles = map[string]abi.Describe{
	"rules": {Name: "rules", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Input: abi.InputView, View: abi.ViewLayout1},
	"injection": {Name: "injection", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest, abi.PhaseResponse},
		Input: abi.InputView, View: abi.ViewLayout1},
	"detector": {Name: "detector", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest, abi.PhaseResponse},
		Capabilities: []string{"infer"}, Input: abi.InputView, View: abi.ViewLayout1},
	"risk": {Name: "risk", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Input: abi.InputView, View: abi.ViewLayout2},
	"judge": {Name: "judge", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Capabilities: []string{"sample"}, Input: abi.InputView, View: abi.ViewLayout2},
}

// readRole reads the stage config once and splits off `role`.
func readRole() error {
	if role != "" {
		return nil
	}
	raw, _ := palisade.Config("config")
	m := map[string]json.RawMessage{}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return fmt.Errorf("firstparty: config: %w", err)
		}
	}
	var r string
	if err := json.Unmarshal(m["role"], &r); err != nil || roles[r].Name == "" {
		return fmt.Errorf("firstparty: config.role is %s; one of rules, injection, detector, risk, judge", m["role"])
	}
	delete(m, "role")
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	role, cfg = r, b
	return nil
}

// setup builds the role's state from the stage config, as the role's single plugin does.
func setup() error {
	if ready {
		return initErr
	}
	ready = true
	if initErr = readRole(); initErr != nil {
		return initErr
	}
	switch role {
	case "rules":
		src, ok := palisade.Config("rules")
		if !ok {
			src = string(cfg)
		}
		var c ruleset.Config
		if c, initErr = ruleset.Parse([]byte(src)); initErr == nil {
			rulesEngine, initErr = ruleset.New(c)
		}
	case "injection":
		var c detect.Config
		if c, initErr = detect.ParseConfig(cfg); initErr == nil {
			evaluator = detect.NewEvaluator(c)
		}
	case "detector":
		scanCfg, initErr = scan.ParseConfig(cfg)
	case "risk":
		prof, _ := palisade.Config("profiles")
		scorer, initErr = riskscore.New(cfg, []byte(prof))
	case "judge":
		judge, initErr = judging.New(cfg)
	}
	return initErr
}

var _ = palisade.Export(evaluate, describe)

// gcPercent is the guest's GOGC, set once every package's init has run (set before them, so
// that init's own garbage is collected as it goes, an instance started at 8 MiB instead of
// 7.5 and ran at 9). A Wasm linear memory never shrinks, so an instance keeps the peak of its
// heap, and at Go's default of 100 the heap goal is the live heap plus as much again plus the
// module's globals (~3.6 MiB of data and bss here, scanned as roots): every role, which keeps
// 0.7-2.4 MiB live, ran its instances at 10.75-11 MiB where they start at 7.5. At 25 they run
// at 8.75-9 MiB, for one collection every few thousand calls (docs/DESIGN.md "What a call
// costs"). Third-party Go plugins keep the runtime's default: this is the first-party module's
// choice, not the SDK's.
const gcPercent = 25

func init() { debug.SetGCPercent(gcPercent) }

func evaluate() int32 {
	if err := setup(); err != nil {
		return palisade.Fail(err)
	}
	switch role {
	case "injection":
		out, err := evaluator.EvaluateInput(palisade.Input())
		if err != nil {
			return palisade.Fail(err)
		}
		return palisade.OutputRaw(out)
	case "detector":
		v, err := scan.EvaluateScores(palisade.Input(), scanCfg, palisade.InferScore)
		if err != nil {
			return palisade.Fail(err)
		}
		return palisade.Output(v)
	}
	// rules, risk and judge: the view when the host laid one out, else the JSON envelope.
	v, isView, err := palisade.View()
	if err != nil {
		return palisade.Fail(err)
	}
	switch role {
	case "rules":
		if isView {
			if err := ruleset.CheckView(v); err != nil {
				return palisade.Fail(err)
			}
			return palisade.OutputRaw(rulesEngine.EvaluateView(v, time.Now()).Verdict())
		}
		return palisade.OutputRaw(rulesEngine.Evaluate(palisade.Input(), time.Now()).Verdict())
	case "risk":
		if isView {
			if buf, err = scorer.EvaluateViewJSON(&v, buf[:0]); err != nil {
				return palisade.Fail(err)
			}
			return palisade.OutputRaw(buf)
		}
		buf = scorer.EvaluateJSON(palisade.Input(), buf[:0])
		return palisade.OutputRaw(buf)
	case "judge":
		if isView {
			if buf, err = judge.EvaluateViewJSON(&v, palisade.SampleRaw, buf[:0]); err != nil {
				return palisade.Fail(err)
			}
			return palisade.OutputRaw(buf)
		}
		buf = judge.EvaluateJSON(palisade.Input(), palisade.SampleRaw, buf[:0])
		return palisade.OutputRaw(buf)
	}
	return palisade.Fail(errors.New("firstparty: no role"))
}

// describe answers the role's describe; a stage whose config names no role fails to load.
func describe() int32 {
	if err := readRole(); err != nil {
		return palisade.Fail(err)
	}
	return palisade.Describe(roles[role])
}

func main() {}
