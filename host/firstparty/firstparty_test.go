package firstparty

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// Natives gives the first-party module for the digest the build linked in, nothing without
// one, and refuses a malformed one instead of running anything natively.
func TestNatives(t *testing.T) {
	defer func(d string) { Digest = d }(Digest)
	Digest = ""
	if n, err := Natives(); err != nil || n != nil {
		t.Fatalf("no digest: %v, %v", n, err)
	}
	sum := sha256.Sum256([]byte("module"))
	Digest = hex.EncodeToString(sum[:])
	n, err := Natives()
	if err != nil || len(n) != 1 || n[0].Digest != sum || n[0].New == nil {
		t.Fatalf("digest %s: %v, %v", Digest, n, err)
	}
	Digest = "$(sha256sum build/plugins/firstparty.wasm)" // a Makefile that did not expand it
	if _, err := Natives(); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Fatalf("malformed digest: %v", err)
	}
}

// The request buffer an instance reuses for infer_score: each call's host function reads that
// call's request (a shorter one after a longer is not read with the longer's tail), a request
// the host decoded during an earlier call is intact after the buffer was written again, and the
// buffer is the same from call to call (no allocation for it once grown).
func TestScorerReusesRequest(t *testing.T) {
	var decoded []abi.ScoreRequest
	var bufs [][]byte
	sc := &scorer{hostCall: func(name string, req []byte) ([]byte, error) {
		if name != "infer_score" {
			t.Fatalf("host function %q, want infer_score", name)
		}
		r, err := abi.DecodeScoreRequest(req)
		if err != nil {
			t.Fatalf("decode the request: %v", err)
		}
		decoded, bufs = append(decoded, r), append(bufs, req)
		scores := make([]abi.InferScore, len(r.Texts))
		for i, txt := range r.Texts {
			scores[i] = abi.InferScore{Score: float64(len(txt)) / 100, Label: 0}
		}
		return abi.ScoreResponse{Labels: []string{"INJECTION"}, Scores: scores}.AppendBinary(nil), nil
	}}
	reqs := []abi.ScoreRequest{
		{Model: "detector-v1", Benign: "SAFE", Texts: []string{"a longer first text", "and a second"}},
		{Model: "m", Benign: "SAFE", Texts: []string{"short"}},
		{Model: "detector-v1", Benign: "BENIGN", Texts: []string{"third", "", "x"}},
	}
	for i, req := range reqs {
		resp, err := sc.inferScore(req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(resp.Scores) != len(req.Texts) || resp.Scores[0].Score != float64(len(req.Texts[0]))/100 {
			t.Fatalf("call %d: answer %+v for %d texts", i, resp, len(req.Texts))
		}
	}
	for i, req := range reqs {
		if !reflect.DeepEqual(decoded[i], req) {
			t.Errorf("request %d as the host decoded it, after later calls: %+v, want %+v", i, decoded[i], req)
		}
	}
	if &bufs[1][0] != &bufs[0][0] {
		t.Error("the second request was written to a new buffer, not the instance's")
	}
}

// With the host's typed infer_score, the scorer hands the request over as it is, with the
// running call's context, encodes nothing, and reads an error answer as an error, as
// abi.ScoreAnswer reads the bytes of one.
func TestScorerTyped(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "the call's")
	var got abi.ScoreRequest
	sc := &scorer{
		hostCall: func(string, []byte) ([]byte, error) { t.Fatal("the bytes path ran"); return nil, nil },
		ctx:      func() context.Context { return ctx },
		typed: func(c context.Context, req abi.ScoreRequest) abi.ScoreResponse {
			if c.Value(key{}) != "the call's" {
				t.Error("typed infer_score did not get the call's context")
			}
			got = req
			if req.Model == "broken" {
				return abi.ScoreResponse{Error: "model broken: unknown"}
			}
			return abi.ScoreResponse{Labels: []string{"INJECTION"}, Scores: []abi.InferScore{{Score: 0.25, Label: 0}}}
		},
	}
	req := abi.ScoreRequest{Model: "m", Benign: "SAFE", Texts: []string{"t"}}
	resp, err := sc.inferScore(req)
	if err != nil || !reflect.DeepEqual(got, req) || len(resp.Scores) != 1 || resp.Scores[0].Score != 0.25 || sc.req != nil {
		t.Fatalf("typed: %+v, %v (request %+v, bytes %v)", resp, err, got, sc.req)
	}
	if _, err := sc.inferScore(abi.ScoreRequest{Model: "broken"}); err == nil || err.Error() != "model broken: unknown" {
		t.Fatalf("an error answer: %v, want it as the error", err)
	}
}
