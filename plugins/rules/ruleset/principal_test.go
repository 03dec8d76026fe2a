package ruleset

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// Only group sre may call deploy_*: the allow for sre outranks the deny for everyone else.
const principalPolicy = `{"rules": [
 {"id": "sre-deploys", "priority": 10, "action": "allow", "when": {"tool": ["deploy_*"], "principal": {"claims": {"groups": "sre"}}}},
 {"id": "no-deploys", "priority": 20, "action": "deny", "reason": "only sre may deploy", "when": {"tool": ["deploy_*"]}},
 {"id": "bots", "priority": 30, "action": "ask", "when": {"tool": ["db/*"], "principal": {"subject": "svc-*", "issuer": ["https://login.example.com/*"]}}},
 {"id": "admin-scope", "priority": 40, "action": "allow", "when": {"tool": ["admin/*"], "principal": {"scopes": ["mcp:admin"], "client_id": "ops-cli"}}},
 {"id": "dotted-claim", "priority": 50, "action": "deny", "when": {"tool": ["pay"], "principal": {"claims": {"https://example.com/tier": "free", "email_verified": "false"}}}},
 {"id": "local", "priority": 60, "action": "allow", "when": {"tool": ["shell"], "principal": {"issuer": "local", "subject": "ann"}}}
]}`

func TestPrincipalRules(t *testing.T) {
	e := engine(t, principalPolicy)
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	sre := &abi.Principal{Issuer: "https://login.example.com/realms/eng", Subject: "alice", ClientID: "claude-code",
		Scopes: []string{"mcp:tools"}, Claims: map[string]any{"groups": []any{"dev", "sre"}}}
	dev := &abi.Principal{Issuer: "https://login.example.com/realms/eng", Subject: "bob",
		Claims: map[string]any{"groups": []any{"dev"}}}
	for _, tc := range []struct {
		name string
		env  abi.Envelope
		rule string
	}{
		{"sre member may deploy", abi.Envelope{Tool: "deploy_api", Principal: sre}, "sre-deploys"},
		{"non-member is refused", abi.Envelope{Tool: "deploy_api", Principal: dev}, "no-deploys"},
		{"no principal is refused", abi.Envelope{Tool: "deploy_api"}, "no-deploys"},
		{"group as a string claim", abi.Envelope{Tool: "deploy_api", Principal: &abi.Principal{Issuer: "x", Subject: "c", Claims: map[string]any{"groups": "sre"}}}, "sre-deploys"},
		{"group name is matched whole", abi.Envelope{Tool: "deploy_api", Principal: &abi.Principal{Issuer: "x", Subject: "d", Claims: map[string]any{"groups": []any{"sre-readonly"}}}}, "no-deploys"},
		{"claim missing", abi.Envelope{Tool: "deploy_api", Principal: &abi.Principal{Issuer: "x", Subject: "e"}}, "no-deploys"},
		{"subject and issuer globs", abi.Envelope{Tool: "db/drop", Principal: &abi.Principal{Issuer: "https://login.example.com/realms", Subject: "svc-backup"}}, "bots"},
		{"subject glob misses", abi.Envelope{Tool: "db/drop", Principal: sre}, ""},
		{"issuer glob misses", abi.Envelope{Tool: "db/drop", Principal: &abi.Principal{Issuer: "https://evil.example/x", Subject: "svc-backup"}}, ""},
		{"scope and client", abi.Envelope{Tool: "admin/reset", Principal: &abi.Principal{Issuer: "x", Subject: "f", ClientID: "ops-cli", Scopes: []string{"mcp:tools", "mcp:admin"}}}, "admin-scope"},
		{"scope missing", abi.Envelope{Tool: "admin/reset", Principal: &abi.Principal{Issuer: "x", Subject: "f", ClientID: "ops-cli", Scopes: []string{"mcp:tools"}}}, ""},
		{"client differs", abi.Envelope{Tool: "admin/reset", Principal: &abi.Principal{Issuer: "x", Subject: "f", ClientID: "other", Scopes: []string{"mcp:admin"}}}, ""},
		{"dotted claim name and a boolean", abi.Envelope{Tool: "pay", Principal: &abi.Principal{Issuer: "x", Subject: "g", Claims: map[string]any{"https://example.com/tier": "free", "email_verified": false}}}, "dotted-claim"},
		{"local OS user", abi.Envelope{Tool: "shell", Principal: &abi.Principal{Issuer: "local", Subject: "ann"}}, "local"},
		{"another OS user", abi.Envelope{Tool: "shell", Principal: &abi.Principal{Issuer: "local", Subject: "root"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := json.Marshal(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			r := e.Evaluate(env, now)
			got := ""
			if r.Matched {
				got = r.Rule.ID
			}
			if got != tc.rule {
				t.Errorf("rule = %q, want %q (envelope %s)", got, tc.rule, env)
			}
		})
	}
}

func TestPrincipalGlobsRefuseNonStrings(t *testing.T) {
	if _, err := Parse([]byte(`{"rules": [{"action": "deny", "when": {"principal": {"subject": 7}}}]}`)); err == nil {
		t.Fatal("Parse accepted a number as a subject glob")
	}
}
