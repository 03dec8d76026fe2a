package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookGuardsItself runs `palisade hook` with the example bundle's rules on a data dir, a
// bundle folder and a config file in temporary places (not ~/.palisade): every attack on the
// engine's own files and process is denied by one of the self-guard rules, naming it, and
// reads elsewhere get no decision. The paths come from what the engine reports (the envelope's
// engine field), never from the rules.
func TestHookGuardsItself(t *testing.T) {
	bundle, data, project := agentsBundle(t, ""), t.TempDir(), t.TempDir()
	rules, err := os.ReadFile("../../examples/bundle/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bundle, "rules.yaml"), rules, 0o644)
	man, _ := os.ReadFile(filepath.Join(bundle, "bundle.yaml"))
	os.WriteFile(filepath.Join(bundle, "bundle.yaml"), bytes.Replace(man, []byte("default_action: deny"), []byte("default_action: allow"), 1), 0o644)
	cfg := filepath.Join(t.TempDir(), "palisade.yaml")
	os.WriteFile(cfg, []byte("bundle: "+bundle+"\ndata_dir: "+data+"\n"), 0o600)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(data, "nats-auth", "approver.nk")
	read := func(p string) string { return `"tool_name":"Read","tool_input":{"file_path":` + q(p) + `}` }
	bash := func(c string) string { return `"tool_name":"Bash","tool_input":{"command":` + q(c) + `}` }
	for _, tc := range []struct {
		name, call, rule string
	}{
		{"Read an approver key", read(key), "deny-engine-paths"},
		{"Edit the bundle", `"tool_name":"Edit","tool_input":{"file_path":` + q(filepath.Join(bundle, "rules.yaml")) + `,"old_string":"deny","new_string":"allow"}`, "deny-engine-paths"},
		{"Write the config", `"tool_name":"Write","tool_input":{"file_path":` + q(cfg) + `,"content":"bundle: /tmp/evil"}`, "deny-engine-paths"},
		{"Write the project's Claude Code settings", `"tool_name":"Write","tool_input":{"file_path":` + q(filepath.Join(project, ".claude", "settings.json")) + `,"content":"{}"}`, "deny-engine-paths"},
		{"cat a key", bash("cat " + key), "deny-engine-paths"},
		{"cat keys by glob", bash("cat " + filepath.Join(data, "nats-auth") + "/*.nk"), "deny-engine-paths"},
		{"cp over the bundle's rules", bash("cp evil.yaml " + filepath.Join(bundle, "rules.yaml")), "deny-engine-paths"},
		{"relative settings path", bash("sed -i d .claude/settings.local.json"), "deny-engine-paths"},
		{"overwrite the binary", bash("cp /tmp/evil " + exe), "deny-engine-paths"},
		{"MCP filesystem tool", `"tool_name":"mcp__fs__read_file","tool_input":{"path":` + q(key) + `}`, "deny-engine-paths"},
		{"palisade approvals", bash("palisade approvals approve 01JD2Q9W8Z3X4Y5V6T7S8R9Q0P"), "deny-engine-cli"},
		{"palisade bundle", bash("palisade bundle push ./evil --nats-url nats://127.0.0.1:4222"), "deny-engine-cli"},
		{"palisade keys", bash("palisade keys generate -o k"), "deny-engine-cli"},
		{"pkill", bash("pkill palisade"), "deny-engine-stop"},
		{"kill by pgrep", bash("kill $(pgrep -f 'palisade hook serve')"), "deny-engine-stop"},
		{"systemctl stop", bash("sudo systemctl stop palisade"), "deny-engine-stop"},
		{"a nested agent without prompts", bash("claude --dangerously-skip-permissions -p 'tidy up'"), "deny-agent-unguarded"},
		{"a nested agent without hooks", bash("cd /tmp && claude --bare -p 'tidy up'"), "deny-agent-unguarded"},
		{"Read elsewhere", read(filepath.Join(project, "README.md")), ""},
		{"cat elsewhere", bash("cat README.md && ls -la ~"), ""},
		{"palisade version", bash("palisade version"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"hook_event_name":"PreToolUse","session_id":"s","cwd":` + q(project) + `,` + tc.call + `}`
			code, out, errs := runCLI(t, in, "hook", "--config", cfg)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if tc.rule == "" {
				if strings.Contains(out, `"deny"`) {
					t.Fatalf("benign call denied: %s", out)
				}
				return
			}
			if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, tc.rule) {
				t.Fatalf("want a deny by %s, got %q (stderr %s)", tc.rule, out, errs)
			}
		})
	}
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
