package ruleset_test

import (
	"testing"
	"time"

	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/rules/ruleset"
	"github.com/added060/palisade/sdk/go/abi"
)

// servedRules is the example bundle's rules engine and the served request's view (what
// plugins/rules/main.go gets for tools/loadgen's echo call).
func servedRules(t testing.TB) (*ruleset.Engine, []byte) {
	c, err := ruleset.Parse(corpus.ExampleData(t, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := ruleset.New(c)
	if err != nil {
		t.Fatal(err)
	}
	req, _, _ := corpus.Served(t)
	return e, corpus.View(t, req, nil)
}

// evaluateServed is plugins/rules/main.go's evaluate on a view.
func evaluateServed(e *ruleset.Engine, in []byte, now time.Time) []byte {
	v, err := abi.ParseView(in)
	if err != nil {
		panic(err)
	}
	if err := ruleset.CheckView(v); err != nil {
		panic(err)
	}
	return e.EvaluateView(v, now).Verdict()
}

func BenchmarkServedView(b *testing.B) {
	e, in := servedRules(b)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		evaluateServed(e, in, now)
	}
}

// TestServedAllocs pins what the guest allocates per call in steady state on the served
// request (issue 27: a guest's working set leaves the caches between calls).
func TestServedAllocs(t *testing.T) {
	e, in := servedRules(t)
	now := time.Now()
	got := testing.AllocsPerRun(200, func() { evaluateServed(e, in, now) })
	t.Logf("allocs per call: %v (%s)", got, evaluateServed(e, in, now))
	if got > maxServedAllocs {
		t.Errorf("allocs per call = %v, want <= %d", got, maxServedAllocs)
	}
}

const maxServedAllocs = 1000
