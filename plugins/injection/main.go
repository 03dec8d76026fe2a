//go:build wasip1

// Command injection is the Palisade injection-detection plugin: the Wasm shim over package
// detect. Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o injection.wasm ./plugins/injection
package main

import (
	"github.com/added060/palisade/plugins/injection/detect"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

// evaluator is built on the first call from the stage config and kept for the instance's
// life: config cannot change under a live instance.
var (
	evaluator *detect.Evaluator
	cfgErr    error
)

func setup() {
	if evaluator != nil || cfgErr != nil {
		return
	}
	raw, _ := palisade.Config("config")
	c, err := detect.ParseConfig([]byte(raw))
	if err != nil {
		cfgErr = err
		return
	}
	evaluator = detect.NewEvaluator(c)
}

var _ = palisade.Export(evaluate, describe)

func evaluate() int32 {
	setup()
	if cfgErr != nil {
		return palisade.Fail(cfgErr)
	}
	// The host lays out a view for this stage (describe's input); a message it could not lay
	// out comes as the JSON envelope, which EvaluateInput reads as well.
	out, err := evaluator.EvaluateInput(palisade.Input())
	if err != nil {
		return palisade.Fail(err)
	}
	return palisade.OutputRaw(out)
}

func describe() int32 {
	return palisade.Describe(abi.Describe{
		Name:    "injection",
		Version: "0.1.0",
		ABI:     abi.Version,
		Phases:  []string{abi.PhaseRequest, abi.PhaseResponse},
		Input:   abi.InputView,
		View:    abi.ViewLayout1,
	})
}

func main() {}
