package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
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
			in, err := engine.ParseHookInput(raw)
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
			if _, err := engine.ParseHookInput([]byte(tc.in)); !errors.Is(err, engine.ErrHookInput) {
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
			s, tl, ok := engine.SplitMCPTool(tc.name)
			if s != tc.server || tl != tc.tool || ok != tc.ok {
				t.Errorf("SplitMCPTool(%q) = %q, %q, %v", tc.name, s, tl, ok)
			}
		})
	}
}

func TestClaudeMCPServers(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	cwd := filepath.Join(proj, "sub")
	home := t.TempDir()
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, ".mcp.json"), `{"mcpServers": {"gh__corp": {"command": "x"}}}`)
	write(filepath.Join(home, ".claude.json"), `{"mcpServers": {"user-srv": {}}, "projects": {"`+proj+`": {"mcpServers": {"local-srv": {}}}, "/elsewhere": {"mcpServers": {"other": {}}}}}`)
	got := engine.ClaudeMCPServers(cwd, home)
	slices.Sort(got)
	if want := []string{"gh__corp", "local-srv", "user-srv"}; !slices.Equal(got, want) {
		t.Errorf("ClaudeMCPServers = %q, want %q", got, want)
	}
	if got := engine.ClaudeMCPServers(cwd, "-"); !slices.Equal(got, []string{"gh__corp"}) {
		t.Errorf("without home: %q", got)
	}
}

// hookRules is a bundle for the hook-semantics tests: default allow (the example bundle's), a
// rules stage and a second rules-plugin stage named "other" whose allow is not a policy rule.
const hookRules = `rules:
  - {id: no-delete-repo, priority: 10, action: deny, reason: no repo deletion, when: {server: ["gh__corp"], tool: [delete_repo]}}
  - {id: no-drop, priority: 11, action: deny, reason: no drops, when: {server: [db], tool: ["drop__table"]}}
  - {id: rm-root, priority: 12, action: deny, reason: root delete, when: {tool: [Bash], arguments: {command: ["rm -rf /"]}}}
  - {id: ask-push, priority: 20, action: ask, reason: pushes need a person, when: {tool: [Bash], arguments: {command: ["git push*"]}}}
  - {id: sample-sum, priority: 30, action: sample, when: {tool: [get-sum]}}
  - {id: allow-echo, priority: 40, action: allow, reason: echo is harmless, when: {tool: [echo]}}
  - {id: mcp-ok, priority: 90, action: allow, reason: every MCP tool, when: {server: ["?*"]}}
`

const otherRules = `rules:
  - {id: other-allows, priority: 1, action: allow, reason: scored harmless, when: {tool: [Bash], arguments: {command: ["ls*"]}}}
`

func hookEngine(t *testing.T, rec engine.Recorder, o engine.HookOptions) *engine.Engine {
	t.Helper()
	wasm, sum := testenv.ReadPlugin(t, "./plugins/rules")
	dir := t.TempDir()
	man := `name: hook-test
version: 0.0.1
abi: "1.0"
default_action: allow
fallback:
  ask: deny
  sample: allow
coverage: {uncovered: pass}
stages:
  - {name: rules, plugin: rules.wasm, sha256: ` + sum + `, timeout: 10s, data: {rules: rules.yaml}}
  - {name: other, plugin: rules.wasm, sha256: ` + sum + `, timeout: 10s, data: {rules: other.yaml}}
`
	for name, b := range map[string][]byte{"bundle.yaml": []byte(man), "rules.yaml": []byte(hookRules), "other.yaml": []byte(otherRules), "rules.wasm": wasm} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: filepath.Join(os.TempDir(), "palisade-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Build(ctx, dir, bundle.BuildOptions{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	active := &chain.Active{}
	active.Swap(b.Chain)
	t.Cleanup(func() { b.Chain.CloseWhenDrained(ctx) })
	if o.Home == "" {
		o.Home = "-"
	}
	return engine.NewEngine(engine.EngineOptions{Active: active, Recorder: rec, Gateway: "test", Hook: o})
}

func hookCall(tool, input, cwd string) *engine.HookInput {
	return &engine.HookInput{SessionID: "s1", HookEventName: engine.HookEventPreToolUse, ToolName: tool, ToolInput: json.RawMessage(input), Cwd: cwd}
}

// TestHookAnswersAllowOnlyForAnExplicitRule: the bundle default, an allow fallback and an allow
// from a stage that is not a policy rules stage are no opinion (no output); a rule's allow is
// allow; ask and deny pass through.
func TestHookAnswersAllowOnlyForAnExplicitRule(t *testing.T) {
	rec := &sink{}
	e := hookEngine(t, rec, engine.HookOptions{})
	ctx := context.Background()
	for _, tc := range []struct {
		label, tool, input, want string
	}{
		{"default action", "Bash", `{"command":"find / -delete"}`, ""},
		{"allow rule", "echo", `{"text":"hi"}`, "allow"},
		{"allow from a non-rules stage", "Bash", `{"command":"ls -la"}`, ""},
		{"sample resolved by an allow fallback", "get-sum", `{"a":1,"b":2}`, ""},
		{"ask rule", "Bash", `{"command":"git push origin main"}`, "ask"},
		{"deny rule", "Bash", `{"command":"rm -rf /"}`, "deny"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			out, err := e.Hook(ctx, hookCall(tc.tool, tc.input, ""))
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Decision(); got != tc.want {
				t.Fatalf("decision %q (%s), want %q", got, out.Reason(), tc.want)
			}
			enc, _ := json.Marshal(out)
			if tc.want == "" && string(enc) != "{}" {
				t.Errorf("no decision encodes as %s, want {}", enc)
			}
		})
	}
	// Every call is audited with what the hook answered.
	evs := rec.events()
	if len(evs) != 6 {
		t.Fatalf("%d audit events, want 6", len(evs))
	}
	if !strings.Contains(string(evs[0].Detail), `"hook_decision":"none"`) {
		t.Errorf("detail %s lacks hook_decision none", evs[0].Detail)
	}
	// Over HTTP, no opinion is a 200 with {} (Claude Code's http hooks then apply their own flow),
	// and the client hands it on as no decision.
	srv := httptest.NewServer(proxy.HookHandler(e))
	defer srv.Close()
	raw := []byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"find / -delete"}}`)
	resp, err := http.Post(srv.URL+engine.HookPath, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("no opinion over HTTP: %d %s", resp.StatusCode, body)
	}
	if out, err := (proxy.HookClient{URL: srv.URL}).Decide(ctx, raw); err != nil || out.Decision() != "" {
		t.Errorf("client: %+v %v", out, err)
	}
	// A configured allow stage turns that stage's rule into an explicit allow.
	e2 := hookEngine(t, &sink{}, engine.HookOptions{AllowStages: []string{"rules", "other"}})
	if out, _ := e2.Hook(ctx, hookCall("Bash", `{"command":"ls -la"}`, "")); out.Decision() != "allow" {
		t.Errorf("AllowStages other: %q", out.Decision())
	}
}

// TestHookMCPNamesCannotDodgeRules: a server or tool name holding "__" never lets a call escape
// a rule written for that server and tool, whether or not the server is configured.
func TestHookMCPNamesCannotDodgeRules(t *testing.T) {
	ctx := context.Background()
	configured := t.TempDir()
	if err := os.WriteFile(filepath.Join(configured, ".mcp.json"), []byte(`{"mcpServers":{"gh__corp":{},"db":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		label, tool, cwd string
		servers          []string
		want             string
	}{
		{"server with __ from .mcp.json", "mcp__gh__corp__delete_repo", configured, nil, "deny"},
		{"server with __ unconfigured", "mcp__gh__corp__delete_repo", "", nil, "deny"},
		{"server with __ from gateway upstreams", "mcp__gh__corp__delete_repo", "", []string{"gh__corp"}, "deny"},
		{"tool with __ from .mcp.json", "mcp__db__drop__table", configured, nil, "deny"},
		{"tool with __ unconfigured", "mcp__db__drop__table", "", nil, "deny"},
		{"decoy server db__drop configured", "mcp__db__drop__table", "", []string{"db__drop", "db"}, "deny"},
		{"harmless tool", "mcp__gh__corp__list_repos", configured, nil, "allow"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			rec := &sink{}
			e := hookEngine(t, rec, engine.HookOptions{Servers: tc.servers})
			out, err := e.Hook(ctx, hookCall(tc.tool, `{}`, tc.cwd))
			if err != nil {
				t.Fatal(err)
			}
			if out.Decision() != tc.want {
				t.Fatalf("%s: %q (%s), want %s", tc.tool, out.Decision(), out.Reason(), tc.want)
			}
		})
	}
}

func TestHookOverHTTP(t *testing.T) {
	e := agentsEngine(t, &sink{})
	srv := httptest.NewServer(proxy.HookAuth("tok", proxy.HookHandler(e)))
	defer srv.Close()
	raw, err := os.ReadFile("testdata/agents/hook/bash_rm_rf.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := proxy.HookClient{URL: srv.URL, Token: "tok"}.Decide(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if out.Decision() != "deny" {
		t.Fatalf("gateway answered %+v", out)
	}
	// Claude Code's http hooks read a non-2xx answer as "proceed": every failure is a 200 with
	// a blocking decision.
	for _, tc := range []struct {
		label, token, body, want, why string
	}{
		{"invalid input", "tok", "nope", "deny", proxy.HookErrInput},
		{"wrong token", "bad", string(raw), "deny", proxy.HookErrAuth},
		{"no token", "", string(raw), "deny", proxy.HookErrAuth},
	} {
		t.Run(tc.label, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+engine.HookPath, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var o engine.HookOutput
			if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != 200 || o.Decision() != tc.want || resp.Header.Get(proxy.HookErrorHeader) != tc.why {
				t.Errorf("status %d, %s %+v, decode %v", resp.StatusCode, resp.Header.Get(proxy.HookErrorHeader), o, err)
			}
			out, err := proxy.HookClient{URL: srv.URL, Token: tc.token}.Decide(context.Background(), []byte(tc.body))
			if err != nil || out.Decision() != tc.want {
				t.Errorf("client: %+v %v", out, err)
			}
		})
	}
	// A gateway without a bundle asks (and the client falls back to deciding in process).
	empty := httptest.NewServer(proxy.HookHandler(engine.NewEngine(engine.EngineOptions{Active: &chain.Active{}})))
	defer empty.Close()
	resp, err := http.Post(empty.URL+engine.HookPath, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var o engine.HookOutput
	_ = json.NewDecoder(resp.Body).Decode(&o)
	resp.Body.Close()
	if resp.StatusCode != 200 || o.Decision() != "ask" || resp.Header.Get(proxy.HookErrorHeader) != proxy.HookErrNoBundle {
		t.Errorf("no bundle: status %d, %+v", resp.StatusCode, o)
	}
	if _, err := (proxy.HookClient{URL: empty.URL}).Decide(context.Background(), raw); !errors.Is(err, proxy.ErrGatewayUnreachable) {
		t.Errorf("no bundle: client err = %v, want ErrGatewayUnreachable", err)
	}
	// What any web page can send without a preflight is denied before it is judged.
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+engine.HookPath, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer tok")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var o engine.HookOutput
		err = json.NewDecoder(resp.Body).Decode(&o)
		resp.Body.Close()
		if err != nil || o.Decision() != "deny" || resp.Header.Get(proxy.HookErrorHeader) != proxy.HookErrInput || !strings.Contains(o.Reason(), "Content-Type") {
			t.Errorf("Content-Type %q: status %d, %+v, %v", ct, resp.StatusCode, o, err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+engine.HookPath, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "Application/JSON; charset=utf-8")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	o = engine.HookOutput{}
	_ = json.NewDecoder(resp.Body).Decode(&o)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || o.Decision() != "deny" || resp.Header.Get(proxy.HookErrorHeader) != "" {
		t.Errorf("Application/JSON; charset=utf-8: status %d, %+v, want the policy's deny", resp.StatusCode, o)
	}
	srv.Close()
	if _, err := (proxy.HookClient{URL: srv.URL}).Decide(context.Background(), raw); !errors.Is(err, proxy.ErrGatewayUnreachable) {
		t.Errorf("closed gateway: err = %v, want ErrGatewayUnreachable", err)
	}
}
