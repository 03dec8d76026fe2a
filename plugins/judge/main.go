//go:build wasip1

// Command judge is the LLM-judge plugin: a //go:wasmexport shim over package judging that calls
// the host's sample function.
package main

import (
	"encoding/json"

	"github.com/added060/palisade/plugins/judge/judging"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

var (
	judge   *judging.Judge
	initErr error
)

//go:wasmexport evaluate
func evaluate() int32 {
	if judge == nil && initErr == nil {
		cfg, _ := palisade.Config("config")
		judge, initErr = judging.New([]byte(cfg))
	}
	if initErr != nil {
		return palisade.Fail(initErr)
	}
	v := judge.Evaluate(palisade.Input(), palisade.Sample)
	b, err := json.Marshal(v)
	if err != nil {
		return palisade.Fail(err)
	}
	return palisade.OutputRaw(b)
}

//go:wasmexport describe
func describe() int32 {
	return palisade.Describe(abi.Describe{Name: "judge", Version: "0.1.0", ABI: abi.Version,
		Phases: []string{abi.PhaseRequest}, Capabilities: []string{"sample"}})
}

func main() {}
