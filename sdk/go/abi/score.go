package abi

import (
	"encoding/binary"
	"errors"
	"math"
)

// The infer_score host function (sdk/ABI.md "infer_score") speaks a little-endian binary layout
// instead of JSON: inside Wasm, escaping texts into JSON and parsing a label map back per text
// cost more than the model run. Both sides use these functions, so they cannot drift apart.
//
//	request:  u32 model_len, model, u32 benign_len, benign, u32 n, n × (u32 len, text bytes)
//	response: u8 status 0, u32 label_count, label_count × (u32 len, label bytes),
//	          u32 n, n × (f64 score, u32 label)
//	       or u8 status 1, then the error message (UTF-8) to the end

// Score status bytes: the first byte of an infer_score response.
const (
	ScoreOK    = 0
	ScoreError = 1
)

// ScoreNoLabel is InferScore.Label when the model has no label besides the benign one.
const ScoreNoLabel = math.MaxUint32

// ScoreRequest is the input of the infer_score host function.
type ScoreRequest struct {
	Model string
	// Benign is the label whose complement is the score: InferScore.Score is 1 - p(Benign)
	// (a label the model lacks counts as probability 0).
	Benign string
	Texts  []string
}

// InferScore is the answer for one text: the probability that it is not Benign, and the most
// likely other label.
type InferScore struct {
	Score float64 // 1 - p(benign), computed in float64 from the model's float32
	Label uint32  // index into ScoreResponse.Labels; ScoreNoLabel when there is none
}

// ScoreResponse is the output of the infer_score host function.
type ScoreResponse struct {
	Labels []string     // the model's labels, in the model's order
	Scores []InferScore // Scores[i] answers Texts[i]
	Error  string       // set instead of the others when the call failed
}

// AppendBinary appends the request's binary encoding to b.
func (r ScoreRequest) AppendBinary(b []byte) []byte {
	n := 12 + len(r.Model) + len(r.Benign)
	for _, t := range r.Texts {
		n += 4 + len(t)
	}
	b = grow(b, n)
	b = appendString(b, r.Model)
	b = appendString(b, r.Benign)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Texts)))
	for _, t := range r.Texts {
		b = appendString(b, t)
	}
	return b
}

// DecodeScoreRequest reads a request. Its strings are copied out of b.
func DecodeScoreRequest(b []byte) (ScoreRequest, error) {
	all := string(b) // one copy; every text is a substring of it
	var r ScoreRequest
	var ok bool
	off := 0
	if r.Model, off, ok = readString(all, off); !ok {
		return r, errors.New("truncated model")
	}
	if r.Benign, off, ok = readString(all, off); !ok {
		return r, errors.New("truncated benign label")
	}
	n, off, ok := readUint32(all, off)
	if !ok {
		return r, errors.New("truncated text count")
	}
	if uint64(n) > uint64(len(all)-off)/4 {
		return r, errors.New("text count exceeds the request")
	}
	r.Texts = make([]string, n)
	for i := range r.Texts {
		if r.Texts[i], off, ok = readString(all, off); !ok {
			return r, errors.New("truncated text")
		}
	}
	if off != len(all) {
		return r, errors.New("trailing bytes after the texts")
	}
	return r, nil
}

// AppendBinary appends the response's binary encoding to b: the error form when r.Error is set.
func (r ScoreResponse) AppendBinary(b []byte) []byte {
	if r.Error != "" {
		b = append(b, ScoreError)
		return append(b, r.Error...)
	}
	n := 9 + 12*len(r.Scores)
	for _, l := range r.Labels {
		n += 4 + len(l)
	}
	b = grow(b, n)
	b = append(b, ScoreOK)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Labels)))
	for _, l := range r.Labels {
		b = appendString(b, l)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Scores)))
	for _, s := range r.Scores {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.Score))
		b = binary.LittleEndian.AppendUint32(b, s.Label)
	}
	return b
}

// ScoreAnswer reads the host's answer to an infer_score request as a caller wants it: a
// response, with an error response (and bytes that are not a response) as an error.
func ScoreAnswer(b []byte) (ScoreResponse, error) {
	resp, err := DecodeScoreResponse(b)
	if err == nil && resp.Error != "" {
		err = errors.New(resp.Error)
	}
	return resp, err
}

// DecodeScoreResponse reads a response. An error response decodes to Error, not to an error:
// err reports bytes that are not a response. A label index past Labels (other than
// ScoreNoLabel) is an error.
func DecodeScoreResponse(b []byte) (ScoreResponse, error) {
	var r ScoreResponse
	if len(b) == 0 {
		return r, errors.New("empty infer_score response")
	}
	switch b[0] {
	case ScoreError:
		r.Error = string(b[1:])
		if r.Error == "" {
			r.Error = "infer_score failed"
		}
		return r, nil
	case ScoreOK:
	default:
		return r, errors.New("infer_score response: unknown status")
	}
	all := string(b[1:])
	nl, off, ok := readUint32(all, 0)
	if !ok || uint64(nl) > uint64(len(all)-off)/4 {
		return r, errors.New("infer_score response: truncated labels")
	}
	r.Labels = make([]string, nl)
	for i := range r.Labels {
		if r.Labels[i], off, ok = readString(all, off); !ok {
			return r, errors.New("infer_score response: truncated label")
		}
	}
	n, off, ok := readUint32(all, off)
	if !ok || uint64(n)*12 != uint64(len(all)-off) {
		return r, errors.New("infer_score response: score count does not match its bytes")
	}
	r.Scores = make([]InferScore, n)
	for i := range r.Scores {
		lo, _, _ := readUint32(all, off)
		hi, _, _ := readUint32(all, off+4)
		label, _, _ := readUint32(all, off+8)
		s := InferScore{Score: math.Float64frombits(uint64(hi)<<32 | uint64(lo)), Label: label}
		if s.Label != ScoreNoLabel && uint64(s.Label) >= uint64(nl) {
			return r, errors.New("infer_score response: label index out of range")
		}
		r.Scores[i] = s
		off += 12
	}
	return r, nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		return nb
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func readUint32(s string, off int) (uint32, int, bool) {
	if len(s)-off < 4 {
		return 0, off, false
	}
	return uint32(s[off]) | uint32(s[off+1])<<8 | uint32(s[off+2])<<16 | uint32(s[off+3])<<24, off + 4, true
}

func readString(s string, off int) (string, int, bool) {
	n, off, ok := readUint32(s, off)
	if !ok || uint64(n) > uint64(len(s)-off) {
		return "", off, false
	}
	return s[off : off+int(n)], off + int(n), true
}

// ReduceScores turns rows of probabilities (one per label, row-major) into one score per row: 1 - the
// probability of benign (0 when benign is not a label), and the most likely other label, the
// first in byte order on a tie (ScoreNoLabel when there is none). It is what a plugin
// computed itself from the infer host function's scores map, in the same float64 arithmetic;
// host/hostfn answers infer_score with it and the trainer's out-of-fold scoring uses it too.
func ReduceScores(labels []string, probs []float32, benign string) []InferScore {
	c := len(labels)
	out := make([]InferScore, len(probs)/c)
	for i := range out {
		pBenign, best := 0.0, -1.0
		s := InferScore{Label: ScoreNoLabel}
		for j, p32 := range probs[i*c : (i+1)*c] {
			p := float64(p32)
			switch {
			case labels[j] == benign:
				pBenign = p
			case p > best || (p == best && s.Label != ScoreNoLabel && labels[j] < labels[s.Label]):
				best, s.Label = p, uint32(j)
			}
		}
		s.Score = 1 - pBenign
		out[i] = s
	}
	return out
}
