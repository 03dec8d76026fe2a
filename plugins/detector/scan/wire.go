package scan

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
	"github.com/tidwall/gjson"
)

// The infer host function's JSON (sdk/ABI.md), encoded and decoded by hand:
// inside Wasm, encoding/json's reflection costs more than the model run. The
// plugin itself now asks infer_score (binary, no JSON at all: ScoreFunc); the
// JSON path stays for Evaluate, its tests and the comparison between the two.

// CallFunc sends an infer request (JSON) to the host and returns its
// response (JSON).
type CallFunc func(req []byte) ([]byte, error)

// EncodeInferRequest writes {"model":..., "texts":[...]}.
func EncodeInferRequest(model string, texts []Text) []byte {
	n := 32 + len(model)
	for _, t := range texts {
		n += len(t.Value) + 8
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"texts":[`...)
	for i, t := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, t.Value)
	}
	return append(b, "]}"...)
}

// appendJSONString appends s as a JSON string (see sdk/go/jsonw).
func appendJSONString(b []byte, s string) []byte { return jsonw.AppendString(b, s) }

// ScoreFunc asks the infer_score host function (sdk/go InferScore): an error
// is a failed call or an error answer.
type ScoreFunc func(req abi.ScoreRequest) (abi.ScoreResponse, error)

// ScoreResults reads infer_score's answer for n texts as DecodeInferResponse
// reads infer's: the same scores, the same labels, the same checks.
func ScoreResults(resp abi.ScoreResponse, n int) ([]Result, error) {
	if len(resp.Scores) != n {
		return nil, fmt.Errorf("%d results for %d texts", len(resp.Scores), n)
	}
	out := make([]Result, n)
	for i, s := range resp.Scores {
		if !(s.Score >= 0 && s.Score <= 1) {
			return nil, fmt.Errorf("infer result %d: score %s out of [0,1]", i, strconv.FormatFloat(s.Score, 'g', -1, 64))
		}
		out[i].Score = s.Score
		switch {
		case s.Label == abi.ScoreNoLabel:
		case int64(s.Label) < int64(len(resp.Labels)):
			out[i].Label = resp.Labels[s.Label]
		default:
			return nil, fmt.Errorf("infer result %d: label %d of %d", i, s.Label, len(resp.Labels))
		}
	}
	return out, nil
}

// Result is one text's answer reduced to what the detector needs.
type Result struct {
	Score float64 // 1 - p(benign)
	Label string  // the most likely non-benign label
}

// DecodeInferResponse reads the host's answer for n texts: an {"error": ...}
// becomes an error; otherwise each result's scores give 1 - p(benign) and
// the most likely non-benign label (a result without scores uses label and
// score).
func DecodeInferResponse(raw []byte, n int, benign string) ([]Result, error) {
	if !gjson.ValidBytes(raw) {
		return nil, errors.New("infer response is not JSON")
	}
	if e := gjson.GetBytes(raw, "error"); e.Exists() && e.String() != "" {
		return nil, errors.New(e.String())
	}
	results := gjson.GetBytes(raw, "results")
	if !results.IsArray() {
		return nil, errors.New("infer response has no results")
	}
	out := make([]Result, 0, n)
	var bad error
	results.ForEach(func(_, r gjson.Result) bool {
		var res Result
		scores := r.Get("scores")
		if scores.IsObject() {
			pBenign, best := 0.0, -1.0
			scores.ForEach(func(k, v gjson.Result) bool {
				label, p := k.String(), v.Float()
				switch {
				case label == benign:
					pBenign = p
				case p > best || (p == best && label < res.Label):
					best, res.Label = p, label
				}
				return true
			})
			res.Score = 1 - pBenign
		} else {
			label, score := r.Get("label").String(), r.Get("score").Float()
			if label == benign {
				res.Score = 1 - score
			} else {
				res.Score, res.Label = score, label
			}
		}
		if res.Score < 0 || res.Score > 1 {
			bad = fmt.Errorf("infer result %d: score %s out of [0,1]", len(out), strconv.FormatFloat(res.Score, 'g', -1, 64))
			return false
		}
		out = append(out, res)
		return true
	})
	if bad != nil {
		return nil, bad
	}
	if len(out) != n {
		return nil, fmt.Errorf("%d results for %d texts", len(out), n)
	}
	return out, nil
}
