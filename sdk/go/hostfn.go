//go:build wasip1

package palisade

import (
	"encoding/json"
	"errors"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/extism/go-pdk"
)

//go:wasmimport extism:host/user sample
func hostSample(uint64) uint64

//go:wasmimport extism:host/user infer
func hostInfer(uint64) uint64

//go:wasmimport extism:host/user kv
func hostKV(uint64) uint64

func callHost(fn func(uint64) uint64, req any, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	mem := pdk.AllocateBytes(in)
	defer mem.Free()
	off := fn(mem.Offset())
	if off == 0 {
		return errors.New("host function returned nothing")
	}
	out := pdk.FindMemory(off)
	defer out.Free()
	return json.Unmarshal(out.ReadBytes(), resp)
}

// Sample asks the host's LLM judge (capability "sample").
func Sample(req abi.SampleRequest) (abi.SampleResponse, error) {
	var resp abi.SampleResponse
	if err := callHost(hostSample, req, &resp); err != nil {
		return resp, err
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// SampleRaw is Sample without encoding/json: req is the sample request JSON and the result is
// the host's response JSON (which may hold "error"). Use it on hot paths inside Wasm, where
// reflection-based JSON is costly.
func SampleRaw(req []byte) ([]byte, error) {
	mem := pdk.AllocateBytes(req)
	defer mem.Free()
	off := hostSample(mem.Offset())
	if off == 0 {
		return nil, errors.New("host function returned nothing")
	}
	out := pdk.FindMemory(off)
	defer out.Free()
	return out.ReadBytes(), nil
}

// Infer asks the host to run a model (capability "infer").
func Infer(req abi.InferRequest) (abi.InferResponse, error) {
	var resp abi.InferResponse
	if err := callHost(hostInfer, req, &resp); err != nil {
		return resp, err
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// KV reads or updates the host's small shared state (capability "kv").
func KV(req abi.KVRequest) (abi.KVResponse, error) {
	var resp abi.KVResponse
	if err := callHost(hostKV, req, &resp); err != nil {
		return resp, err
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
