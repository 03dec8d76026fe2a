package riskscore_test

import (
	"errors"
	"testing"

	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/sdk/go/abi"
)

// signalEnvelopes carry params._meta["palisade/signals"] in every shape gjson's ForEach reads
// (an object, an array, a lone number, repeated names, non-numbers, out of range).
var signalEnvelopes = []string{
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"transfer_funds","arguments":{"amount":10},"params":{"name":"transfer_funds","arguments":{"amount":10},"_meta":{"palisade/signals":{"drift":0.7,"tool_mismatch":0.2,"drift":0.9,"mystery":1,"text":"0.9","n":null}}}}`,
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"transfer_funds","params":{"_meta":{"palisade/signals":[0.4,"x",1e400]}}}`,
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"read_x","params":{"_meta":{"palisade/signals":0.8}}}`,
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"sign_doc","params":{"_meta":{"palisade/signals":{"drift":-2,"grounding":3e0}},"_meta":{"palisade/signals":{"drift":1}}}}`,
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"t","params":["_meta"]}`,
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"t","params":{"_meta":["palisade/signals"]}}`,
	`{"abi":"1.2","phase":"request","method":"tools/call","tool":"delete_tmp_1"}`,
	`{"abi":"1.2","phase":"response","method":"tools/call","tool":"transfer_funds"}`,
	`{"abi":"1.2","method":"tools/list"}`,
}

// TestViewVerdictsMatch: on every corpus envelope (the example bundle's fixtures among them) and
// riskscore_test's, with every set of earlier verdicts (corpus.Priors and riskscore_test's), under each config, the verdict from the layout-2 view is
// byte for byte the verdict from the JSON envelope the host would have sent instead.
func TestViewVerdictsMatch(t *testing.T) {
	envs := corpus.Envelopes(t, 10)
	for _, e := range signalEnvelopes {
		envs = append(envs, []byte(e))
	}
	// riskscore_test's envelopes: every profile (HIGH with fallback, irreversible, regulatory,
	// require_token, LOW by glob) and none; their earlier verdicts are in priors below.
	for _, tool := range []string{"transfer_funds", "delete_all", "delete_tmp_x", "send_report", "read_file", "sign_doc", "anything", "x"} {
		envs = append(envs, env(tool))
	}
	priors := append(corpus.Priors(), []abi.Prior{inj(0.05)}, []abi.Prior{inj(0.3), det(0.1)}, []abi.Prior{det(1)},
		[]abi.Prior{{Stage: "judge", Action: "deny", Score: 0.9}}, []abi.Prior{{Stage: "injection", Action: "deny"}},
		[]abi.Prior{inj(0.25), {Stage: "judge", Action: "ask", Score: 0.1}, {Stage: "judge", Action: "sample", Score: 0.9}})
	for _, cfg := range []string{
		`{}`,
		`{"envelope_signals":true}`,
		`{"review_action":"sample","no_signals":"deny","default_criticality":"HIGH","envelope_signals":true}`,
		`{"stage_signals":{"rules":"drift","risk":"tool_mismatch","judge":"self_consistency"},"verdict_stages":["judge","risk"],"weights":{"drift":1}}`,
	} {
		s := mustNew(t, cfg)
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
				want := s.EvaluateJSON(envJSON, nil)
				got, err := s.EvaluateViewJSON(&v, nil)
				if err != nil || string(got) != string(want) {
					t.Fatalf("config %s envelope %d prior set %d (%.300s):\nview %s (%v)\njson %s", cfg, i, k, envJSON, got, err, want)
				}
				gv, err := s.EvaluateView(&v)
				if wv := s.Evaluate(envJSON); err != nil || gv.Action != wv.Action || string(gv.Metadata) != string(wv.Metadata) || gv.Reason != wv.Reason {
					t.Fatalf("config %s envelope %d prior set %d: EvaluateView %+v (%v), Evaluate %+v", cfg, i, k, gv, err, wv)
				}
				n++
			}
		}
		if n < 1000 {
			t.Fatalf("config %s: only %d envelopes compared", cfg, n)
		}
	}
}

// TestViewWithoutPriorFails: a layout-1 view (no prior table) is an error, never scored as if
// no earlier stage had found anything.
func TestViewWithoutPriorFails(t *testing.T) {
	s := mustNew(t, `{}`)
	b, err := abi.AppendView(nil, env("transfer_funds"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := abi.ParseView(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EvaluateViewJSON(&v, nil); !errors.Is(err, riskscore.ErrNoPrior) {
		t.Errorf("EvaluateViewJSON(layout 1) = %v, want ErrNoPrior", err)
	}
	if _, err := s.EvaluateView(&v); !errors.Is(err, riskscore.ErrNoPrior) {
		t.Errorf("EvaluateView(layout 1) = %v, want ErrNoPrior", err)
	}
}

func BenchmarkEvaluateView(b *testing.B) {
	s, _ := riskscore.New(nil, []byte(profiles))
	_, view := corpus.WithPrior(b, env("transfer_funds"), []abi.Prior{inj(0.1), det(0.2), {Stage: "judge", Action: "allow", Score: 0.9}})
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		v, err := abi.ParseView(view)
		if err != nil {
			b.Fatal(err)
		}
		buf, _ = s.EvaluateViewJSON(&v, buf[:0])
	}
}
