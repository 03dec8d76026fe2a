//go:build wasip1

package palisade

import "github.com/added060/palisade/sdk/go/abi"

// Handlers are the plugin's entry points. Export registers them; the SDK owns the Wasm exports
// (evaluate and describe), in the calling convention the plugin is built for (sdk/ABI.md).
var handlers struct {
	evaluate, describe func() int32
}

// Export registers the plugin's evaluate and (optional, may be nil) describe functions, which
// read the envelope with Input or Envelope and answer with Output, OutputRaw, Describe or Fail.
// Call it from a package-level declaration in package main, so it runs before the first call:
//
//	var _ = palisade.Export(evaluate, describe)
//
// The SDK exports evaluate and describe itself, on the direct calling convention: do not mark
// your functions //go:wasmexport.
func Export(evaluate, describe func() int32) struct{} {
	handlers.evaluate, handlers.describe = evaluate, describe
	return struct{}{}
}

// Describe writes d as the describe output and returns 0. An empty d.ABI states abi.Version,
// the envelope schema version the SDK was built with.
func Describe(d abi.Describe) int32 {
	if d.ABI == "" {
		d.ABI = abi.Version
	}
	return outputJSON(d)
}
