//go:build wasip1

package main

import (
	"errors"
	"time"

	"github.com/added060/palisade/plugins/rules/ruleset"
	palisade "github.com/added060/palisade/sdk/go"
	"github.com/added060/palisade/sdk/go/abi"
)

var (
	engine  *ruleset.Engine
	initErr error
)

func load() {
	src, ok := palisade.Config("rules")
	if !ok {
		src, ok = palisade.Config("config")
	}
	if !ok {
		initErr = errors.New("rules: no config")
		return
	}
	c, err := ruleset.Parse([]byte(src))
	if err != nil {
		initErr = err
		return
	}
	engine, initErr = ruleset.New(c)
}

var _ = palisade.Export(evaluate, describe)

func evaluate() int32 {
	if engine == nil && initErr == nil {
		load()
	}
	if initErr != nil {
		return palisade.Fail(initErr)
	}
	return palisade.OutputRaw(engine.Evaluate(palisade.Input(), time.Now()).Verdict())
}

func describe() int32 {
	return palisade.Describe(abi.Describe{Name: "rules", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest}})
}

func main() {}
