//go:build wasip1

// Command go is the Go example plugin (shell guard) as a wasip1 module. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o shellguard.wasm ./examples/go
package main

import (
	"github.com/added060/palisade/examples/go/shellguard"
	"github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

var guard *shellguard.Guard

var _ = palisade.Export(evaluate, describe)

func evaluate() int32 {
	if guard == nil {
		cfg, _ := palisade.Config("config")
		g, err := shellguard.New([]byte(cfg))
		if err != nil {
			return palisade.Fail(err)
		}
		guard = g
	}
	return palisade.Output(guard.Evaluate(palisade.Input()))
}

func describe() int32 {
	return palisade.Describe(abi.Describe{
		Name: "shellguard", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
	})
}

func main() {}
