package scan

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
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
