// Package firstparty runs the first-party module (plugins/firstparty) natively: the same Go
// source as the module's, plugins/firstparty/stage, linked into the host and called by
// host/plugin instead of the module's Wasm when a stage's module is the very module the build
// made from this source (its sha256, recorded by the Makefile's `build` in Digest).
//
// Why: the first-party roles run 7–25× slower as Go compiled to Wasm than as Go compiled for
// the host (docs/DESIGN.md "What a call costs"), and the example bundle runs six of their
// calls per tools/call. Nothing about the decision changes: the dispatch is one package for
// both, the host functions are the stage's own (capabilities included), and a module with any
// other bytes (another build, another version in a later bundle) runs in wazero as before.
package firstparty

import (
	"encoding/json"

	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/plugins/firstparty/stage"
	"github.com/added060/palisade/sdk/go/abi"
)

// Digest is the sha256 (hex) of the first-party module built from this binary's source, set
// at link time by the Makefile's `build` (-ldflags -X). Empty: the binary was built without
// it (`go build`, `go test`) and every stage runs in wazero.
var Digest string

// Natives returns the native modules for plugin.Options: the first-party module when Digest is
// set. A malformed Digest is an error (a broken build, not a reason to run anything natively).
func Natives() ([]plugin.Native, error) {
	if Digest == "" {
		return nil, nil
	}
	d, err := plugin.ParseDigest(Digest)
	if err != nil {
		return nil, err
	}
	return []plugin.Native{Module(d)}, nil
}

// Module is the first-party module's native form for a module whose sha256 is digest; tests
// give the digest of the module they built.
func Module(digest [32]byte) plugin.Native {
	return plugin.Native{Digest: digest, New: func(env plugin.NativeEnv) plugin.NativeInstance {
		return &instance{st: stage.New(stage.Host{
			Config: env.Config,
			InferScore: func(req abi.ScoreRequest) (abi.ScoreResponse, error) {
				return inferScore(env, req)
			},
			SampleRaw: func(req []byte) ([]byte, error) { return env.HostCall("sample", req) },
		})}
	}}
}

// inferScore is the SDK's InferScore over the stage's infer_score host function: the same
// binary request and answer the guest exchanges with the host.
func inferScore(env plugin.NativeEnv, req abi.ScoreRequest) (abi.ScoreResponse, error) {
	raw, err := env.HostCall("infer_score", req.AppendBinary(nil))
	if err != nil {
		return abi.ScoreResponse{}, err
	}
	return abi.ScoreAnswer(raw)
}

type instance struct{ st *stage.Stage }

func (in *instance) Describe() ([]byte, error) {
	d, err := in.st.Describe()
	if err != nil {
		return nil, err
	}
	return json.Marshal(d)
}

func (in *instance) Evaluate(input []byte) ([]byte, error) { return in.st.Evaluate(input) }
