package judging_test

import (
	"testing"

	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/judge/judging"
	"github.com/added060/palisade/sdk/go/abi"
)

// servedJudge is the example bundle's judge stage and the served request's layout-2 view (what
// plugins/judge/main.go gets for tools/loadgen's echo call: no rule asked to sample, so no
// sampling).
func servedJudge(t testing.TB) (*judging.Judge, []byte) {
	j, err := judging.New([]byte(`{"on_error":"deny"}`))
	if err != nil {
		t.Fatal(err)
	}
	req, _, prior := corpus.Served(t)
	return j, corpus.View(t, req, prior)
}

func noSample([]byte) ([]byte, error) { panic("sampled") }

// evaluateServed is plugins/judge/main.go's evaluate on a view.
func evaluateServed(j *judging.Judge, in, buf []byte) []byte {
	v, err := abi.ParseView(in)
	if err != nil {
		panic(err)
	}
	if buf, err = j.EvaluateViewJSON(&v, noSample, buf[:0]); err != nil {
		panic(err)
	}
	return buf
}

func BenchmarkServedView(b *testing.B) {
	j, in := servedJudge(b)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = evaluateServed(j, in, buf)
	}
}

// TestServedAllocs pins what the guest allocates per call in steady state on the served
// request (issue 27: a guest's working set leaves the caches between calls).
func TestServedAllocs(t *testing.T) {
	j, in := servedJudge(t)
	buf := evaluateServed(j, in, nil)
	got := testing.AllocsPerRun(200, func() { buf = evaluateServed(j, in, buf) })
	t.Logf("allocs per call: %v (%s)", got, buf)
	if got > maxServedAllocs {
		t.Errorf("allocs per call = %v, want <= %d", got, maxServedAllocs)
	}
}

const maxServedAllocs = 1
