package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/proxy"
)

func TestHookRecordedInputs(t *testing.T) {
	rec := &sink{}
	e := agentsEngine(t, rec)
	var want map[string]struct {
		Out struct {
			Event    string `json:"hookEventName"`
			Decision string `json:"permissionDecision"`
			Rule     string `json:"rule"`
		} `json:"hookSpecificOutput"`
	}
	b, err := os.ReadFile("testdata/agents/hook/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for file, w := range want {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata/agents/hook", file))
			if err != nil {
				t.Fatal(err)
			}
			in, err := proxy.ParseHookInput(raw)
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Hook(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			got := out.HookSpecificOutput
			if got.HookEventName != w.Out.Event || got.PermissionDecision != w.Out.Decision {
				t.Fatalf("got %+v, want event %s decision %s", got, w.Out.Event, w.Out.Decision)
			}
			if !strings.Contains(got.PermissionDecisionReason, "rule "+w.Out.Rule) {
				t.Errorf("reason %q does not name rule %s", got.PermissionDecisionReason, w.Out.Rule)
			}
			// The printed form is exactly the documented shape.
			enc, _ := json.Marshal(out)
			var shape map[string]map[string]string
			if err := json.Unmarshal(enc, &shape); err != nil || len(shape) != 1 || shape["hookSpecificOutput"]["permissionDecision"] != w.Out.Decision {
				t.Errorf("output %s is not the documented shape", enc)
			}
		})
	}
	evs := rec.events()
	if len(evs) != len(want) {
		t.Fatalf("%d audit events, want %d", len(evs), len(want))
	}
	for _, ev := range evs {
		if ev.Transport != "hook" || ev.Agent != "claude-code" || ev.Session == "" {
			t.Errorf("event %+v lacks hook transport, agent or session", ev)
		}
		if ev.Tool == "create_issue" && ev.Server != "github" {
			t.Errorf("mcp tool event has server %q, want github", ev.Server)
		}
	}
}

func TestHookInvalidInput(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"not json", "rm -rf /"},
		{"no tool", `{"hook_event_name":"PreToolUse","tool_input":{}}`},
		{"other event", `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`},
		{"input not object", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"rm -rf /"}`},
		{"duplicate argument", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf /"}}`},
		{"argument in two cases", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","Command":"rm -rf /"}}`},
		{"deep input", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"a":` + strings.Repeat(`{"a":`, 200_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := proxy.ParseHookInput([]byte(tc.in)); !errors.Is(err, proxy.ErrHookInput) {
				t.Fatalf("err = %v, want ErrHookInput", err)
			}
		})
	}
}

func TestSplitMCPTool(t *testing.T) {
	for _, tc := range []struct {
		name, server, tool string
		ok                 bool
	}{
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__fs__read__file", "fs", "read__file", true},
		{"mcp__x", "", "", false},
		{"Bash", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tl, ok := proxy.SplitMCPTool(tc.name)
			if s != tc.server || tl != tc.tool || ok != tc.ok {
				t.Errorf("SplitMCPTool(%q) = %q, %q, %v", tc.name, s, tl, ok)
			}
		})
	}
}

func TestHookOverHTTP(t *testing.T) {
	e := agentsEngine(t, &sink{})
	srv := httptest.NewServer(proxy.HookHandler(e))
	defer srv.Close()
	raw, err := os.ReadFile("testdata/agents/hook/bash_rm_rf.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := proxy.HookClient{URL: srv.URL}.Decide(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if out.HookSpecificOutput.PermissionDecision != "deny" {
		t.Fatalf("gateway answered %+v", out)
	}
	if _, err := (proxy.HookClient{URL: srv.URL}).Decide(context.Background(), []byte("nope")); err == nil || errors.Is(err, proxy.ErrGatewayUnreachable) {
		t.Errorf("bad input: err = %v, want a plain 400 error", err)
	}
	srv.Close()
	if _, err := (proxy.HookClient{URL: srv.URL}).Decide(context.Background(), raw); !errors.Is(err, proxy.ErrGatewayUnreachable) {
		t.Errorf("closed gateway: err = %v, want ErrGatewayUnreachable", err)
	}
}
