// Package palisade is the Go SDK for Palisade plugins (see sdk/ABI.md): read the envelope,
// read stage config, write a verdict, call the host functions sample, infer and kv, and
// infer_score (InferScore: a model's score per text, binary, no JSON). Build plugins with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm .
//
// and register evaluate (and describe, or nil) with Export; the SDK owns the Wasm exports, so
// mark none of your functions //go:wasmexport:
//
//	var _ = palisade.Export(evaluate, nil)
//
//	func evaluate() int32 {
//		env, err := palisade.Envelope()
//		if err != nil {
//			return palisade.Fail(err)
//		}
//		if env.Tool == "get-env" {
//			return palisade.Output(abi.Verdict{Action: abi.ActionDeny, Reason: "leaks secrets"})
//		}
//		return palisade.Output(abi.Verdict{Action: abi.ActionNone})
//	}
//
// # Notes
//
// Plugins use the direct calling convention, the only one the SDKs target: Input returns a
// buffer the next call reuses, so copy what you keep past evaluate. Describe states the
// envelope schema version abi.Version unless told otherwise.
//
// The types live in sdk/go/abi (pure Go) so plugin logic can be tested natively.
package palisade
