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
	// The host lays out a view for this stage (describe's input); a message it could not lay
	// out comes as the JSON envelope.
	v, isView, err := palisade.View()
	if err != nil {
		return palisade.Fail(err)
	}
	if isView {
		if err := ruleset.CheckView(v); err != nil {
			return palisade.Fail(err)
		}
		return palisade.OutputRaw(engine.EvaluateView(v, time.Now()).Verdict())
	}
	return palisade.OutputRaw(engine.Evaluate(palisade.Input(), time.Now()).Verdict())
}

func describe() int32 {
	return palisade.Describe(abi.Describe{Name: "rules", Version: "0.1.0", ABI: abi.Version, Phases: []string{abi.PhaseRequest},
		Input: abi.InputView, View: abi.ViewLayout1})
}

func main() {}
