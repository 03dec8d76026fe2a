package riskscore_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/sdk/go/abi"
)

const profiles = `{"tools":{
  "transfer_funds":{"criticality":"HIGH","fallback":"draft_transfer"},
  "delete_*":{"criticality":"low","irreversible":true,"fallback":"archive"},
  "delete_tmp_*":{"criticality":"LOW"},
  "send_report":{"criticality":"MEDIUM","regulatory":true},
  "read_*":{"criticality":"LOW"},
  "sign_doc":{"criticality":"MEDIUM","require_token":true}
}}`

func env(tool string, prior ...abi.Prior) []byte {
	b, _ := json.Marshal(abi.Envelope{ABI: "1.0", Phase: "request", Method: "tools/call", Tool: tool, Arguments: json.RawMessage(`{}`), Prior: prior})
	return b
}

func inj(score float64) abi.Prior { return abi.Prior{Stage: "injection", Action: "none", Score: score} }
func det(score float64) abi.Prior { return abi.Prior{Stage: "detector", Action: "none", Score: score} }

func mustNew(t *testing.T, cfg string) *riskscore.Scorer {
	t.Helper()
	s, err := riskscore.New([]byte(cfg), []byte(profiles))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCompositeRenormalizes(t *testing.T) {
	w := riskscore.DefaultWeights()
	for _, tc := range []struct {
		name    string
		signals map[string]float64
		want    float64
		ok      bool
	}{
		{"none", map[string]float64{}, 0, false},
		{"one signal is itself", map[string]float64{"verifier": 0.4}, 0.4, true},
		// (0.5*0.30 + 0.1*0.25) / 0.55
		{"two", map[string]float64{"grounding": 0.5, "verifier": 0.1}, (0.15 + 0.025) / 0.55, true},
		{"all six", map[string]float64{"grounding": 1, "self_consistency": 1, "verifier": 1, "numeric_instability": 1, "tool_mismatch": 1, "drift": 1}, 1, true},
		{"unweighted ignored", map[string]float64{"mystery": 1, "drift": 0.2}, 0.2, true},
		{"clamped", map[string]float64{"drift": 7, "grounding": -3}, 0.10 / 0.40, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := riskscore.Composite(tc.signals, w)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("Composite = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestPolicyMatrix(t *testing.T) {
	s := mustNew(t, `{}`)
	for _, tc := range []struct {
		name     string
		tool     string
		prior    []abi.Prior
		action   string
		level    string
		token    bool
		fallback string
	}{
		{"high low risk allows with token", "transfer_funds", []abi.Prior{inj(0.1)}, "allow", "low", true, ""},
		{"high medium risk asks", "transfer_funds", []abi.Prior{inj(0.25)}, "ask", "medium", false, ""},
		{"high boundary 0.20 asks", "transfer_funds", []abi.Prior{inj(0.20)}, "ask", "medium", false, ""},
		{"high boundary 0.35 denies with fallback", "transfer_funds", []abi.Prior{inj(0.35)}, "deny", "high", false, "draft_transfer"},
		{"high no signals asks", "transfer_funds", nil, "ask", "none", false, ""},
		{"irreversible escalates LOW to HIGH", "delete_users", []abi.Prior{det(0.9)}, "deny", "high", false, "archive"},
		{"longer glob wins", "delete_tmp_cache", []abi.Prior{det(0.9)}, "allow", "high", false, ""},
		{"regulatory escalates MEDIUM to HIGH", "send_report", []abi.Prior{inj(0.3)}, "ask", "medium", false, ""},
		{"medium below 0.5 allows", "unknown_tool", []abi.Prior{inj(0.49)}, "allow", "high", false, ""},
		{"medium at 0.5 asks", "unknown_tool", []abi.Prior{inj(0.5)}, "ask", "high", false, ""},
		{"medium never denies", "unknown_tool", []abi.Prior{inj(1)}, "ask", "high", false, ""},
		{"medium no signals allows", "unknown_tool", nil, "allow", "none", false, ""},
		{"low always allows", "read_file", []abi.Prior{inj(1), det(1)}, "allow", "high", false, ""},
		{"profile require_token", "sign_doc", []abi.Prior{inj(0.1)}, "allow", "low", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := s.Evaluate(env(tc.tool, tc.prior...))
			if v.Action != tc.action || v.RequireToken != tc.token || v.Fallback != tc.fallback || len(v.Labels) != 1 || v.Labels[0] != tc.level {
				t.Fatalf("verdict = %+v (reason %q), want %s level %s token %v fallback %q", v, v.Reason, tc.action, tc.level, tc.token, tc.fallback)
			}
			var meta map[string]any
			if err := json.Unmarshal(v.Metadata, &meta); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"signals", "weights", "composite", "level", "criticality"} {
				if _, ok := meta[k]; !ok {
					t.Fatalf("metadata lacks %s: %s", k, v.Metadata)
				}
			}
		})
	}
}

func TestJudgeAndStageMapping(t *testing.T) {
	s := mustNew(t, `{}`)
	for _, tc := range []struct {
		name  string
		prior abi.Prior
		sig   string
		want  float64
	}{
		{"judge deny 0.9", abi.Prior{Stage: "judge", Action: "deny", Score: 0.9}, "self_consistency", 0.9},
		{"judge allow 0.8", abi.Prior{Stage: "judge", Action: "allow", Score: 0.8}, "self_consistency", 0.2},
		{"judge ask 0.3", abi.Prior{Stage: "judge", Action: "ask", Score: 0.3}, "self_consistency", 0.5},
		{"injection deny without score", abi.Prior{Stage: "injection", Action: "deny"}, "grounding", 1},
		{"detector score", abi.Prior{Stage: "detector", Action: "none", Score: 0.66}, "verifier", 0.66},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := s.Signals(env("x", tc.prior))
			if got, ok := sig[tc.sig]; !ok || math.Abs(got-tc.want) > 1e-9 || len(sig) != 1 {
				t.Fatalf("signals = %v, want %s=%v", sig, tc.sig, tc.want)
			}
		})
	}
	if sig := s.Signals(env("x", abi.Prior{Stage: "judge", Action: "none"}, abi.Prior{Stage: "rules", Action: "deny"})); len(sig) != 0 {
		t.Fatalf("undecided judge or unmapped stage gave signals %v", sig)
	}
	// Two stages feeding one signal keep the maximum.
	c := mustNew(t, `{"stage_signals":{"injection":"grounding","pii":"grounding"}}`)
	sig := c.Signals(env("x", inj(0.2), abi.Prior{Stage: "pii", Action: "none", Score: 0.7}))
	if sig["grounding"] != 0.7 {
		t.Fatalf("signals = %v", sig)
	}
}

func TestEnvelopeSignalsOnlyWhenTrusted(t *testing.T) {
	e := []byte(`{"abi":"1.0","phase":"request","method":"tools/call","tool":"transfer_funds",
	  "params":{"name":"transfer_funds","_meta":{"palisade/signals":{"drift":0.9,"numeric_instability":0.8,"bogus":"x"}}}}`)
	if v := mustNew(t, `{}`).Evaluate(e); v.Action != "ask" || v.Labels[0] != "none" {
		t.Fatalf("untrusted envelope signals counted: %+v", v)
	}
	v := mustNew(t, `{"envelope_signals":true}`).Evaluate(e)
	if v.Action != "deny" || math.Abs(v.Score-0.85) > 1e-9 {
		t.Fatalf("trusted envelope signals: %+v", v)
	}
}

func TestCustomConfig(t *testing.T) {
	s := mustNew(t, `{"weights":{"grounding":1,"verifier":0},"levels":{"medium":0.5,"high":0.9},
	  "matrix":{"high":{"deny":0.9},"low":{"ask":0.95}},"default_criticality":"low","no_signals":"deny"}`)
	// verifier weight 0: the detector no longer counts.
	if v := s.Evaluate(env("transfer_funds", det(1))); v.Action != "deny" || v.Rule != "risk-high-no-signals" {
		t.Fatalf("verdict = %+v", v)
	}
	if v := s.Evaluate(env("transfer_funds", inj(0.89))); v.Action != "allow" || !v.RequireToken || v.Labels[0] != "medium" {
		t.Fatalf("verdict = %+v", v)
	}
	if v := s.Evaluate(env("anything", inj(0.96))); v.Action != "ask" {
		t.Fatalf("low row ask not applied: %+v", v)
	}
}

func TestReviewBandCanHandToTheJudge(t *testing.T) {
	s := mustNew(t, `{"review_action":"sample"}`)
	v := s.Evaluate(env("transfer_funds", inj(0.25)))
	if v.Action != "sample" || v.Rule != "risk-high-review" || !strings.Contains(v.Guidance, "0.25") {
		t.Fatalf("verdict = %+v", v)
	}
	var dec abi.Verdict
	if err := json.Unmarshal(s.EvaluateJSON(env("transfer_funds", inj(0.25)), nil), &dec); err != nil || dec.Guidance != v.Guidance {
		t.Fatalf("encoded guidance = %q (%v)", dec.Guidance, err)
	}
	if v := s.Evaluate(env("transfer_funds", inj(0.5))); v.Action != "deny" {
		t.Fatalf("deny band changed: %+v", v)
	}
}

func TestNonToolCallsGetNoOpinion(t *testing.T) {
	s := mustNew(t, `{}`)
	for _, e := range []string{
		`{"abi":"1.0","phase":"request","method":"tools/list"}`,
		`{"abi":"1.0","phase":"response","method":"tools/call","tool":"transfer_funds"}`,
	} {
		if v := s.Evaluate([]byte(e)); v.Action != "none" {
			t.Fatalf("%s: %+v", e, v)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct{ name, cfg, prof string }{
		{"unknown field", `{"wieghts":{}}`, ``},
		{"negative weight", `{"weights":{"drift":-1}}`, ``},
		{"levels inverted", `{"levels":{"medium":0.5,"high":0.3}}`, ``},
		{"matrix out of range", `{"matrix":{"high":{"deny":1.5}}}`, ``},
		{"bad criticality", `{"default_criticality":"SEVERE"}`, ``},
		{"bad no_signals", `{"no_signals":"sample"}`, ``},
		{"bad review_action", `{"review_action":"deny"}`, ``},
		{"bad profile criticality", `{}`, `{"tools":{"x":{"criticality":"huge"}}}`},
		{"bad glob", `{}`, `{"tools":{"x[":{}}}`},
		{"profile unknown field", `{}`, `{"tools":{"x":{"critical":"HIGH"}}}`},
		{"not json", `{`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := riskscore.New([]byte(tc.cfg), []byte(tc.prof)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := riskscore.New(nil, nil); err != nil {
		t.Fatalf("empty config rejected: %v", err)
	}
}

func FuzzEvaluate(f *testing.F) {
	s, err := riskscore.New(nil, []byte(profiles))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(env("transfer_funds", inj(0.3), abi.Prior{Stage: "judge", Action: "deny", Score: 2})))
	f.Add(`{"method":"tools/call","prior":[{"stage":"injection","score":"NaN"}]}`)
	f.Add(`{"method":"tools/call","prior":{"stage":"injection"}}`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, e string) {
		v := s.Evaluate([]byte(e))
		if !abi.ValidAction(v.Action) || v.Action == abi.ActionSample {
			t.Fatalf("action %q", v.Action)
		}
		if v.Score < 0 || v.Score > 1 || math.IsNaN(v.Score) {
			t.Fatalf("score %v", v.Score)
		}
		if v.Action != "none" && !json.Valid(v.Metadata) {
			t.Fatalf("metadata %s", v.Metadata)
		}
	})
}

func BenchmarkEvaluate(b *testing.B) {
	s, _ := riskscore.New(nil, []byte(profiles))
	e := env("transfer_funds", inj(0.1), det(0.2), abi.Prior{Stage: "judge", Action: "allow", Score: 0.9})
	b.ReportAllocs()
	for b.Loop() {
		if v := s.Evaluate(e); v.Action != "allow" {
			b.Fatal(v)
		}
	}
}
