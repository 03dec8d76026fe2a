package scan_test

import (
	"testing"

	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/sdk/go/abi"
)

// servedScore stands in for palisade.InferScore as the guest runs it: the request encoded into
// a buffer kept across calls, the host's answer copied into fresh memory, then decoded.
type servedScore struct {
	req    []byte
	answer []byte
}

func (s *servedScore) score(r abi.ScoreRequest) (abi.ScoreResponse, error) {
	s.req = r.AppendBinary(s.req[:0])
	scores := make([]abi.InferScore, len(r.Texts))
	for i := range scores {
		scores[i] = abi.InferScore{Score: 0.01, Label: abi.ScoreNoLabel}
	}
	if s.answer == nil {
		s.answer = abi.ScoreResponse{Labels: []string{"benign", "prompt_injection"}, Scores: scores}.AppendBinary(nil)
	}
	return abi.DecodeScoreResponse(append([]byte(nil), s.answer...))
}

// servedDetector is the example bundle's detector config and the views of the served request
// and response (what plugins/detector/main.go gets for tools/loadgen's echo call).
func servedDetector(t testing.TB) (scan.Config, map[string][]byte) {
	c, err := scan.ParseConfig([]byte(`{"model":"detector-v1","threshold":0.9,"kind_thresholds":{"text":0.96},"action":"deny"}`))
	if err != nil {
		t.Fatal(err)
	}
	req, resp, _ := corpus.Served(t)
	return c, map[string][]byte{"request": corpus.View(t, req, nil), "response": corpus.View(t, resp, nil)}
}

func BenchmarkServedView(b *testing.B) {
	c, ins := servedDetector(b)
	s := &servedScore{}
	for _, phase := range []string{"request", "response"} {
		b.Run(phase, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := scan.EvaluateScores(ins[phase], c, s.score); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestServedAllocs pins what the guest allocates per call in steady state on the served
// request and response, the host function's answer included (issue 27).
func TestServedAllocs(t *testing.T) {
	c, ins := servedDetector(t)
	s := &servedScore{}
	for _, phase := range []string{"request", "response"} {
		got := testing.AllocsPerRun(200, func() { _, _ = scan.EvaluateScores(ins[phase], c, s.score) })
		v, err := scan.EvaluateScores(ins[phase], c, s.score)
		t.Logf("%s: allocs per call: %v (%+v %v)", phase, got, v, err)
		if got > maxServedAllocs[phase] {
			t.Errorf("%s: allocs per call = %v, want <= %v", phase, got, maxServedAllocs[phase])
		}
	}
}

var maxServedAllocs = map[string]float64{"request": 8, "response": 10}
