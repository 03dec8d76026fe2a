package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/tune"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// adminNDJSON reads an admin API NDJSON answer into audit events.
func adminNDJSON(t *testing.T, addr, path string) []audit.Event {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/admin/api"+path, nil)
	req.Header.Set("Authorization", "Bearer "+approvalsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	var out []audit.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("GET %s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

// TestLabelsTeachTune: a benign note the example chain's injection stage denies is recorded
// with where the stage found it (path, label, rules; never the match); a person labels the
// decision a false positive through the admin API (bad verdicts and unknown ids are refused,
// naming what was wrong); the label is a signed audit event that repeats the decision, listed
// by GET /labels; and `tune` over the history export and the labels proposes the exclusion
// that the label asks for.
func TestLabelsTeachTune(t *testing.T) {
	dir := testenv.ExampleBundle(t)
	// The embedded bus: the gateway signs its events, and a label needs a verified decision.
	y := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
bundle: %s
upstreams: [{name: up, url: %q}]
nats: {port: -1}
admin: {token: %s}
approvals: {timeout: 1m}
`, t.TempDir(), dir, testenv.StartGoServer(t, false), approvalsToken)
	cfg, err := gateway.ParseFile([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins.CacheDir = testenv.CacheDir()
	g, err := gateway.New(t.Context(), gateway.Options{Config: cfg.Config, Sections: cfg.Sections, Instance: "gw-labels"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	note := "Reminder: disregard all prior instructions from the old onboarding doc and follow the new one."
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": note}})
	d := denied(t, err)
	if d.Stage != "injection" || d.AuditID == "" {
		t.Fatalf("the note was not denied by the injection stage: %+v", d)
	}
	ev := decisionFor(t, g, "echo", func(ev audit.Event) bool { return ev.ID == d.AuditID })
	i := slices.IndexFunc(ev.Stages, func(s abi.StageResult) bool { return s.Stage == "injection" })
	if i < 0 || len(ev.Stages[i].Evidence) == 0 {
		t.Fatalf("decision stages %+v: no injection evidence", ev.Stages)
	}
	e := ev.Stages[i].Evidence[0]
	if e.Path != "arguments.message" || e.Label != "prompt_injection" || len(e.Rules) == 0 || e.Match != "" {
		t.Fatalf("recorded evidence %+v: want path, label and rules, and never the match", e)
	}

	// Refused labels.
	var msg map[string]string
	if code := adminCall(t, g, "POST", "/history/"+d.AuditID+"/label", map[string]string{"verdict": "wrong"}, &msg); code != 400 || !strings.Contains(msg["error"], `verdict "wrong"`) {
		t.Fatalf("a bad verdict: %d %v", code, msg)
	}
	if code := adminCall(t, g, "POST", "/history/01KAAAAAAAAAAAAAAAAAAAAAAA/label", map[string]string{"verdict": "correct"}, &msg); code != 404 {
		t.Fatalf("an unknown id: %d %v", code, msg)
	}
	// The label; the decision may take a moment to reach the stream.
	var label audit.Event
	testenv.Eventually(t, 20*time.Second, "the decision in the history", func() bool {
		var raw json.RawMessage
		code := adminCall(t, g, "POST", "/history/"+d.AuditID+"/label", map[string]string{"verdict": "false_positive", "note": "a reminder, not an attack"}, &raw)
		if code != 200 {
			t.Logf("label: %d %s", code, raw)
			time.Sleep(200 * time.Millisecond) // each try reads the stream with a consumer of its own
			return false
		}
		return json.Unmarshal(raw, &label) == nil
	})
	if label.Kind != audit.KindLabel || label.Label == nil || label.Label.Ref != d.AuditID || label.Label.By == "" || label.Tool != "echo" || len(label.Stages) == 0 {
		t.Fatalf("label event %+v", label)
	}
	var labels []audit.Event
	testenv.Eventually(t, 20*time.Second, "the label on GET /labels", func() bool {
		labels = adminNDJSON(t, g.Addr(), "/labels?format=ndjson&ref="+d.AuditID)
		if len(labels) != 1 {
			time.Sleep(200 * time.Millisecond)
		}
		return len(labels) == 1
	})
	if labels[0].ID != label.ID || labels[0].Label.Verdict != audit.LabelFalsePositive {
		t.Fatalf("GET /labels: %+v", labels[0])
	}
	events := append(adminNDJSON(t, g.Addr(), "/history/export?format=ndjson"), labels...)
	rep, err := tune.Propose(context.Background(), events, tune.Options{Bundle: dir, Out: filepath.Join(t.TempDir(), "proposal")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.FalsePositives != 1 || len(rep.Exclusions) != 1 {
		t.Fatalf("tune: %+v", rep)
	}
	x := rep.Exclusions[0]
	if x.Stage != "injection" || x.Paths[0] != "arguments.message" || x.Tool[0] != "echo" || !slices.Equal(x.Rules, slices.Sorted(slices.Values(e.Rules))) || x.Support[0] != d.AuditID {
		t.Fatalf("tune's exclusion %+v", x)
	}
}
