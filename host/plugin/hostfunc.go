package plugin

import (
	"context"

	extism "github.com/extism/go-sdk"
)

// HostFunc is one host function granted to a stage (see host/hostfn): it takes the request
// bytes the plugin passed and returns the response bytes to hand back. The runtime exposes it
// under both calling conventions: as a function of module palisade (the direct convention) and
// as an Extism host function in module extism:host/user (Extism compatibility), see sdk/ABI.md.
type HostFunc struct {
	Name string
	Call func(ctx context.Context, req []byte) []byte
	// Typed, when set, is the same function in Go types, for a native instance
	// (NativeEnv.Typed), which calls it without encoding the request or decoding the answer;
	// its type is the host function's own (host/hostfn: infer_score's is a ScoreFunc). It must
	// answer as Call does for the same request. nil = Call only.
	Typed any
}

// extismHostFunctions wraps fs for the Extism path: request and response are kernel blocks.
func extismHostFunctions(fs []HostFunc) []extism.HostFunction {
	out := make([]extism.HostFunction, 0, len(fs))
	for _, f := range fs {
		call := f.Call
		h := extism.NewHostFunctionWithStack(f.Name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			in, err := p.ReadBytes(stack[0])
			if err != nil {
				in = nil
			}
			off, err := p.WriteBytes(call(ctx, in))
			if err != nil {
				off = 0
			}
			stack[0] = off
		}, []extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
		h.SetNamespace("extism:host/user")
		out = append(out, h)
	}
	return out
}
