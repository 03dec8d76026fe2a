package detect

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/exclude"
)

// TestViewVerdictsMatch runs the stage on every envelope of the corpus twice, on the JSON
// envelope and on its view, under several configs, and requires the same verdict: action,
// rule, labels, score, reason, evidence, metadata, replacement result.
func TestViewVerdictsMatch(t *testing.T) {
	every := 1
	if testing.Short() {
		every = 8
	}
	envs := corpus.Envelopes(t, every)
	margin := 0.0
	configs := map[string]Config{
		"default": {},
		"redact":  {ResponseMode: ModeRedact, ResponseCategories: []string{"prompt_injection", "xss", "command_injection"}},
		"exclude": {Margin: &margin, Exclude: mustExclude(t, `[{"tool":["query"],"paths":["arguments.sql"],"labels":["sql_injection"]},{"paths":["**"],"labels":["xss"],"rules":["xss/*"]}]`)},
	}
	for name, c := range configs {
		t.Run(name, func(t *testing.T) {
			e := NewEvaluator(c)
			fired := 0
			for i, env := range envs {
				want, werr := e.Evaluate(env)
				b, err := abi.AppendView(nil, env)
				if err != nil {
					t.Fatalf("envelope %d: AppendView: %v", i, err)
				}
				out, gerr := e.EvaluateInput(b)
				var got abi.Verdict
				if gerr == nil {
					if err := json.Unmarshal(out, &got); err != nil {
						t.Fatal(err)
					}
					wb, _ := json.Marshal(want)
					want = abi.Verdict{}
					_ = json.Unmarshal(wb, &want)
				}
				if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(got, want) {
					t.Fatalf("envelope %d (%.300s):\nview     %+v (%v)\nenvelope %+v (%v)", i, env, got, gerr, want, werr)
				}
				if want.Action != abi.ActionNone {
					fired++
				}
			}
			t.Logf("%d envelopes, %d verdicts other than none, all the same both ways", len(envs), fired)
		})
	}
}

func mustExclude(t *testing.T, s string) (l exclude.List) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		t.Fatal(err)
	}
	return l
}
