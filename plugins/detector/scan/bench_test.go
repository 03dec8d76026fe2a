package scan

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/sdk/go/abi"
)

// BenchmarkWasmEvaluate is the detector stage as the chain sees it: one
// evaluate call into the built Wasm, which calls infer on the host.
func BenchmarkWasmEvaluate(b *testing.B) {
	r, _ := detectorRegistry(b, "")
	long := strings.Repeat("The quarterly report shows steady growth across all regions. ", 130) // ~8 KB → 31 windows
	out, _ := json.Marshal(map[string]any{"abi": "1.0", "id": "x", "phase": "response", "method": "tools/call",
		"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": long}}}})
	for _, tc := range []struct{ name, env string }{
		{"no-text", `{"abi":"1.0","id":"x","phase":"request","method":"tools/list"}`},
		{"request-2-args", `{"abi":"1.0","id":"x","phase":"request","method":"tools/call","tool":"search","arguments":{"query":"golang context cancellation","site":"go.dev"}}`},
		{"response-8KB", string(out)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := loadStage(b, []string{hostfn.CapInfer}, r, "{}")
			ctx := context.Background()
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := p.Evaluate(ctx, []byte(tc.env)); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// instant answers every text at once with fixed probabilities (8 labels, like detector-v1),
// through Infer (the JSON host function) and Probs (infer_score): no model runs.
type instant struct{}

var instantLabels = []string{"benign", "command_injection", "path_traversal", "prompt_injection", "sensitive_paths", "sql_injection", "ssrf", "xss"}

var instantRow = []float32{0.9, 0.02, 0.01, 0.03, 0.01, 0.01, 0.01, 0.01}

func (instant) Infer(_ context.Context, req abi.InferRequest) (abi.InferResponse, error) {
	out := abi.InferResponse{Model: req.Model}
	for range req.Texts {
		s := map[string]float64{}
		for j, l := range instantLabels {
			s[l] = float64(instantRow[j])
		}
		out.Results = append(out.Results, abi.InferResult{Label: "benign", Score: float64(instantRow[0]), Scores: s})
	}
	return out, nil
}

func (instant) Probs(_ context.Context, _ string, texts []string) ([]string, []float32, error) {
	out := make([]float32, 0, len(texts)*len(instantRow))
	for range texts {
		out = append(out, instantRow...)
	}
	return instantLabels, out, nil
}

// BenchmarkWasmGuest is BenchmarkWasmEvaluate without the model: the guest, the host function
// call and its encoding, which is what the stage costs beyond inference.
func BenchmarkWasmGuest(b *testing.B) {
	long := strings.Repeat("The quarterly report shows steady growth across all regions. ", 130)
	out, _ := json.Marshal(map[string]any{"abi": "1.0", "id": "x", "phase": "response", "method": "tools/call",
		"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": long}}}})
	for _, tc := range []struct{ name, env string }{
		{"request-2-args", `{"abi":"1.0","id":"x","phase":"request","method":"tools/call","tool":"search","arguments":{"query":"golang context cancellation","site":"go.dev"}}`},
		{"response-8KB", string(out)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := loadStage(b, []string{hostfn.CapInfer}, instant{}, "{}")
			ctx := context.Background()
			for b.Loop() {
				if _, err := p.Evaluate(ctx, []byte(tc.env)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
