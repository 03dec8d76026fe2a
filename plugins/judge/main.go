//go:build wasip1

// Command judge is the LLM-judge plugin: a //go:wasmexport shim over package judging that calls
// the host's sample function.
package main

import (
	"github.com/added060/palisade/plugins/judge/judging"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

var (
	judge   *judging.Judge
	initErr error
	buf     = make([]byte, 0, 2048) // reused: an instance runs one call at a time
)

var _ = palisade.Export(evaluate, describe)

func evaluate() int32 {
	if judge == nil && initErr == nil {
		cfg, _ := palisade.Config("config")
		judge, initErr = judging.New([]byte(cfg))
	}
	if initErr != nil {
		return palisade.Fail(initErr)
	}
	// The host lays out a view with the earlier verdicts for this stage (describe's input, view
	// layout 2); a message it could not lay out comes as the JSON envelope. A view that does not
	// parse, or has no prior table, fails the call: the stage's failure mode decides. The
	// sample host function answers into fresh memory, so the view stays valid across it.
	v, isView, err := palisade.View()
	if err != nil {
		return palisade.Fail(err)
	}
	if isView {
		if buf, err = judge.EvaluateViewJSON(&v, palisade.SampleRaw, buf[:0]); err != nil {
			return palisade.Fail(err)
		}
		return palisade.OutputRaw(buf)
	}
	buf = judge.EvaluateJSON(palisade.Input(), palisade.SampleRaw, buf[:0])
	return palisade.OutputRaw(buf)
}

func describe() int32 {
	return palisade.Describe(abi.Describe{Name: "judge", Version: "0.1.0", ABI: abi.Version,
		Phases: []string{abi.PhaseRequest}, Capabilities: []string{"sample"}, Input: abi.InputView, View: abi.ViewLayout2})
}

func main() {}
