// Package palisade is the Go SDK for Palisade plugins (ABI v1, see sdk/ABI.md): read the envelope,
// read stage config, write a verdict, call the host functions sample, infer and kv. Build plugins
// with
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
// Plugins use the direct calling convention (ABI 1.1): Input returns a buffer the next call
// reuses, so copy what you keep past evaluate. Build with -tags palisade_extism for the Extism
// convention (ABI 1.0, over github.com/extism/go-pdk); the code is the same.
//
// The types live in sdk/go/abi (pure Go) so plugin logic can be tested natively.
package palisade
