//go:build wasip1

// Command firstparty is the five first-party stages in one module: rules, injection, detector,
// risk and judge, linked over their packages and dispatched on the stage config's `role` key,
// which the shim takes out before the rest of the config reaches the stage's package. Every
// stage of a bundle that names this module runs the same bytes, so the host decodes and compiles
// it, and the guest's Go runtime, once for all of them (host/plugin shares one compiled module
// between stages whose modules are identical); each stage keeps its own instances, config,
// capabilities and memory cap. Each role answers exactly as its single plugin
// (plugins/<role>/main.go) does, describe included. The dispatch is package
// plugins/firstparty/stage, which the host also runs natively (host/plugin "Native stages").
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o firstparty.wasm ./plugins/firstparty
package main

import (
	"runtime/debug"

	"github.com/added060/palisade/plugins/firstparty/stage"
	palisade "github.com/added060/palisade/sdk/go"
)

// An instance serves one stage for its life: the role and the stage's state are set on the
// first call (describe or evaluate) and kept.
var st = stage.New(stage.Host{Config: palisade.Config, InferScore: palisade.InferScore, SampleRaw: palisade.SampleRaw})

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
	out, err := st.Evaluate(palisade.Input())
	if err != nil {
		return palisade.Fail(err)
	}
	return palisade.OutputRaw(out)
}

// describe answers the role's describe; a stage whose config names no role fails to load.
func describe() int32 {
	d, err := st.Describe()
	if err != nil {
		return palisade.Fail(err)
	}
	return palisade.Describe(d)
}

func main() {}
