package hostfn

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

// Capability names a stage may be granted in bundle.yaml.
const (
	CapSample = "sample"
	CapInfer  = "infer"
	CapKV     = "kv"
)

// Sampler consults a language model (host/llm implements it).
type Sampler interface {
	Sample(ctx context.Context, req abi.SampleRequest) (abi.SampleResponse, error)
}

// Inferer runs a model (host/infer implements it).
type Inferer interface {
	Infer(ctx context.Context, req abi.InferRequest) (abi.InferResponse, error)
}

// Prober is an Inferer that can also answer with the model's raw probabilities: its labels and
// one row of len(labels) probabilities per text, row-major (host/infer's Registry). The
// `infer_score` host function uses it when the Inferer has it, and Infer's results otherwise.
type Prober interface {
	Probs(ctx context.Context, model string, texts []string) (labels []string, probs []float32, err error)
}

// Store is the kv backend.
type Store interface {
	Do(ctx context.Context, req abi.KVRequest) (abi.KVResponse, error)
}

// Deps are the backends host functions call; nil ones answer with an error.
type Deps struct {
	Sampler Sampler
	Inferer Inferer
	KV      Store
}

// Known reports whether c is a capability name.
func Known(c string) bool { return c == CapSample || c == CapInfer || c == CapKV }

// FnInferScore is the name of the binary scoring host function, granted by CapInfer.
const FnInferScore = "infer_score"

// Build returns the four host functions for a stage granted caps: sample, infer, kv and
// infer_score (binary; granted by infer). KV keys are prefixed with
// namespace (the stage name) so stages cannot read each other's state. host/plugin exposes them
// under both calling conventions (Extism and direct, sdk/ABI.md).
func Build(namespace string, caps []string, d Deps) []plugin.HostFunc {
	granted := func(c string) bool { return slices.Contains(caps, c) }
	mk := func(name string, call func(ctx context.Context, in []byte) any) plugin.HostFunc {
		return plugin.HostFunc{Name: name, Call: func(ctx context.Context, in []byte) []byte {
			var out any
			if !granted(name) {
				out = map[string]string{"error": "capability not granted: " + name}
			} else if in == nil {
				out = map[string]string{"error": "read request: no request"}
			} else {
				out = call(ctx, in)
			}
			b, _ := json.Marshal(out)
			return b
		}}
	}
	return []plugin.HostFunc{
		{Name: FnInferScore, Call: func(ctx context.Context, in []byte) []byte {
			return inferScore(ctx, granted(CapInfer), in, d.Inferer).AppendBinary(nil)
		}, Typed: ScoreFunc(func(ctx context.Context, req abi.ScoreRequest) abi.ScoreResponse {
			return scoreTexts(ctx, granted(CapInfer), req, d.Inferer)
		})},
		mk(CapSample, func(ctx context.Context, in []byte) any {
			var req abi.SampleRequest
			if err := json.Unmarshal(in, &req); err != nil {
				return abi.SampleResponse{Error: "bad sample request: " + err.Error()}
			}
			if d.Sampler == nil {
				return abi.SampleResponse{Error: "no LLM provider configured"}
			}
			resp, err := d.Sampler.Sample(ctx, req)
			if err != nil {
				return abi.SampleResponse{Error: err.Error()}
			}
			return resp
		}),
		mk(CapInfer, func(ctx context.Context, in []byte) any {
			var req abi.InferRequest
			if err := json.Unmarshal(in, &req); err != nil {
				return abi.InferResponse{Error: "bad infer request: " + err.Error()}
			}
			if d.Inferer == nil {
				return abi.InferResponse{Error: "inference unavailable: no model runtime"}
			}
			resp, err := d.Inferer.Infer(ctx, req)
			if err != nil {
				return abi.InferResponse{Error: err.Error()}
			}
			return resp
		}),
		mk(CapKV, func(ctx context.Context, in []byte) any {
			var req abi.KVRequest
			if err := json.Unmarshal(in, &req); err != nil {
				return abi.KVResponse{Error: "bad kv request: " + err.Error()}
			}
			st := d.KV
			if st == nil {
				return abi.KVResponse{Error: "no kv store"}
			}
			req.Key = namespace + "/" + req.Key
			resp, err := st.Do(ctx, req)
			if err != nil {
				return abi.KVResponse{Error: err.Error()}
			}
			return resp
		}),
	}
}

// inferScore answers an infer_score request (sdk/ABI.md): the model's probabilities reduced, per
// text, to 1 - p(benign) and the most likely other label.
func inferScore(ctx context.Context, granted bool, in []byte, inf Inferer) abi.ScoreResponse {
	switch {
	case !granted:
		return abi.ScoreResponse{Error: "capability not granted: " + CapInfer}
	case in == nil:
		return abi.ScoreResponse{Error: "read request: no request"}
	}
	req, err := abi.DecodeScoreRequest(in)
	if err != nil {
		return abi.ScoreResponse{Error: "bad infer_score request: " + err.Error()}
	}
	return scoreTexts(ctx, true, req, inf)
}

// ScoreFunc is infer_score in Go types: the plugin.HostFunc.Typed of FnInferScore, which a
// native instance calls with the request it would have encoded (the same answer, no bytes).
type ScoreFunc = func(ctx context.Context, req abi.ScoreRequest) abi.ScoreResponse

// scoreTexts is inferScore on a decoded request. The answer's Labels may be the model's own
// list: the caller reads it and never changes it.
func scoreTexts(ctx context.Context, granted bool, req abi.ScoreRequest, inf Inferer) abi.ScoreResponse {
	if !granted {
		return abi.ScoreResponse{Error: "capability not granted: " + CapInfer}
	}
	if inf == nil {
		return abi.ScoreResponse{Error: "inference unavailable: no model runtime"}
	}
	var (
		labels []string
		probs  []float32
		err    error
	)
	if p, ok := inf.(Prober); ok {
		labels, probs, err = p.Probs(ctx, req.Model, req.Texts)
	} else {
		labels, probs, err = probsOf(ctx, inf, req)
	}
	if err != nil {
		return abi.ScoreResponse{Error: err.Error()}
	}
	if len(labels) == 0 || len(probs) != len(labels)*len(req.Texts) {
		return abi.ScoreResponse{Error: fmt.Sprintf("model %q: %d probabilities for %d texts × %d labels", req.Model, len(probs), len(req.Texts), len(labels))}
	}
	return abi.ScoreResponse{Labels: labels, Scores: abi.ReduceScores(labels, probs, req.Benign)}
}

// probsOf asks an Inferer without Probs, and reads the probabilities back from its results'
// scores (labels in byte order; each probability rounded to float32, which is exact for a
// model's own output). A result without scores is an error.
func probsOf(ctx context.Context, inf Inferer, req abi.ScoreRequest) ([]string, []float32, error) {
	resp, err := inf.Infer(ctx, abi.InferRequest{Model: req.Model, Texts: req.Texts})
	if err != nil {
		return nil, nil, err
	}
	if resp.Error != "" {
		return nil, nil, fmt.Errorf("%s", resp.Error)
	}
	if len(resp.Results) != len(req.Texts) {
		return nil, nil, fmt.Errorf("model %q: %d results for %d texts", req.Model, len(resp.Results), len(req.Texts))
	}
	var labels []string
	if len(resp.Results) > 0 {
		for l := range resp.Results[0].Scores {
			labels = append(labels, l)
		}
		sort.Strings(labels)
	}
	probs := make([]float32, 0, len(labels)*len(resp.Results))
	for i, r := range resp.Results {
		if len(r.Scores) != len(labels) {
			return nil, nil, fmt.Errorf("model %q: result %d has %d scores, want %d", req.Model, i, len(r.Scores), len(labels))
		}
		for _, l := range labels {
			p, ok := r.Scores[l]
			if !ok {
				return nil, nil, fmt.Errorf("model %q: result %d has no score for %q", req.Model, i, l)
			}
			probs = append(probs, float32(p))
		}
	}
	return labels, probs, nil
}

// MemKV is an in-process Store with TTLs: enough for one gateway; a fleet uses JetStream KV.
type MemKV struct {
	mu sync.Mutex
	m  map[string]memEntry
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

type memEntry struct {
	value   string
	count   int64
	expires time.Time
}

// NewMemKV returns an empty in-memory store.
func NewMemKV() *MemKV { return &MemKV{m: map[string]memEntry{}} }

// Do implements Store.
func (k *MemKV) Do(_ context.Context, req abi.KVRequest) (abi.KVResponse, error) {
	now := time.Now()
	if k.Now != nil {
		now = k.Now()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[req.Key]
	if ok && !e.expires.IsZero() && now.After(e.expires) {
		delete(k.m, req.Key)
		e, ok = memEntry{}, false
	}
	exp := func() time.Time {
		if req.TTLMS > 0 {
			return now.Add(time.Duration(req.TTLMS) * time.Millisecond)
		}
		return time.Time{}
	}
	switch strings.ToLower(req.Op) {
	case "get":
		return abi.KVResponse{Found: ok, Value: e.value, Count: e.count}, nil
	case "set":
		k.m[req.Key] = memEntry{value: req.Value, expires: exp()}
		return abi.KVResponse{Found: ok, Value: req.Value}, nil
	case "incr":
		d := req.Delta
		if d == 0 {
			d = 1
		}
		if !ok {
			e.expires = exp() // a window starts at its first hit
		}
		e.count += d
		k.m[req.Key] = e
		return abi.KVResponse{Found: ok, Count: e.count}, nil
	case "del":
		delete(k.m, req.Key)
		return abi.KVResponse{Found: ok}, nil
	}
	return abi.KVResponse{}, fmt.Errorf("kv: unknown op %q", req.Op)
}
