package audit_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile("../../sdk/schema/audit-event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://palisade.dev/schema/audit/1/audit-event.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, v any) error {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

func TestEventMatchesSchema(t *testing.T) {
	s := compileSchema(t)
	full := audit.Event{
		ID: audit.NewID(), Time: time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC), Kind: audit.KindDecision,
		Gateway: "gw-1", Bundle: &audit.Bundle{Name: "base", Version: "1.0.0", Digest: "sha256:00ff"},
		Transport: "http", Method: "tools/call", Server: "fs", Session: "s1", Agent: "claude-code", Tool: "read_file",
		Principal: &abi.Principal{Issuer: "https://login.example.com", Subject: "alice", ClientID: "claude-code",
			Scopes: []string{"mcp:tools"}, Claims: map[string]any{"groups": []any{"sre"}}},
		RequestID:       json.RawMessage(`7`),
		ArgumentsSHA256: audit.ArgumentsHash([]byte(`{"path":"~/.ssh/id_rsa"}`)),
		Arguments:       json.RawMessage(`{"path":"[redacted]"}`),
		Action:          "deny", RequestedAction: "ask", Reason: "secret file", Rule: "no-secrets", Stage: "rules",
		Stages: []abi.StageResult{
			{Stage: "rules", Phase: "request", Action: "deny", Score: 1, Labels: []string{"secrets"}, Rule: "no-secrets", LatencyUS: 35},
			{Stage: "judge", Phase: "request", Skipped: true},
			{Stage: "detector", Phase: "request", Action: "none", Error: "timeout", LatencyUS: 250000},
		},
		LatencyUS:   260000,
		Upstream:    &audit.Upstream{Status: 200, LatencyUS: 1200},
		TokenSHA256: audit.ArgumentsHash([]byte("tok")),
		Approval:    &audit.Approval{ID: "ap1", DecidedBy: "alice", Decision: audit.ApprovalApproved, Scope: "once"},
		Detail:      json.RawMessage(`{"note":"x"}`),
		Shadow: &audit.Shadow{Bundle: &audit.Bundle{Name: "next", Version: "2", Digest: "sha256:ab"}, Action: "allow",
			Rule: "r", Stage: "rules", Reason: "ok", LatencyUS: 40, Disagrees: true},
	}
	for _, tc := range []struct {
		name string
		ev   audit.Event
	}{
		{"full decision", full},
		{"minimal bundle event", audit.Event{ID: "x", Time: time.Now(), Kind: audit.KindBundleRejected, Bundle: &audit.Bundle{Name: "b"}}},
		{"bundle.shadow", audit.Event{ID: "x", Time: time.Now(), Kind: audit.KindBundleShadow, Bundle: &audit.Bundle{Name: "b"}}},
		{"dropped shadow", audit.Event{ID: "x", Time: time.Now(), Kind: audit.KindDecision, Shadow: &audit.Shadow{Bundle: &audit.Bundle{Name: "b"}, Dropped: true}}},
		{"string request id", audit.Event{ID: "x", Time: time.Now(), Kind: audit.KindDecision, RequestID: json.RawMessage(`"abc"`)}},
		{"held record", audit.Event{ID: "h", Time: time.Now(), Kind: audit.KindHeld, Action: "ask", Server: "fs", Tool: "t",
			Approval: &audit.Approval{ID: "call", Decision: audit.ApprovalHeld}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := validate(t, s, tc.ev); err != nil {
				t.Fatalf("valid event rejected: %v", err)
			}
		})
	}
	// The schema must reject what the type must never produce.
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"no id", map[string]any{"time": "2026-01-01T00:00:00Z", "kind": "decision"}},
		{"bad kind", map[string]any{"id": "x", "time": "2026-01-01T00:00:00Z", "kind": "other"}},
		{"bad action", map[string]any{"id": "x", "time": "2026-01-01T00:00:00Z", "kind": "decision", "action": "maybe"}},
		{"bad time", map[string]any{"id": "x", "time": "yesterday", "kind": "decision"}},
		{"principal without subject", map[string]any{"id": "x", "time": "2026-01-01T00:00:00Z", "kind": "decision", "principal": map[string]any{"issuer": "local"}}},
	} {
		t.Run("reject "+tc.name, func(t *testing.T) {
			if err := validate(t, s, tc.v); err == nil {
				t.Fatal("schema accepted an invalid event")
			}
		})
	}
}
