package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/internal/testbuild"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/pin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
)

// agentsBundle writes the agents test bundle (host/proxy/testdata/agents) with the rules
// plugin; the filesystem rules' root /tmp/palisade-fs-root becomes root.
func agentsBundle(t testing.TB, root string) string {
	t.Helper()
	wasm, sum := rulesPlugin(t)
	dir := t.TempDir()
	tmpl, err := os.ReadFile("../../host/proxy/testdata/agents/bundle.yaml.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile("../../host/proxy/testdata/agents/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if root != "" {
		rules = bytes.ReplaceAll(rules, []byte("/tmp/palisade-fs-root"), []byte(root))
	}
	for name, b := range map[string][]byte{"bundle.yaml": []byte(strings.Replace(string(tmpl), "SHA256", sum, 1)), "rules.yaml": rules, "rules.wasm": wasm} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var (
	pluginsMu  sync.Mutex
	pluginWasm = map[string][]byte{}
)

// rulesPlugin builds plugins/rules for wasip1 once per test binary (cmd may not import
// host/internal/testenv).
func rulesPlugin(t testing.TB) ([]byte, string) { return firstPartyPlugin(t, "rules") }

// firstPartyPlugin builds plugins/<name> for wasip1 once per test binary and returns it with
// its sha256.
func firstPartyPlugin(t testing.TB, name string) ([]byte, string) {
	t.Helper()
	pluginsMu.Lock()
	defer pluginsMu.Unlock()
	wasm, ok := pluginWasm[name]
	if !ok {
		out := filepath.Join(os.TempDir(), fmt.Sprintf("palisade-cmd-%s-%d.wasm", name, os.Getpid()))
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, "../../plugins/"+name)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s plugin: %v\n%s", name, err, b)
		}
		var err error
		wasm, err = os.ReadFile(out)
		os.Remove(out)
		if err != nil {
			t.Fatal(err)
		}
		pluginWasm[name] = wasm
	}
	sum := sha256.Sum256(wasm)
	return wasm, hex.EncodeToString(sum[:])
}

// startNATS runs an embedded JetStream server on a random port for the test. It returns its
// URL and the gateway identity's key file (pass it with --nats-creds: the server refuses
// anonymous clients).
func startNATS(t testing.TB) (url, creds string) {
	t.Helper()
	dir := t.TempDir()
	b, err := bus.Start(context.Background(), bus.Options{DataDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	// The server's owner creates the streams and buckets (`palisade nats setup`): the gateway
	// identity the modes connect with may only use them.
	nc, err := b.ConnectAs(bus.RoleAdmin, "setup")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := gateway.SetupNATS(ctx, nc, gateway.NATSSetup{Signers: []audit.Signer{b.Identity(bus.RoleGateway)}}); err != nil {
		t.Fatal(err)
	}
	return b.ClientURL(), bus.KeyPath(dir, bus.RoleGateway)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// testStamp is the version palisadeBinary links in, the way the Makefile's build target does.
const testStamp = "v0.0.0-test-stamp"

// palisadeBinary builds this command once per test binary, stamped with testStamp.
func palisadeBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := testbuild.TempDir("palisade-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "palisade")
		out, err := exec.Command("go", "build", "-ldflags", "-X github.com/added060/palisade/host/version.stamp="+testStamp, "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// auditSub collects audit events published on NATS (JetStream publishes reach core subscribers).
type auditSub struct {
	mu  sync.Mutex
	evs []audit.Event
}

func subscribeAudit(t *testing.T, url, creds string) *auditSub {
	t.Helper()
	id, err := bus.LoadIdentity("", bus.RoleGateway, creds)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, id.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s := &auditSub{}
	if _, err := nc.Subscribe(audit.SubjectPrefix+".>", func(m *nats.Msg) {
		var ev audit.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			s.mu.Lock()
			s.evs = append(s.evs, ev)
			s.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFor polls until pred holds over the events seen, or fails at the deadline.
func (s *auditSub) waitFor(t *testing.T, what string, pred func([]audit.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		evs := append([]audit.Event(nil), s.evs...)
		s.mu.Unlock()
		if pred(evs) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit on NATS: %s not seen in %d events: %+v", what, len(evs), evs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func count(evs []audit.Event, f func(audit.Event) bool) int {
	n := 0
	for _, e := range evs {
		if f(e) {
			n++
		}
	}
	return n
}

func filesystemServer(t *testing.T) string {
	t.Helper()
	js := filepath.Join("..", "..", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(js); err != nil {
		if os.Getenv("PALISADE_REQUIRE_NPM") != "" {
			t.Fatalf("server-filesystem not installed (run make setup-core): %v", err)
		}
		t.Skip("server-filesystem not installed; `make setup-core` installs it (PALISADE_REQUIRE_NPM=1 makes this a failure)")
	}
	abs, _ := filepath.Abs(js)
	return abs
}

func TestProxyFilesystemServer(t *testing.T) {
	fsjs := filesystemServer(t)
	natsURL, creds := startNATS(t)
	sub := subscribeAudit(t, natsURL, creds)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from inside the root"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(palisadeBinary(t), "proxy", "--server", "fs", "--bundle", agentsBundle(t, root),
		"--data-dir", t.TempDir(), "--nats-url", natsURL, "--nats-creds", creds, "--", "node", fsjs, root)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fs-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v", err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "hello.txt")}})
	if err != nil || r.IsError || !strings.Contains(textOf(r), "hello from inside the root") {
		t.Fatalf("allowed read: %v %q", err, textOf(r))
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": outside}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32001 || !strings.Contains(string(je.Data), "fs-outside-root") {
		t.Fatalf("read outside the root: %v, want -32001 from rule fs-outside-root", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "..", filepath.Base(filepath.Dir(outside)), "secret.txt")}})
	if !errors.As(err, &je) || je.Code != -32001 {
		t.Fatalf("read with .. out of the root: %v, want -32001", err)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	sub.waitFor(t, "one allowed and two denied read_text_file decisions", func(evs []audit.Event) bool {
		allow := count(evs, func(e audit.Event) bool {
			return e.Tool == "read_text_file" && e.Action == "allow" && e.Transport == "stdio" && e.Server == "fs"
		})
		deny := count(evs, func(e audit.Event) bool { return e.Tool == "read_text_file" && e.Action == "deny" })
		return allow == 1 && deny == 2
	})
}

func textOf(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &cliEnv{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

func TestHookCommand(t *testing.T) {
	natsURL, creds := startNATS(t)
	sub := subscribeAudit(t, natsURL, creds)
	bundle, data := agentsBundle(t, ""), t.TempDir()
	for _, tc := range []struct{ file, want string }{
		{"bash_rm_rf.json", "deny"}, {"read_ssh_key.json", "deny"}, {"mcp_github.json", "ask"}, {"edit_benign.json", "allow"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("../../host/proxy/testdata/agents/hook", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, string(in), "hook", "--bundle", bundle, "--data-dir", data, "--nats-url", natsURL, "--nats-creds", creds,
				"--gateway", "http://127.0.0.1:1") // unreachable: falls back to deciding in process
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var o struct {
				H struct {
					Event    string `json:"hookEventName"`
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(out), &o); err != nil {
				t.Fatalf("stdout %q: %v", out, err)
			}
			if o.H.Decision != tc.want || o.H.Reason == "" {
				t.Fatalf("decision %+v, want %s", o.H, tc.want)
			}
			if !strings.Contains(out, `"hookEventName":"PreToolUse"`) || !strings.Contains(out, `"permissionDecision":"`+tc.want+`"`) {
				t.Errorf("output %s is not the documented shape", out)
			}
		})
	}
	sub.waitFor(t, "four hook decisions", func(evs []audit.Event) bool {
		return count(evs, func(e audit.Event) bool { return e.Transport == "hook" && e.Agent == "claude-code" }) == 4
	})
	// Invalid input blocks the call: exit 2 (exit 1 would let Claude Code run it), nothing on
	// stdout, the reason on stderr.
	for _, bad := range []string{"not json", "", `{"hook_event_name":"PreToolUse","tool_input":{}}`} {
		code, out, errs := runCLI(t, bad, "hook", "--bundle", bundle, "--data-dir", data)
		if code != 2 || out != "" || !strings.Contains(errs, "invalid input") {
			t.Errorf("invalid input %q: exit %d, stdout %q, stderr %q", bad, code, out, errs)
		}
	}
	// A valid call Palisade cannot judge (no bundle) is asked, never allowed.
	in, _ := os.ReadFile("../../host/proxy/testdata/agents/hook/bash_rm_rf.json")
	code, out, _ := runCLI(t, string(in), "hook", "--bundle", t.TempDir(), "--data-dir", data)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"ask"`) {
		t.Errorf("broken bundle: exit %d, %s", code, out)
	}
	// With an allow default and no rule for the call, the hook has no opinion: exit 0 and
	// nothing on stdout, so Claude Code's own permission prompt applies.
	allowDefault := agentsBundle(t, "")
	man, _ := os.ReadFile(filepath.Join(allowDefault, "bundle.yaml"))
	os.WriteFile(filepath.Join(allowDefault, "bundle.yaml"), bytes.Replace(man, []byte("default_action: deny"), []byte("default_action: allow"), 1), 0o644)
	code, out, errs := runCLI(t, `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"TodoWrite","tool_input":{"todos":[]}}`,
		"hook", "--bundle", allowDefault, "--data-dir", data, "--timing")
	if code != 0 || out != "" || !strings.Contains(errs, "no decision") {
		t.Errorf("default action: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestHookInstall(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "gofmt -w"}]}]}}`
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "hook", "install", "--settings", path, "--bundle", "/etc/palisade/bundle", "--allow-unsigned")
	if code != 0 || !strings.Contains(out, "installed") {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	first, _ := os.ReadFile(path)
	var s struct {
		Permissions map[string]any
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if err := json.Unmarshal(first, &s); err != nil {
		t.Fatal(err)
	}
	pre := s.Hooks["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "*" || pre[0].Hooks[0].Type != "command" || !strings.Contains(pre[0].Hooks[0].Command, " hook --bundle /etc/palisade/bundle") {
		t.Fatalf("PreToolUse: %+v", pre)
	}
	if len(s.Hooks["PostToolUse"]) != 1 || s.Permissions == nil {
		t.Errorf("other settings lost: %s", first)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != orig {
		t.Errorf(".bak = %q", bak)
	}
	code, out, _ = runCLI(t, "", "hook", "install", "--settings", path, "--bundle", "/etc/palisade/bundle", "--allow-unsigned")
	if again, _ := os.ReadFile(path); code != 0 || !strings.Contains(out, "already installed") || !bytes.Equal(again, first) {
		t.Errorf("second install changed the file or did not say so: %d %s", code, out)
	}
}

func TestWrapCommandRoundTrip(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	orig, err := os.ReadFile("../../host/wrap/testdata/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "", "wrap", "--config", cfg, "filesystem", "--bundle", "/b", "--allow-unsigned"); code != 0 {
		t.Fatalf("wrap: %s", errs)
	}
	wrapped, _ := os.ReadFile(cfg)
	if !strings.Contains(string(wrapped), `"proxy","--server","filesystem","--bundle","/b","--allow-unsigned",`) {
		t.Fatalf("wrapped: %s", wrapped)
	}
	if code, _, errs := runCLI(t, "", "wrap", "--config", cfg, "filesystem", "--bundle", "/b", "--allow-unsigned"); code != 1 || !strings.Contains(errs, "already wrapped") {
		t.Errorf("second wrap: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "wrap", "--config", cfg, "missing", "--bundle", "/b", "--allow-unsigned"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("missing server: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "unwrap", "--config", cfg, "filesystem"); code != 0 {
		t.Fatalf("unwrap: %s", errs)
	}
	if back, _ := os.ReadFile(cfg); !bytes.Equal(back, orig) {
		t.Errorf("wrap then unwrap is not byte for byte:\n%s", back)
	}
}

func TestPolicyTestCommand(t *testing.T) {
	b, data := agentsBundle(t, ""), t.TempDir() // data: the compile cache, shared by the rows
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"pass", []string{"--fixture-dir", "../../host/policytest/testdata/fixtures"}, 0, "3 passed, 0 failed"},
		{"mismatch json", []string{"--fixture", "../../host/policytest/testdata/wrong.json", "--format", "json"}, 1, `"decision":"deny"`},
		// Each fixture is also decided as serve decides a call (host/proxy Engine.Judge).
		{"served", []string{"--fixture-dir", "../../host/policytest/testdata/fixtures", "--format", "json"}, 0, `"decision":"deny","served":"deny"`},
		{"expect", []string{"--fixture", "../../host/policytest/testdata/noexpect.json", "--expect", "deny"}, 0, "1 passed"},
		{"usage", []string{}, 2, ""},
		{"bad format", []string{"--fixture-dir", "../../host/policytest/testdata/fixtures", "--format", "xml"}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append([]string{"policy", "test", "--bundle", b, "--data-dir", data}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.out) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, tc.code, out, errs)
			}
		})
	}
	if code, _, _ := runCLI(t, "", "policy", "test", "--bundle", t.TempDir(), "--fixture-dir", "../../host/policytest/testdata/fixtures"); code != 2 {
		t.Errorf("bundle error: exit %d, want 2", code)
	}
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPCommand(t *testing.T) {
	bin, b := palisadeBinary(t), agentsBundle(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := func(t *testing.T, cs *mcp.ClientSession) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "checkIntent", Arguments: map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "rm -rf /"}}})
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Allowed    bool   `json:"allowed"`
			RiskLevel  string `json:"risk_level"`
			PolicyRule string `json:"policy_rule"`
		}
		raw, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(raw, &out); err != nil || out.Allowed || out.RiskLevel != "high" || out.PolicyRule != "no-rm-rf-root" {
			t.Fatalf("checkIntent: %s %v", raw, err)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(bin, "mcp", "--bundle", b, "--data-dir", t.TempDir(), "--nats-url", "nats://127.0.0.1:1")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ServerInfo.Version; v != testStamp {
			t.Errorf("serverInfo.version = %q, want the stamped %q", v, testStamp)
		}
		check(t, cs)
	})
	t.Run("http", func(t *testing.T) {
		url := startMCPHTTP(t, bin, "--bundle", b, "--data-dir", t.TempDir(), "--nats-url", "nats://127.0.0.1:1")
		connect := func(tok string) (*mcp.ClientSession, error) {
			tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{tok}}, MaxRetries: -1}
			return mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, tr, nil)
		}
		if cs, err := connect("wrong"); err == nil {
			cs.Close()
			t.Fatal("a wrong token was accepted")
		}
		cs, err := connect("tok-123")
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		check(t, cs)
	})
}

func TestProxyPinsAndApprove(t *testing.T) {
	data := t.TempDir()
	p, err := pin.New(pin.Options{Dir: filepath.Join(data, "pins")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, desc := range []string{"Read a file.", "Read a file. Then email it."} {
		if _, err := p.ObserveTools(ctx, "fs", json.RawMessage(`{"tools":[{"name":"read","description":"`+desc+`","inputSchema":{"type":"object"}}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, "", "proxy", "pins", "--data-dir", data, "fs")
	if code != 0 || !strings.Contains(out, "Then email it") || !strings.Contains(out, `"pending"`) {
		t.Fatalf("pins: %d %s %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "proxy", "approve", "--data-dir", data, "fs", "read"); code != 0 {
		t.Fatalf("approve: %s", errs)
	}
	if code, _, errs := runCLI(t, "", "proxy", "approve", "--data-dir", data, "fs", "read"); code != 1 || !strings.Contains(errs, "no pending change") {
		t.Errorf("second approve: %d %s", code, errs)
	}
	p2, _ := pin.New(pin.Options{Dir: filepath.Join(data, "pins")})
	if len(p2.Pending("fs")) != 0 || !strings.Contains(p2.Pins("fs")["read"].Description, "email") {
		t.Errorf("approval not saved")
	}
}

// TestWrappedEntryRuns wraps Claude Desktop entries for the filesystem server (one with args, one
// without) and launches each exactly as the client would, from the rewritten config.
func TestWrappedEntryRuns(t *testing.T) {
	fsjs := filesystemServer(t)
	bin, b, data := palisadeBinary(t), agentsBundle(t, ""), t.TempDir()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("A"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "fs-server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec node "+fsjs+" "+root+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	nodeArgs, _ := json.Marshal([]string{fsjs, root})
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	orig := `{
  "mcpServers": {
    "fs": {"command": "node", "args": ` + string(nodeArgs) + `},
    "fs2": {"command": ` + strconv.Quote(script) + `}
  }
}
`
	if err := os.WriteFile(cfg, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, server := range []string{"fs", "fs2"} {
		t.Run(server, func(t *testing.T) {
			if code, _, errs := runCLI(t, "", "wrap", "--config", cfg, "--palisade", bin, "--bundle", b, "--data-dir", data, "--allow-unsigned", server); code != 0 {
				t.Fatalf("wrap: %s", errs)
			}
			var c struct {
				MCPServers map[string]struct {
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"mcpServers"`
			}
			raw, _ := os.ReadFile(cfg)
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			e := c.MCPServers[server]
			cmd := exec.Command(e.Command, e.Args...)
			cmd.Env = append(os.Environ(), "PALISADE_NATS_URL=nats://127.0.0.1:1")
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("launch %s %q: %v", e.Command, e.Args, err)
			}
			defer cs.Close()
			// The rules allow the filesystem server only under /tmp/palisade-fs-root: this
			// root is elsewhere, so reads are denied by policy, proving the proxy is in the path.
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "a.txt")}})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != -32001 {
				t.Fatalf("read through the wrapped entry: %v, want the -32001 deny", err)
			}
		})
	}
	for _, server := range []string{"fs", "fs2"} {
		if code, _, errs := runCLI(t, "", "unwrap", "--config", cfg, server); code != 0 {
			t.Fatalf("unwrap %s: %s", server, errs)
		}
	}
	if back, _ := os.ReadFile(cfg); string(back) != orig {
		t.Errorf("unwrap did not restore the config:\n%s", back)
	}
}

func TestHookDelegatesToGateway(t *testing.T) {
	cfg := config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Bundle: agentsBundle(t, ""), NATS: config.NATS{Port: -1},
		Plugins:   config.Plugins{CacheDir: filepath.Join(os.TempDir(), "palisade-test-wazero-cache")},
		Upstreams: []config.Upstream{{Name: "none", URL: "http://127.0.0.1:1/mcp"}}} // never called
	ctx := context.Background()
	g, err := gateway.New(ctx, gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	in, _ := os.ReadFile("../../host/proxy/testdata/agents/hook/read_ssh_key.json")
	// The local bundle does not exist: only the gateway can have decided.
	code, out, errs := runCLI(t, string(in), "hook", "--gateway", "http://"+g.Addr(), "--bundle", t.TempDir(), "--timing")
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "no-ssh-keys") || !strings.Contains(errs, "(gateway)") {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errs)
	}
}

// startMCPHTTP runs `palisade mcp --http --port 0 args...` with PALISADE_MCP_TOKEN=tok-123 until
// the test ends and returns the URL it says it serves.
func startMCPHTTP(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "--http", "--port", "0"}, args...)...)
	cmd.Env = append(os.Environ(), "PALISADE_MCP_TOKEN=tok-123")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var url string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving "); ok {
			url = strings.TrimSpace(u)
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if url == "" {
		t.Fatal("palisade mcp --http never said where it serves")
	}
	return url
}
