//go:build wasip1

// Command detector is the Palisade ML detector plugin: the Wasm shim over
// package scan, calling the host's binary `infer_score` function (capability "infer").
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o detector.wasm ./plugins/detector
package main

import (
	"github.com/added060/palisade/plugins/detector/scan"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

// cfg is parsed on the first call and kept for the instance's life.
var (
	cfg    scan.Config
	cfgErr error
	loaded bool
)

func setup() {
	if loaded {
		return
	}
	loaded = true
	raw, _ := palisade.Config("config")
	cfg, cfgErr = scan.ParseConfig([]byte(raw))
}

var _ = palisade.Export(evaluate, describe)

func evaluate() int32 {
	setup()
	if cfgErr != nil {
		return palisade.Fail(cfgErr)
	}
	// The host lays out a view for this stage (describe's input); a message it could not lay
	// out comes as the JSON envelope, which EvaluateScores reads as well.
	v, err := scan.EvaluateScores(palisade.Input(), cfg, palisade.InferScore)
	if err != nil {
		return palisade.Fail(err)
	}
	return palisade.Output(v)
}

func describe() int32 {
	return palisade.Describe(abi.Describe{
		Name:         "detector",
		Version:      "0.1.0",
		ABI:          abi.Version,
		Phases:       []string{abi.PhaseRequest, abi.PhaseResponse},
		Capabilities: []string{"infer"},
		Input:        abi.InputView,
		View:         abi.ViewLayout1,
	})
}

func main() {}
