package judging_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/judge/judging"
	"github.com/added060/palisade/sdk/go/abi"
)

// rawSampler is the real host judge (the deterministic local provider) behind the raw sample
// function, recording each request it gets.
func rawSampler(t testing.TB, fail bool) (judging.RawSampler, *[]string) {
	j, err := llm.New(llm.Options{CacheSize: -1, Providers: []llm.ProviderConfig{{Kind: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	return func(req []byte) ([]byte, error) {
		seen = append(seen, string(req))
		if fail {
			return []byte(`{"error":"provider down"}`), nil
		}
		var r abi.SampleRequest
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, err
		}
		resp, err := j.Sample(context.Background(), r)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}, &seen
}

// TestViewVerdictsMatch: on every corpus envelope (the example bundle's fixtures among them) and
// judging_test's, with every set of earlier verdicts (corpus.Priors and judging_test's), under each config, the judge run on the layout-2 view
// sends the same sample request and gives byte for byte the verdict it gives on the JSON
// envelope the host would have sent instead.
func TestViewVerdictsMatch(t *testing.T) {
	envs := corpus.Envelopes(t, 10)
	envs = append(envs,
		[]byte(`{"abi":"1.2","phase":"request","method":"resources/read","uri":"file:///etc/shadow","server":"fs"}`),
		[]byte(`{"abi":"1.2","phase":"request","method":"prompts/get","prompt":"p\u00e9","server":"s"}`),
		[]byte(`{"abi":"1.2","phase":"request","method":"tools/call","tool":"t","arguments":null}`),
		[]byte(`{"abi":"1.2","phase":"response","method":"tools/call","tool":"t","arguments":{"a":1}}`),
		// judging_test's envelopes, whose earlier verdicts are in priors below.
		env("run", `{"cmd":"rm -rf /"}`), env("run", `{"cmd":"ls"}`), env("transfer", `{"amount":5}`), env("transfer", `{}`),
		env("read", `{}`), env("write_file", `{"path":"/etc/hosts"}`), env("t", `{}`))
	priors := append(corpus.Priors(),
		[]abi.Prior{{Stage: "rules", Action: "sample", Rule: "shell", Reason: "shell commands go to the judge", Guidance: "Only read-only commands are fine."}},
		[]abi.Prior{{Stage: "rules", Action: "sample", Reason: "judge shells"}},
		[]abi.Prior{{Stage: "risk", Action: "ask", Score: 0.27}}, []abi.Prior{{Stage: "risk", Action: "allow", Score: 0.1}},
		[]abi.Prior{{Stage: "risk", Action: "deny", Score: 0.35}},
		[]abi.Prior{{Stage: "injection", Action: "none", Score: 0.4, Reason: "path outside project"}})
	for _, tc := range []struct {
		cfg  string
		fail bool
	}{
		{`{}`, false},
		{`{"band":{"min":0.2,"max":0.35},"default_guidance":"Be strict."}`, false},
		{`{"always":true,"max_context_bytes":60,"min_confidence":0.9}`, false},
		{`{"always":true,"on_error":"ask","risk_stage":"detector","band":{"min":0}}`, true},
	} {
		j, err := judging.New([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		sj, seenJ := rawSampler(t, tc.fail)
		sv, seenV := rawSampler(t, tc.fail)
		n := 0
		for i, env := range envs {
			for k, prior := range priors {
				envJSON, view := corpus.WithPrior(t, env, prior)
				if view == nil {
					continue
				}
				v, err := abi.ParseView(view)
				if err != nil {
					t.Fatal(err)
				}
				want := j.EvaluateJSON(envJSON, sj, nil)
				got, err := j.EvaluateViewJSON(&v, sv, nil)
				if err != nil || string(got) != string(want) {
					t.Fatalf("config %s envelope %d prior set %d (%.300s):\nview %s (%v)\njson %s", tc.cfg, i, k, envJSON, got, err, want)
				}
				if len(*seenJ) != len(*seenV) || len(*seenJ) > 0 && (*seenJ)[len(*seenJ)-1] != (*seenV)[len(*seenV)-1] {
					t.Fatalf("config %s envelope %d prior set %d: sample requests differ:\nview %q\njson %q", tc.cfg, i, k, *seenV, *seenJ)
				}
				n++
			}
		}
		if n < 1000 || len(*seenJ) < 100 {
			t.Fatalf("config %s: %d envelopes compared, %d judged", tc.cfg, n, len(*seenJ))
		}
	}
}

// TestViewWithoutPriorFails: a layout-1 view (no prior table) is an error, never read as if no
// stage had asked for the judge.
func TestViewWithoutPriorFails(t *testing.T) {
	j, err := judging.New([]byte(`{"always":true}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := abi.AppendView(nil, env("exec", `{"cmd":"ls"}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := abi.ParseView(b)
	if err != nil {
		t.Fatal(err)
	}
	s, seen := rawSampler(t, false)
	if _, err := j.EvaluateViewJSON(&v, s, nil); !errors.Is(err, judging.ErrNoPrior) || len(*seen) != 0 {
		t.Errorf("EvaluateViewJSON(layout 1) = %v after %d samples, want ErrNoPrior and none", err, len(*seen))
	}
}
