package riskscore_test

import (
	"testing"

	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/sdk/go/abi"
)

// servedRisk is the example bundle's risk stage and the served request's layout-2 view (what
// plugins/risk/main.go gets for tools/loadgen's echo call).
func servedRisk(t testing.TB) (*riskscore.Scorer, []byte) {
	s, err := riskscore.New([]byte(`{"default_criticality":"MEDIUM"}`), corpus.ExampleData(t, "profiles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	req, _, prior := corpus.Served(t)
	return s, corpus.View(t, req, prior)
}

// evaluateServed is plugins/risk/main.go's evaluate on a view.
func evaluateServed(s *riskscore.Scorer, in, buf []byte) []byte {
	v, err := abi.ParseView(in)
	if err != nil {
		panic(err)
	}
	if buf, err = s.EvaluateViewJSON(&v, buf[:0]); err != nil {
		panic(err)
	}
	return buf
}

func BenchmarkServedView(b *testing.B) {
	s, in := servedRisk(b)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = evaluateServed(s, in, buf)
	}
}

// TestServedAllocs pins what the guest allocates per call in steady state on the served
// request (issue 27: a guest's working set leaves the caches between calls).
func TestServedAllocs(t *testing.T) {
	s, in := servedRisk(t)
	buf := evaluateServed(s, in, nil)
	got := testing.AllocsPerRun(200, func() { buf = evaluateServed(s, in, buf) })
	t.Logf("allocs per call: %v (%s)", got, buf)
	if got > maxServedAllocs {
		t.Errorf("allocs per call = %v, want <= %d", got, maxServedAllocs)
	}
}

const maxServedAllocs = 3
