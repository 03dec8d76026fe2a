package detect_test

import (
	"testing"

	"github.com/added060/palisade/plugins/injection/detect"
	"github.com/added060/palisade/plugins/internal/corpus"
)

// servedInjection is the example bundle's injection stage (response_mode redact) and the views
// of the served request and response (what plugins/injection/main.go gets for tools/loadgen's
// echo call).
func servedInjection(t testing.TB) (*detect.Evaluator, map[string][]byte) {
	c, err := detect.ParseConfig([]byte(`{"response_mode":"redact"}`))
	if err != nil {
		t.Fatal(err)
	}
	req, resp, _ := corpus.Served(t)
	return detect.NewEvaluator(c), map[string][]byte{"request": corpus.View(t, req, nil), "response": corpus.View(t, resp, nil)}
}

func BenchmarkServedView(b *testing.B) {
	e, ins := servedInjection(b)
	for _, phase := range []string{"request", "response"} {
		b.Run(phase, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.EvaluateInput(ins[phase]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestServedAllocs pins what the guest allocates per call in steady state on the served
// request and response (issue 27: a guest's working set leaves the caches between calls).
func TestServedAllocs(t *testing.T) {
	e, ins := servedInjection(t)
	for _, phase := range []string{"request", "response"} {
		got := testing.AllocsPerRun(200, func() { _, _ = e.EvaluateInput(ins[phase]) })
		out, _ := e.EvaluateInput(ins[phase])
		t.Logf("%s: allocs per call: %v (%s)", phase, got, out)
		if got > maxServedAllocs[phase] {
			t.Errorf("%s: allocs per call = %v, want <= %v", phase, got, maxServedAllocs[phase])
		}
	}
}

var maxServedAllocs = map[string]float64{"request": 3, "response": 2}
