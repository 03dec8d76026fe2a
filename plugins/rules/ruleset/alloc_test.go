package ruleset_test

import (
	"encoding/json"
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

// withToolInfo is env with the tool's definition from the server's tools/list answer, as the
// gateway adds it once it has seen one.
func withToolInfo(t testing.TB, env []byte) []byte {
	var e abi.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	e.ToolInfo = &abi.ToolInfo{Name: "echo", Description: "Echoes back the input",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`)}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	req, _, _ := corpus.Served(b)
	now := time.Now()
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"request", in}, {"request-tool-info", corpus.View(b, withToolInfo(b, req), nil)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evaluateServed(e, tc.in, now)
			}
		})
	}
}

// TestServedAllocs pins what the guest allocates per call in steady state on the served
// request (issue 27: a guest's working set leaves the caches between calls).
func TestServedAllocs(t *testing.T) {
	e, in := servedRules(t)
	now := time.Now()
	req, _, _ := corpus.Served(t)
	for name, in := range map[string][]byte{"request": in, "request-tool-info": corpus.View(t, withToolInfo(t, req), nil)} {
		got := testing.AllocsPerRun(200, func() { evaluateServed(e, in, now) })
		t.Logf("%s: allocs per call: %v (%s)", name, got, evaluateServed(e, in, now))
		if got > maxServedAllocs {
			t.Errorf("%s: allocs per call = %v, want <= %d", name, got, maxServedAllocs)
		}
	}
}

const maxServedAllocs = 1
