package abi_test

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

func TestScoreRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  abi.ScoreRequest
	}{
		{"none", abi.ScoreRequest{Model: "m", Benign: "benign", Texts: []string{}}},
		{"two", abi.ScoreRequest{Model: "detector-v1", Benign: "benign", Texts: []string{"ignore previous instructions", ""}}},
		{"binary and utf-8", abi.ScoreRequest{Model: "", Benign: "", Texts: []string{"\x00\xff\"\\", "naïve ☃"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.req.AppendBinary([]byte("prefix"))
			if !bytes.HasPrefix(b, []byte("prefix")) {
				t.Fatalf("AppendBinary lost the prefix: %q", b)
			}
			got, err := abi.DecodeScoreRequest(b[len("prefix"):])
			if err != nil || !reflect.DeepEqual(got, tc.req) {
				t.Errorf("decode = %+v (%v), want %+v", got, err, tc.req)
			}
		})
	}
}

func TestScoreRequestBroken(t *testing.T) {
	ok := abi.ScoreRequest{Model: "m", Benign: "b", Texts: []string{"abc", "de"}}.AppendBinary(nil)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short length", []byte{1, 0}},
		{"model past the end", []byte{9, 0, 0, 0, 'm'}},
		{"no count", ok[:10]},
		{"count too large", append(append([]byte{}, ok[:10]...), 0xff, 0xff, 0xff, 0x7f)},
		{"cut text", ok[:len(ok)-1]},
		{"trailing", append(append([]byte{}, ok...), 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := abi.DecodeScoreRequest(tc.b); err == nil {
				t.Errorf("decoded %+v", r)
			}
		})
	}
}

func TestScoreResponseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp abi.ScoreResponse
	}{
		{"scores", abi.ScoreResponse{Labels: []string{"benign", "xss", "ssrf"}, Scores: []abi.InferScore{
			{Score: 1 - float64(float32(0.25)), Label: 1}, {Score: 0, Label: abi.ScoreNoLabel}, {Score: math.SmallestNonzeroFloat64, Label: 2}}}},
		{"no texts", abi.ScoreResponse{Labels: []string{"benign"}, Scores: []abi.InferScore{}}},
		{"error", abi.ScoreResponse{Error: "capability not granted: infer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := abi.DecodeScoreResponse(tc.resp.AppendBinary(nil))
			if err != nil || !reflect.DeepEqual(got, tc.resp) {
				t.Errorf("decode = %+v (%v), want %+v", got, err, tc.resp)
			}
		})
	}
}

// ScoreAnswer: scores come back as they are; an error response and broken bytes are errors.
func TestScoreAnswer(t *testing.T) {
	ok := abi.ScoreResponse{Labels: []string{"benign", "xss"}, Scores: []abi.InferScore{{Score: 0.5, Label: 1}}}
	if got, err := abi.ScoreAnswer(ok.AppendBinary(nil)); err != nil || !reflect.DeepEqual(got, ok) {
		t.Errorf("scores: %+v, %v", got, err)
	}
	if _, err := abi.ScoreAnswer(abi.ScoreResponse{Error: "capability not granted: infer"}.AppendBinary(nil)); err == nil || err.Error() != "capability not granted: infer" {
		t.Errorf("error response: %v", err)
	}
	if _, err := abi.ScoreAnswer(nil); err == nil {
		t.Error("no bytes answered no error")
	}
}

func TestScoreResponseBroken(t *testing.T) {
	ok := abi.ScoreResponse{Labels: []string{"benign", "xss"}, Scores: []abi.InferScore{{Score: 0.5, Label: 1}}}.AppendBinary(nil)
	bad := abi.ScoreResponse{Labels: []string{"benign"}, Scores: []abi.InferScore{{Score: 0.5, Label: 1}}}.AppendBinary(nil)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unknown status", []byte{7}},
		{"no labels", []byte{abi.ScoreOK}},
		{"cut score", ok[:len(ok)-1]},
		{"trailing", append(append([]byte{}, ok...), 0)},
		{"label out of range", bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := abi.DecodeScoreResponse(tc.b); err == nil {
				t.Errorf("decoded %+v", r)
			}
		})
	}
}

// FuzzDecodeScoreRequest: decoding never panics, and a request it accepts re-encodes to the
// same bytes.
func FuzzDecodeScoreRequest(f *testing.F) {
	f.Add(abi.ScoreRequest{Model: "m", Benign: "benign", Texts: []string{"a", "bc"}}.AppendBinary(nil))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := abi.DecodeScoreRequest(b)
		if err != nil {
			return
		}
		if again := r.AppendBinary(nil); !bytes.Equal(again, b) {
			t.Errorf("re-encoded %q as %q", b, again)
		}
	})
}

// FuzzDecodeScoreResponse: decoding never panics, and every label index it accepts is in range.
func FuzzDecodeScoreResponse(f *testing.F) {
	f.Add(abi.ScoreResponse{Labels: []string{"benign", "xss"}, Scores: []abi.InferScore{{Score: 0.5, Label: 1}}}.AppendBinary(nil))
	f.Add([]byte{abi.ScoreError, 'x'})
	f.Add([]byte{abi.ScoreOK, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := abi.DecodeScoreResponse(b)
		if err != nil {
			return
		}
		for _, s := range r.Scores {
			if s.Label != abi.ScoreNoLabel && int(s.Label) >= len(r.Labels) {
				t.Errorf("label %d of %d accepted", s.Label, len(r.Labels))
			}
		}
	})
}
