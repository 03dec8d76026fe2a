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
		{"served-request", servedEnvelope},
	} {
		view, err := abi.AppendView(nil, []byte(tc.env))
		if err != nil {
			b.Fatal(err)
		}
		for _, in := range []struct {
			name string
			b    []byte
		}{{"json", []byte(tc.env)}, {"view", view}} {
			b.Run(tc.name+"/input="+in.name, func(b *testing.B) {
				p := loadStage(b, []string{hostfn.CapInfer}, instant{}, "{}")
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.Evaluate(ctx, in.b); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// servedEnvelope is a tools/call request as the gateway sends it (tools/loadgen's echo call):
// the client, the tool's definition and the engine's own paths around two short arguments.
const servedEnvelope = `{"abi":"1.2","id":"01JD2Q9W8Z3X4Y5V6T7S8R9Q0P","phase":"request","time":"2026-11-28T10:00:00Z","transport":"http",` +
	`"method":"tools/call","request_id":7,"server":"echo","session":"5f1c2a","protocol_version":"2025-06-18",` +
	`"client":{"name":"loadgen","version":"1"},"tool":"echo","arguments":{"message":"hello from the load generator","tag":"a1"},` +
	`"params":{"name":"echo","arguments":{"message":"hello from the load generator","tag":"a1"},"_meta":{"progressToken":1}},` +
	`"tool_info":{"name":"echo","description":"Echoes back the input","input_schema":{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"},"tag":{"type":"string"}},"required":["message"]}},` +
	`"engine":{"binary":"/usr/local/bin/palisade","home":"/home/dev","paths":["/home/dev/.palisade","/home/dev/.palisade/nats-auth",` +
	`"/home/dev/bundles/prod","/tmp/.staging-*","/usr/local/bin/palisade","/home/dev/.claude/settings.json",` +
	`"/home/dev/project/.claude/settings.json","/run/user/1000/palisade","/proc/4242","/home/dev/.palisade/plugin-cache",` +
	`"/home/dev/.palisade/keys","/etc/palisade/palisade.yaml","/home/dev/.config/claude/mcp.json","/home/dev/.cursor/mcp.json"],"pids":[4242]}}`
