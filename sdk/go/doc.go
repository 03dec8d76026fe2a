// Package palisade is the Go SDK for Palisade plugins (ABI v1, see sdk/ABI.md). It is a thin layer
// over github.com/extism/go-pdk: read the envelope, read stage config, write a verdict, call the
// host functions sample, infer and kv. Build plugins with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm .
//
// and export evaluate with //go:wasmexport:
//
//	//go:wasmexport evaluate
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
// The types live in sdk/go/abi (pure Go) so plugin logic can be tested natively.
package palisade
