//go:build wasip1

package palisade

import (
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
)

// The direct calling convention (sdk/ABI.md): the host asks palisade_alloc for a buffer, writes
// the envelope into it once, calls evaluate(len) and reads the packed (ptr<<32 | len) result once.

var (
	input   []byte // the current call's input; reused across calls
	output  []byte // the current call's output (verdict, describe or error message)
	failed  bool
	verdict []byte // Output's encoding; reused across calls (the host copies it after evaluate)
)

//go:wasmexport palisade_alloc
func palisadeAlloc(n int32) int32 {
	if int(n) > cap(input) {
		input = make([]byte, n)
	}
	input = input[:n]
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

//go:wasmexport evaluate
func evaluateExport(n int32) int64 { return run(handlers.evaluate, "evaluate", n) }

//go:wasmexport describe
func describeExport(n int32) int64 { return run(handlers.describe, "describe", n) }

// calls counts the exports run; yieldEvery is how often run lets the runtime's other
// goroutines run (see run).
var calls uint32

const yieldEvery = 8

func run(h func() int32, name string, n int32) int64 {
	input = input[:n]
	output, failed = nil, false
	if h == nil && name == "describe" {
		// Zero bytes: the host treats the plugin as not exporting describe (sdk/ABI.md).
	} else if h == nil {
		Fail(errors.New(name + ": not registered with palisade.Export"))
	} else if rc := h(); rc != 0 && !failed {
		Fail(errors.New(name + ": exit code " + strconv.Itoa(int(rc))))
	}
	// Let the runtime's other goroutines run before returning to the host: the garbage
	// collector's background mark worker (and the sweeper) run only when the export's goroutine
	// yields, and an evaluate never does. Without the yield a cycle is finished by allocation
	// assists alone, over thousands of calls; everything allocated meanwhile survives it, the
	// next heap goal is twice that, and linear memory (which a Go guest never gives back) keeps
	// the peak. The injection guest on 30,000 inputs from a full-chain load run: live heap
	// 2.4 MiB, heap goal 7.3-8.4 MiB and linear memory 16.8 MiB without it, goal 5.2 MiB and
	// 13.6 MiB with it. With nothing else runnable the yield costs one scheduler round, a few
	// microseconds in a served guest (issue 27: 3.4 % of a full-chain gateway's CPU when every
	// call yielded), so a guest yields on every yieldEvery-th call: a cycle still finishes within
	// a few calls (TestWasmServedMemoryFlat).
	if calls++; calls%yieldEvery == 0 {
		runtime.Gosched()
	}
	packed := int64(uintptr(unsafe.Pointer(unsafe.SliceData(output))))<<32 | int64(len(output))
	if failed {
		packed |= 1 << 31
	}
	return packed
}

// Input returns the raw envelope JSON. It is valid until evaluate returns (the buffer is reused
// by the next call): copy what you keep. Use it with a non-reflective parser on hot paths.
func Input() []byte { return input }

// View returns the input as a view (sdk/ABI.md "The view") when the host laid one out for
// this call: the plugin's describe states Input abi.InputView. ok is false when the input is
// the JSON envelope (a plugin that asks for the view still gets JSON for a message the host
// could not lay out) and when the view is malformed (err says why). The view aliases the input
// buffer: it is valid until evaluate returns.
func View() (v abi.View, ok bool, err error) {
	if !abi.IsView(input) {
		return v, false, nil
	}
	v, err = abi.ParseView(input)
	return v, err == nil, err
}

// Envelope decodes the input as an envelope.
func Envelope() (abi.Envelope, error) {
	var env abi.Envelope
	err := json.Unmarshal(input, &env)
	return env, err
}

// Output writes v as the verdict and returns 0, the value evaluate should return. It encodes
// without reflection (jsonw.AppendVerdict) into a buffer reused across calls.
func Output(v abi.Verdict) int32 {
	b, err := jsonw.AppendVerdict(verdict[:0], v)
	if err != nil {
		return Fail(err)
	}
	verdict = b
	output = b
	return 0
}

func outputJSON(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		return Fail(err)
	}
	output = b
	return 0
}

// OutputRaw writes an already-encoded verdict and returns 0. b must not change until evaluate
// returns.
func OutputRaw(b []byte) int32 {
	output = b
	return 0
}

// Fail records err as the plugin error and returns 1; the host applies the stage's failure mode.
func Fail(err error) int32 {
	output, failed = []byte(err.Error()), true
	return 1
}

//go:wasmimport palisade config_get
func hostConfigGet(key unsafe.Pointer, n uint32) int32

//go:wasmimport palisade result_read
func hostResultRead(dst unsafe.Pointer)

//go:wasmimport palisade log
func hostLog(level int32, msg unsafe.Pointer, n uint32)

//go:wasmimport palisade sample
func hostSample(req unsafe.Pointer, n uint32) int32

//go:wasmimport palisade infer
func hostInfer(req unsafe.Pointer, n uint32) int32

//go:wasmimport palisade kv
func hostKV(req unsafe.Pointer, n uint32) int32

//go:wasmimport palisade infer_score
func hostInferScore(req unsafe.Pointer, n uint32) int32

// result copies the host's pending result of n bytes.
func result(n int32) []byte {
	b := make([]byte, n)
	if n > 0 {
		hostResultRead(unsafe.Pointer(unsafe.SliceData(b)))
	}
	return b
}

// Config returns the stage config value for key: "config" holds the stage config as JSON, and
// each name in the stage's data map holds that file's contents (YAML converted to JSON).
func Config(key string) (string, bool) {
	n := hostConfigGet(unsafe.Pointer(unsafe.StringData(key)), uint32(len(key)))
	if n < 0 {
		return "", false
	}
	return string(result(n)), true
}

// Log writes a message to the host's log at info level.
func Log(msg string) { hostLog(1, unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg))) }

func callRaw(fn func(unsafe.Pointer, uint32) int32, req []byte) ([]byte, error) {
	return result(fn(unsafe.Pointer(unsafe.SliceData(req)), uint32(len(req)))), nil
}

// SampleRaw is Sample without encoding/json: req is the sample request JSON and the result is
// the host's response JSON (which may hold "error"). Use it on hot paths inside Wasm, where
// reflection-based JSON is costly.
func SampleRaw(req []byte) ([]byte, error) { return callRaw(hostSample, req) }

// InferRaw is Infer without encoding/json (see SampleRaw).
func InferRaw(req []byte) ([]byte, error) { return callRaw(hostInfer, req) }

// KVRaw is KV without encoding/json (see SampleRaw).
func KVRaw(req []byte) ([]byte, error) { return callRaw(hostKV, req) }

// scoreReq is InferScore's request encoding; reused across calls.
var scoreReq []byte

// InferScore asks the host to run a model on texts and answers, per text, 1 - p(req.Benign) and
// the most likely other label (capability "infer"; sdk/ABI.md "infer_score"). The request and
// the answer are binary (abi.ScoreRequest, abi.ScoreResponse), so neither side writes or parses
// JSON: use it instead of Infer when a score per text is all a plugin needs. A host error
// (capability, model, runtime) is returned as an error.
func InferScore(req abi.ScoreRequest) (abi.ScoreResponse, error) {
	scoreReq = req.AppendBinary(scoreReq[:0])
	raw, _ := callRaw(hostInferScore, scoreReq)
	return abi.ScoreAnswer(raw)
}
