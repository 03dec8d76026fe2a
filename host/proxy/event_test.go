package proxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestEventCarriesTheChainsStageResults runs a real injection stage whose verdict has evidence and
// checks that the audit event carries the chain's own stage results (one type, no conversion)
// with each piece of evidence's label, path and rules but never its match, which can be the
// secret.
func TestEventCarriesTheChainsStageResults(t *testing.T) {
	e := stagesEngine(t, `
  - name: injection
    plugin: injection.wasm
    sha256: INJECTION
    phase: request
    match:
      methods: ["tools/call"]
    timeout: 10s
    memory_pages: 256
    failure: closed
`)
	rec := e.Options().Recorder.(*sink)
	args, _ := json.Marshal(map[string]string{"note": injectedText})
	env := &abi.Envelope{Method: "tools/call", Tool: "send", Server: "s", Transport: "http", Arguments: args}
	o, err := e.Request(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	ds := append([]abi.StageResult(nil), o.Decision.Stages...)
	o.Finish(context.Background())
	if len(ds) != 1 || ds[0].Action != abi.ActionDeny || len(ds[0].Evidence) == 0 {
		t.Fatalf("precondition: the injection stage should deny with evidence: %+v", ds)
	}
	evs := rec.events()
	if len(evs) != 1 {
		t.Fatalf("recorded %d events, want 1", len(evs))
	}
	got := evs[0].Stages
	if len(got) != 1 {
		t.Fatalf("event stages = %+v", got)
	}
	want := ds[0]
	want.Verdict = got[0].Verdict
	want.Evidence = nil
	for _, e := range ds[0].Evidence {
		want.Evidence = append(want.Evidence, abi.Evidence{Label: e.Label, Path: e.Path, Rules: e.Rules})
	}
	if g, w := mustJSON(t, got[0]), mustJSON(t, want); g != w {
		t.Errorf("event stage = %s, want the chain's without matches %s", g, w)
	}
	if len(o.Decision.Stages[0].Evidence) == 0 || o.Decision.Stages[0].Evidence[0].Match == "" {
		t.Error("recording the event cleared the chain's own evidence")
	}
	if b := mustJSON(t, evs[0]); strings.Contains(b, `"match"`) || !strings.Contains(b, `"path":"arguments.note"`) {
		t.Errorf("audit event JSON: %s, want evidence paths and no match", b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
