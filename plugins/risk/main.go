//go:build wasip1

// Command risk is the risk-scoring plugin: a //go:wasmexport shim over package riskscore.
package main

import (
	"github.com/added060/palisade/plugins/risk/riskscore"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

var (
	scorer  *riskscore.Scorer
	initErr error
	buf     = make([]byte, 0, 2048) // reused: an instance runs one call at a time
)

// load reads the stage config ("config") and the tool profiles ("profiles" data key) once per
// instance; both are fixed for the life of the instance.
func load() {
	cfg, _ := palisade.Config("config")
	prof, _ := palisade.Config("profiles")
	scorer, initErr = riskscore.New([]byte(cfg), []byte(prof))
}

var _ = palisade.Export(evaluate, describe)

func evaluate() int32 {
	if scorer == nil && initErr == nil {
		load()
	}
	if initErr != nil {
		return palisade.Fail(initErr)
	}
	// The host lays out a view with the earlier verdicts for this stage (describe's input, view
	// layout 2); a message it could not lay out comes as the JSON envelope. A view that does not
	// parse, or has no prior table, fails the call: the stage's failure mode decides.
	v, isView, err := palisade.View()
	if err != nil {
		return palisade.Fail(err)
	}
	if isView {
		if buf, err = scorer.EvaluateViewJSON(&v, buf[:0]); err != nil {
			return palisade.Fail(err)
		}
		return palisade.OutputRaw(buf)
	}
	buf = scorer.EvaluateJSON(palisade.Input(), buf[:0])
	return palisade.OutputRaw(buf)
}

func describe() int32 {
	return palisade.Describe(abi.Describe{Name: "risk", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Input: abi.InputView, View: abi.ViewLayout2})
}

func main() {}
