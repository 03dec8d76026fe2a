//go:build wasip1

package palisade

import (
	"encoding/json"
	"errors"

	"github.com/added060/palisade/sdk/go/abi"
)

func callHost(raw func([]byte) ([]byte, error), req any, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := raw(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(out, resp)
}

// Sample asks the host's LLM judge (capability "sample").
func Sample(req abi.SampleRequest) (abi.SampleResponse, error) {
	var resp abi.SampleResponse
	if err := callHost(SampleRaw, req, &resp); err != nil {
		return resp, err
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// Infer asks the host to run a model (capability "infer").
func Infer(req abi.InferRequest) (abi.InferResponse, error) {
	var resp abi.InferResponse
	if err := callHost(InferRaw, req, &resp); err != nil {
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
	if err := callHost(KVRaw, req, &resp); err != nil {
		return resp, err
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
