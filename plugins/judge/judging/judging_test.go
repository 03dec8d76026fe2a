package judging_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/plugins/judge/judging"
	"github.com/added060/palisade/sdk/go/abi"
)

func env(tool, args string, prior ...abi.Prior) []byte {
	b, _ := json.Marshal(abi.Envelope{ABI: "1.0", Phase: "request", Method: "tools/call", Server: "fs", Tool: tool, Arguments: json.RawMessage(args), Prior: prior})
	return b
}

// localSampler is the real host judge with the deterministic local provider.
func localSampler(t testing.TB) (judging.Sampler, *[]abi.SampleRequest) {
	j, err := llm.New(llm.Options{CacheSize: -1, Providers: []llm.ProviderConfig{{Kind: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []abi.SampleRequest
	return func(r abi.SampleRequest) (abi.SampleResponse, error) {
		seen = append(seen, r)
		return j.Sample(context.Background(), r)
	}, &seen
}

func TestTriggersAndVerdicts(t *testing.T) {
	jd, err := judging.New([]byte(`{"band":{"min":0.2,"max":0.35},"default_guidance":"Be strict."}`))
	if err != nil {
		t.Fatal(err)
	}
	sampleRule := abi.Prior{Stage: "rules", Action: "sample", Rule: "shell", Reason: "shell commands go to the judge", Guidance: "Only read-only commands are fine."}
	for _, tc := range []struct {
		name         string
		env          []byte
		action       string
		rule         string
		wantGuidance string // substring; "" = the sampler must not be called
	}{
		{"rule said sample", env("run", `{"cmd":"rm -rf /"}`, sampleRule), "deny", "judge-sample", "Only read-only commands are fine."},
		{"sample reason as guidance", env("run", `{"cmd":"ls"}`, abi.Prior{Stage: "rules", Action: "sample", Reason: "judge shells"}), "allow", "judge-sample", "judge shells"},
		{"risk in band", env("transfer", `{"amount":5}`, abi.Prior{Stage: "risk", Action: "ask", Score: 0.27}), "ask", "judge-risk-band", "scored this call 0.27"},
		{"risk below band", env("transfer", `{}`, abi.Prior{Stage: "risk", Action: "allow", Score: 0.1}), "none", "", ""},
		{"risk at band max", env("transfer", `{}`, abi.Prior{Stage: "risk", Action: "deny", Score: 0.35}), "none", "", ""},
		{"no prior", env("read", `{}`), "none", "", ""},
		{"response phase", []byte(`{"phase":"response","method":"tools/call","prior":[{"stage":"rules","action":"sample"}]}`), "none", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, seen := localSampler(t)
			v := jd.Evaluate(tc.env, s)
			if v.Action != tc.action || v.Rule != tc.rule {
				t.Fatalf("verdict = %+v, want %s %s", v, tc.action, tc.rule)
			}
			if tc.wantGuidance == "" {
				if len(*seen) != 0 {
					t.Fatal("sampler called without a trigger")
				}
				return
			}
			if len(*seen) != 1 || !strings.Contains((*seen)[0].Guidance, tc.wantGuidance) {
				t.Fatalf("sample requests = %+v", *seen)
			}
			var m judging.Meta
			if err := json.Unmarshal(v.Metadata, &m); err != nil || m.Provider != "local" || m.Decision == "" || len(m.Reasons) == 0 {
				t.Fatalf("metadata = %s (%v)", v.Metadata, err)
			}
			if !strings.Contains(v.Reason, "LLM judge (local)") {
				t.Fatalf("reason = %q", v.Reason)
			}
		})
	}
}

func TestRequestCarriesCallAndContext(t *testing.T) {
	jd, _ := judging.New([]byte(`{"always":true}`))
	var got abi.SampleRequest
	jd.Evaluate(env("write_file", `{"path":"/etc/hosts"}`, abi.Prior{Stage: "injection", Action: "none", Score: 0.4, Reason: "path outside project"}),
		func(r abi.SampleRequest) (abi.SampleResponse, error) {
			got = r
			return abi.SampleResponse{Decision: "allow", Confidence: 0.9, Reasons: []string{"ok"}, Provider: "p"}, nil
		})
	if got.Tool != "write_file" || got.Server != "fs" || string(got.Arguments) != `{"path":"/etc/hosts"}` {
		t.Fatalf("request = %+v", got)
	}
	if got.Context != "injection: none score 0.40 (path outside project)" {
		t.Fatalf("context = %q", got.Context)
	}
}

func TestRequestForResourceRead(t *testing.T) {
	jd, _ := judging.New([]byte(`{"always":true}`))
	var got abi.SampleRequest
	jd.Evaluate([]byte(`{"phase":"request","method":"resources/read","uri":"file:///etc/shadow"}`), func(r abi.SampleRequest) (abi.SampleResponse, error) {
		got = r
		return abi.SampleResponse{Decision: "deny", Confidence: 1, Reasons: []string{"x"}}, nil
	})
	if got.Tool != "resources/read" || string(got.Arguments) != `{"uri":"file:///etc/shadow"}` {
		t.Fatalf("request = %+v", got)
	}
}

func TestFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    string
		resp   abi.SampleResponse
		err    error
		action string
		rule   string
	}{
		{"host error", `{"always":true}`, abi.SampleResponse{}, errors.New("capability not granted: sample"), "deny", "judge-error"},
		{"error field", `{"always":true}`, abi.SampleResponse{Error: "llm: no provider available", Provider: "x"}, nil, "deny", "judge-error"},
		{"invalid decision", `{"always":true}`, abi.SampleResponse{Decision: "sample", Confidence: 0.9}, nil, "deny", "judge-error"},
		{"confidence out of range", `{"always":true}`, abi.SampleResponse{Decision: "allow", Confidence: 3}, nil, "deny", "judge-error"},
		{"on_error ask", `{"always":true,"on_error":"ask"}`, abi.SampleResponse{}, errors.New("timeout"), "ask", "judge-error"},
		{"low confidence allow asks", `{"always":true,"min_confidence":0.8}`, abi.SampleResponse{Decision: "allow", Confidence: 0.7, Reasons: []string{"probably fine"}}, nil, "ask", "judge-always"},
		{"low confidence deny stays deny", `{"always":true,"min_confidence":0.8}`, abi.SampleResponse{Decision: "deny", Confidence: 0.3, Reasons: []string{"x"}}, nil, "deny", "judge-always"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jd, err := judging.New([]byte(tc.cfg))
			if err != nil {
				t.Fatal(err)
			}
			v := jd.Evaluate(env("t", `{}`), func(abi.SampleRequest) (abi.SampleResponse, error) { return tc.resp, tc.err })
			if v.Action != tc.action || v.Rule != tc.rule {
				t.Fatalf("verdict = %+v", v)
			}
			if tc.rule == "judge-error" && (!strings.Contains(string(v.Metadata), `"error"`) || v.Labels[1] != "judge_error") {
				t.Fatalf("error not recorded: %+v %s", v, v.Metadata)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []string{`{"on_error":"allow"}`, `{"band":{"min":0.5,"max":0.2}}`, `{"min_confidence":2}`, `{"bnad":{}}`, `[`} {
		if _, err := judging.New([]byte(cfg)); err == nil {
			t.Errorf("New(%s) accepted", cfg)
		}
	}
}

func FuzzEvaluateJSON(f *testing.F) {
	jd, _ := judging.New([]byte(`{"always":true}`))
	f.Add(string(env("run", `{"cmd":"ls"}`)), `{"decision":"allow","confidence":0.9,"reasons":["a\"b"],"provider":"p\u0000"}`)
	f.Add(`{"tool":"\ud800","arguments":{"x":1}}`, `{"error":"boom \n"}`)
	f.Add(`{`, `not json`)
	f.Fuzz(func(t *testing.T, e, resp string) {
		out := jd.EvaluateJSON([]byte(e), func([]byte) ([]byte, error) { return []byte(resp), nil }, nil)
		if !json.Valid(out) {
			t.Fatalf("invalid verdict JSON %s", out)
		}
		var v abi.Verdict
		if err := json.Unmarshal(out, &v); err != nil || !abi.ValidAction(v.Action) || v.Action == "sample" {
			t.Fatalf("verdict %s: %v", out, err)
		}
	})
}

func FuzzEvaluate(f *testing.F) {
	jd, _ := judging.New([]byte(`{"band":{"min":0.2,"max":0.35}}`))
	f.Add(string(env("run", `{"cmd":"ls"}`, abi.Prior{Stage: "rules", Action: "sample"})), "allow", 0.9)
	f.Add(`{"prior":[{"stage":"risk","score":"0.3"}]}`, "deny", 2.0)
	f.Add(`{`, "", 0.0)
	f.Fuzz(func(t *testing.T, e, decision string, conf float64) {
		v := jd.Evaluate([]byte(e), func(abi.SampleRequest) (abi.SampleResponse, error) {
			return abi.SampleResponse{Decision: decision, Confidence: conf, Reasons: []string{"r"}}, nil
		})
		switch v.Action {
		case "none", "allow", "deny", "ask":
		default:
			t.Fatalf("action %q", v.Action)
		}
		if v.Action == "allow" && (decision != "allow" || conf < 0.5) {
			t.Fatalf("allowed with decision %q confidence %v", decision, conf)
		}
	})
}
