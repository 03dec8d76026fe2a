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
	"context"
	"encoding/json"
	"errors"

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
		sc := &scorer{hostCall: env.HostCall}
		if env.Typed != nil {
			// infer_score in Go types (host/hostfn ScoreFunc): no request encoded, no answer decoded.
			if f, ok := env.Typed(fnInferScore).(func(context.Context, abi.ScoreRequest) abi.ScoreResponse); ok {
				sc.typed, sc.ctx = f, env.Context
			}
		}
		return &instance{st: stage.New(stage.Host{
			Config:     env.Config,
			InferScore: sc.inferScore,
			SampleRaw:  func(req []byte) ([]byte, error) { return env.HostCall("sample", req) },
		})}
	}}
}

// scorer is one instance's infer_score caller. An instance runs one call at a time, so its
// request buffer is reused call to call, as the Go SDK's guest reuses its own (sdk/go
// InferScore): a host function never keeps its request's bytes past the call (a guest's
// memory is reused the same way), and abi.DecodeScoreRequest copies what it keeps.
type scorer struct {
	hostCall func(name string, req []byte) ([]byte, error)
	req      []byte
	// typed is the host function's typed form when the host gives one (plugin.HostFunc.Typed),
	// called with ctx's context: the answer the bytes would decode to, without the bytes.
	typed func(context.Context, abi.ScoreRequest) abi.ScoreResponse
	ctx   func() context.Context
}

// inferScore is the SDK's InferScore over the stage's infer_score host function: the same
// binary request and answer the guest exchanges with the host, or the same request and answer
// in Go types when the host gives the function's typed form. The texts given to the typed form
// may point into the stage's input: the host reads them during the call only (host/infer
// encodes them before a batch forms), as it reads the bytes of an encoded request.
func (s *scorer) inferScore(req abi.ScoreRequest) (abi.ScoreResponse, error) {
	if s.typed != nil {
		resp := s.typed(s.ctx(), req)
		if resp.Error != "" { // as abi.ScoreAnswer reads an error answer
			return resp, errors.New(resp.Error)
		}
		return resp, nil
	}
	s.req = req.AppendBinary(s.req[:0])
	raw, err := s.hostCall(fnInferScore, s.req)
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

// fnInferScore is the infer_score host function's name (sdk/ABI.md; host/hostfn FnInferScore).
const fnInferScore = "infer_score"
