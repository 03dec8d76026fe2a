package hostfn_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/sdk/go/abi"
)

// jsonOnly is an Inferer without Probs: infer_score reads its results' scores.
type jsonOnly struct{ resp abi.InferResponse }

func (j jsonOnly) Infer(context.Context, abi.InferRequest) (abi.InferResponse, error) {
	return j.resp, nil
}

// prober answers Probs with fixed rows, or err.
type prober struct {
	jsonOnly
	labels []string
	probs  []float32
	err    error
}

func (p prober) Probs(context.Context, string, []string) ([]string, []float32, error) {
	return p.labels, p.probs, p.err
}

func inferScore(t *testing.T, caps []string, inf hostfn.Inferer, req []byte) abi.ScoreResponse {
	t.Helper()
	for _, f := range hostfn.Build("s", caps, hostfn.Deps{Inferer: inf}) {
		if f.Name == hostfn.FnInferScore {
			resp, err := abi.DecodeScoreResponse(f.Call(context.Background(), req))
			if err != nil {
				t.Fatalf("infer_score answered bytes that are not a response: %v", err)
			}
			return resp
		}
	}
	t.Fatal("no infer_score host function")
	return abi.ScoreResponse{}
}

// typedScore is infer_score's typed form (plugin.HostFunc.Typed) as Build gives it.
func typedScore(t *testing.T, caps []string, inf hostfn.Inferer) hostfn.ScoreFunc {
	t.Helper()
	for _, f := range hostfn.Build("s", caps, hostfn.Deps{Inferer: inf}) {
		if f.Name == hostfn.FnInferScore {
			fn, ok := f.Typed.(hostfn.ScoreFunc)
			if !ok {
				t.Fatalf("infer_score's typed form is %T, want a ScoreFunc", f.Typed)
			}
			return fn
		}
	}
	t.Fatal("no infer_score host function")
	return nil
}

func TestInferScore(t *testing.T) {
	labels := []string{"benign", "xss", "sqli", "ssrf"}
	probs := []float32{
		0.7, 0.1, 0.1, 0.1, // a tie between xss and sqli: sqli comes first in byte order
		0.05, 0.9, 0.025, 0.025,
	}
	two := abi.ScoreRequest{Model: "m", Benign: "benign", Texts: []string{"a", "b"}}.AppendBinary(nil)
	want := []abi.InferScore{{Score: 1 - float64(float32(0.7)), Label: 2}, {Score: 1 - float64(float32(0.05)), Label: 1}}
	scores := func(row []float32) map[string]float64 {
		m := map[string]float64{}
		for j, p := range row {
			m[labels[j]] = float64(p)
		}
		return m
	}
	viaJSON := jsonOnly{abi.InferResponse{Results: []abi.InferResult{{Scores: scores(probs[:4])}, {Scores: scores(probs[4:])}}}}
	for _, tc := range []struct {
		name   string
		caps   []string
		inf    hostfn.Inferer
		req    []byte
		labels []string // nil: an error containing errSub
		scores []abi.InferScore
		errSub string
	}{
		{"probs", []string{hostfn.CapInfer}, prober{labels: labels, probs: probs}, two, labels, want, ""},
		{"infer's scores", []string{hostfn.CapInfer}, viaJSON, two, []string{"benign", "sqli", "ssrf", "xss"}, []abi.InferScore{{Score: want[0].Score, Label: 1}, {Score: want[1].Score, Label: 3}}, ""},
		{"benign not a label", []string{hostfn.CapInfer}, prober{labels: labels[1:], probs: []float32{0.2, 0.3, 0.5}},
			abi.ScoreRequest{Model: "m", Benign: "benign", Texts: []string{"a"}}.AppendBinary(nil), labels[1:], []abi.InferScore{{Score: 1, Label: 2}}, ""},
		{"only benign", []string{hostfn.CapInfer}, prober{labels: labels[:1], probs: []float32{0.25}},
			abi.ScoreRequest{Model: "m", Benign: "benign", Texts: []string{"a"}}.AppendBinary(nil), labels[:1], []abi.InferScore{{Score: 0.75, Label: abi.ScoreNoLabel}}, ""},
		{"not granted", nil, prober{labels: labels, probs: probs}, two, nil, nil, "capability not granted: infer"},
		{"bad request", []string{hostfn.CapInfer}, prober{labels: labels, probs: probs}, []byte{1, 2}, nil, nil, "bad infer_score request"},
		{"no runtime", []string{hostfn.CapInfer}, nil, two, nil, nil, "inference unavailable"},
		{"model error", []string{hostfn.CapInfer}, prober{err: errors.New("infer: unknown model")}, two, nil, nil, "unknown model"},
		{"short output", []string{hostfn.CapInfer}, prober{labels: labels, probs: probs[:4]}, two, nil, nil, "4 probabilities for 2 texts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := inferScore(t, tc.caps, tc.inf, tc.req)
			// The typed form a native stage calls answers what the bytes decode to.
			if req, err := abi.DecodeScoreRequest(tc.req); err == nil {
				typed := typedScore(t, tc.caps, tc.inf)(context.Background(), req)
				if !reflect.DeepEqual(typed, got) {
					t.Errorf("typed infer_score %+v, bytes %+v: want the same answer", typed, got)
				}
			}
			if tc.labels == nil {
				if !strings.Contains(got.Error, tc.errSub) {
					t.Errorf("error %q, want it to contain %q", got.Error, tc.errSub)
				}
				return
			}
			if got.Error != "" || !reflect.DeepEqual(got.Labels, tc.labels) || !reflect.DeepEqual(got.Scores, tc.scores) {
				t.Errorf("got %+v, want labels %v scores %+v", got, tc.labels, tc.scores)
			}
		})
	}
}

func TestReduceNaN(t *testing.T) {
	// A NaN probability never wins and never indexes out of range.
	got := abi.ReduceScores([]string{"a", "b"}, []float32{float32(math.NaN()), float32(math.NaN())}, "benign")
	if len(got) != 1 || got[0].Label != abi.ScoreNoLabel || got[0].Score != 1 {
		t.Errorf("Reduce(NaN) = %+v", got)
	}
}
