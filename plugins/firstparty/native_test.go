package main_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/plugins/injection/detect"
	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/plugins/rules/ruleset"
	"github.com/added060/palisade/sdk/go/abi"
)

// BenchmarkNativeRole runs what the rules, injection, detector and risk roles run per call natively, on
// BenchmarkServedRole's stream: the two side by side are what the Go guest costs over the same
// code compiled for the host (docs/DESIGN.md "What a call costs", "What the Go guest costs").
func BenchmarkNativeRole(b *testing.B) {
	stream := func(layout int, response bool) *[256][]byte {
		var ins [256][]byte
		for i := range ins {
			ins[i] = servedCall(b, layout, response && i%2 == 1, i/2)
		}
		return &ins
	}
	b.Run("rules", func(b *testing.B) {
		c, err := ruleset.Parse([]byte(roles(b)["rules"].data["rules"]))
		if err != nil {
			b.Fatal(err)
		}
		e, err := ruleset.New(c)
		if err != nil {
			b.Fatal(err)
		}
		ins := stream(abi.ViewLayout1, false)
		b.ResetTimer()
		for i := range b.N {
			v, err := abi.ParseView(ins[i%256])
			if err == nil {
				err = ruleset.CheckView(v)
			}
			if err != nil {
				b.Fatal(err)
			}
			_ = e.EvaluateView(v, time.Now()).Verdict()
		}
	})
	b.Run("injection", func(b *testing.B) {
		c, err := detect.ParseConfig([]byte(roles(b)["injection"].config))
		if err != nil {
			b.Fatal(err)
		}
		ev := detect.NewEvaluator(c)
		ins := stream(abi.ViewLayout1, true)
		b.ResetTimer()
		for i := range b.N {
			if _, err := ev.EvaluateInput(ins[i%256]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("detector", func(b *testing.B) {
		c, err := scan.ParseConfig([]byte(roles(b)["detector"].config))
		if err != nil {
			b.Fatal(err)
		}
		// As fakeModel answers through infer_score: a score from each text's hash.
		labels := []string{"benign", "prompt_injection", "sql_injection"}
		fake := func(req abi.ScoreRequest) (abi.ScoreResponse, error) {
			resp := abi.ScoreResponse{Labels: labels}
			for _, t := range req.Texts {
				s := score(t)
				label := uint32(1)
				if s > 0.8 {
					label = 2
				}
				resp.Scores = append(resp.Scores, abi.InferScore{Score: s, Label: label})
			}
			return resp, nil
		}
		ins := stream(abi.ViewLayout1, true)
		b.ResetTimer()
		for i := range b.N {
			if _, err := scan.EvaluateScores(ins[i%256], c, fake); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("risk", func(b *testing.B) {
		r := roles(b)["risk"]
		s, err := riskscore.New([]byte(r.config), []byte(r.data["profiles"]))
		if err != nil {
			b.Fatal(err)
		}
		ins := stream(abi.ViewLayout2, false)
		var buf []byte
		b.ResetTimer()
		for i := range b.N {
			v, err := abi.ParseView(ins[i%256])
			if err != nil {
				b.Fatal(err)
			}
			if buf, err = s.EvaluateViewJSON(&v, buf[:0]); err != nil || !json.Valid(buf) {
				b.Fatalf("%s (%v)", buf, err)
			}
		}
	})
}
