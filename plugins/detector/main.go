//go:build wasip1

// Command detector is the Palisade ML detector plugin: the Wasm shim over
// package scan, calling the host's `infer` function (capability "infer").
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o detector.wasm ./plugins/detector
package main

import (
	"errors"

	"github.com/extism/go-pdk"

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

//go:wasmexport evaluate
func evaluate() int32 {
	setup()
	if cfgErr != nil {
		return palisade.Fail(cfgErr)
	}
	v, err := scan.Evaluate(palisade.Input(), cfg, callInfer)
	if err != nil {
		return palisade.Fail(err)
	}
	return palisade.Output(v)
}

// hostInfer is the `infer` host function (sdk/ABI.md). The detector calls it
// with bytes it encodes itself: encoding/json's reflection inside Wasm cost
// more than the model run.
//
//go:wasmimport extism:host/user infer
func hostInfer(uint64) uint64

func callInfer(req []byte) ([]byte, error) {
	mem := pdk.AllocateBytes(req)
	defer mem.Free()
	off := hostInfer(mem.Offset())
	if off == 0 {
		return nil, errors.New("infer host function returned nothing")
	}
	out := pdk.FindMemory(off)
	defer out.Free()
	return out.ReadBytes(), nil
}

//go:wasmexport describe
func describe() int32 {
	return palisade.Describe(abi.Describe{
		Name:         "detector",
		Version:      "0.1.0",
		ABI:          abi.Version,
		Phases:       []string{abi.PhaseRequest, abi.PhaseResponse},
		Capabilities: []string{"infer"},
	})
}

func main() {}
