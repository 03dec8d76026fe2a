package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

func buildRisk(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "risk.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, "../risk")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build risk.wasm: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRiskHandsReviewBandToJudgeInChain runs risk then judge, both built .wasm, in the real
// chain: an injection score of 0.25 on a HIGH tool lands in the review band; with
// review_action sample the risk stage hands the call to the judge, which decides it. Both
// stages take the JSON envelope, then the view with the earlier verdicts (layout 2), and decide
// the same.
func TestRiskHandsReviewBandToJudgeInChain(t *testing.T) {
	for _, view := range []bool{false, true} {
		name := "json"
		if view {
			name = "view"
		}
		t.Run(name, func(t *testing.T) { riskHandsReviewBandToJudge(t, view) })
	}
}

func riskHandsReviewBandToJudge(t *testing.T, view bool) {
	ctx := context.Background()
	j, err := llm.New(llm.Options{Providers: []llm.ProviderConfig{{Kind: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	risk, err := runtime(t).Load(ctx, plugin.Spec{
		Name: "risk", Wasm: buildRisk(t), Timeout: 5 * time.Second,
		Config:        map[string]string{"config": `{"review_action":"sample"}`, "profiles": `{"tools":{"approve_invoice":{"criticality":"HIGH"}}}`},
		HostFunctions: hostfn.Build("risk", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer risk.Close(ctx)
	judge := load(t, []string{"sample"}, j, `{}`)
	ch, err := chain.New(chain.Options{Stages: []*chain.Stage{
		{Name: "risk", Plugin: risk, Request: true, NeedsPrior: true, FailClosed: true, Timeout: 5 * time.Second, View: view, ViewPrior: view},
		{Name: "judge", Plugin: judge, Request: true, NeedsPrior: true, FailClosed: true, Timeout: 5 * time.Second, View: view, ViewPrior: view},
	}})
	if err != nil {
		t.Fatal(err)
	}
	env := &abi.Envelope{ABI: "1.0", ID: "01C", Phase: "request", Method: "tools/call", Server: "erp", Tool: "approve_invoice",
		Arguments: json.RawMessage(`{"invoice":"INV-7","amount":120}`),
		Prior:     []abi.Prior{{Stage: "injection", Action: "none", Score: 0.25}}}
	d, err := ch.Evaluate(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Stages) != 2 || d.Stages[0].Action != "sample" || d.Stages[1].Stage != "judge" {
		t.Fatalf("stages = %+v", d.Stages)
	}
	jv := d.Stages[1]
	if jv.Action != "allow" || jv.Rule != "judge-sample" {
		t.Fatalf("judge = %+v", jv)
	}
	var m struct {
		Trigger, TriggerStage, Provider string
	}
	if jv.Verdict == nil || json.Unmarshal(jv.Verdict.Metadata, &struct {
		Trigger      *string `json:"trigger"`
		TriggerStage *string `json:"trigger_stage"`
		Provider     *string `json:"provider"`
	}{&m.Trigger, &m.TriggerStage, &m.Provider}) != nil || m.Trigger != "sample" || m.TriggerStage != "risk" || m.Provider != "local" {
		t.Fatalf("judge metadata = %+v", m)
	}
	// The chain ranks sample above allow, so the merged action stays "sample": the gateway
	// must let the judge's decision resolve it (see host/token README, "Gateway wiring").
	if d.Action != "sample" {
		t.Logf("chain now resolves sample itself: merged action %q", d.Action)
	}
}
