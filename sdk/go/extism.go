//go:build wasip1 && palisade_extism

package palisade

import (
	"encoding/json"
	"errors"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
	"github.com/extism/go-pdk"
)

// The Extism convention (ABI 1.0), built with -tags palisade_extism: input, output, config and
// host function payloads travel through the Extism kernel (github.com/extism/go-pdk).

//go:wasmexport evaluate
func evaluateExport() int32 { return run(handlers.evaluate, "evaluate") }

//go:wasmexport describe
func describeExport() int32 { return run(handlers.describe, "describe") }

func run(h func() int32, name string) int32 {
	if h == nil && name == "describe" {
		return 0 // no output: the host treats the plugin as not exporting describe (sdk/ABI.md)
	}
	if h == nil {
		return Fail(errors.New(name + ": not registered with palisade.Export"))
	}
	return h()
}

// Input returns the raw envelope JSON. Use it with a non-reflective parser on hot paths.
func Input() []byte { return pdk.Input() }

// Envelope decodes the input as an envelope.
func Envelope() (abi.Envelope, error) {
	var env abi.Envelope
	err := json.Unmarshal(pdk.Input(), &env)
	return env, err
}

// Config returns the Extism config value for key: "config" holds the stage config as JSON, and
// each name in the stage's data map holds that file's contents (YAML converted to JSON).
func Config(key string) (string, bool) { return pdk.GetConfig(key) }

// verdict is Output's encoding, reused across calls (pdk.Output copies it out).
var verdict []byte

// Output writes v as the verdict and returns 0, the value evaluate should return. It encodes
// without reflection (jsonw.AppendVerdict).
func Output(v abi.Verdict) int32 {
	b, err := jsonw.AppendVerdict(verdict[:0], v)
	if err != nil {
		return Fail(err)
	}
	verdict = b
	pdk.Output(b)
	return 0
}

func outputJSON(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		return Fail(err)
	}
	pdk.Output(b)
	return 0
}

// OutputRaw writes an already-encoded verdict and returns 0.
func OutputRaw(b []byte) int32 {
	pdk.Output(b)
	return 0
}

// Fail records err as the plugin error and returns 1; the host applies the stage's failure mode.
func Fail(err error) int32 {
	pdk.SetError(err)
	return 1
}

// Log writes a message to the host's log at info level.
func Log(msg string) { pdk.Log(pdk.LogInfo, msg) }

//go:wasmimport extism:host/user sample
func hostSample(uint64) uint64

//go:wasmimport extism:host/user infer
func hostInfer(uint64) uint64

//go:wasmimport extism:host/user kv
func hostKV(uint64) uint64

func callRaw(fn func(uint64) uint64, req []byte) ([]byte, error) {
	mem := pdk.AllocateBytes(req)
	defer mem.Free()
	off := fn(mem.Offset())
	if off == 0 {
		return nil, errors.New("host function returned nothing")
	}
	out := pdk.FindMemory(off)
	defer out.Free()
	return out.ReadBytes(), nil
}

// SampleRaw is Sample without encoding/json: req is the sample request JSON and the result is
// the host's response JSON (which may hold "error"). Use it on hot paths inside Wasm, where
// reflection-based JSON is costly.
func SampleRaw(req []byte) ([]byte, error) { return callRaw(hostSample, req) }

// InferRaw is Infer without encoding/json (see SampleRaw).
func InferRaw(req []byte) ([]byte, error) { return callRaw(hostInfer, req) }

// KVRaw is KV without encoding/json (see SampleRaw).
func KVRaw(req []byte) ([]byte, error) { return callRaw(hostKV, req) }
