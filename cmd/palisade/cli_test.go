package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestHelpEveryCommand walks kong's model: `--help` and `-h` on every command and subcommand
// exit 0 and print that command's usage on stdout, and `palisade help CMD` does the same.
func TestHelpEveryCommand(t *testing.T) {
	k, err := newParser(&cliEnv{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	var paths [][]string
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		paths = append(paths, path)
		for _, c := range n.Children {
			if c.Type == kong.CommandNode {
				walk(c, append(append([]string(nil), path...), c.Name))
			}
		}
	}
	walk(k.Model.Node, nil)
	if len(paths) < 30 {
		t.Fatalf("walked %d commands, want every one (30+): %v", len(paths), paths)
	}
	for _, p := range paths {
		for _, args := range [][]string{append(append([]string(nil), p...), "--help"), append(append([]string(nil), p...), "-h"), append([]string{"help"}, p...)} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var out, errb bytes.Buffer
				code := run(context.Background(), args, &cliEnv{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
				want := "Usage: palisade " + strings.Join(p, " ")
				if code != exitOK || !strings.Contains(out.String(), want) {
					t.Errorf("exit %d, want 0 and %q on stdout\nstdout:\n%s\nstderr:\n%s", code, want, out.String(), errb.String())
				}
			})
		}
	}
}

// TestUsageErrors checks a bare palisade, an unknown command and a missing argument exit 2.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stdout string
		stderr string
	}{
		{"bare", nil, "Commands:", ""},
		{"unknown command", []string{"frobnicate"}, "", "unexpected argument frobnicate"},
		{"missing argument", []string{"approvals", "approve"}, "", `expected "<id>"`},
		{"unknown flag", []string{"keys", "generate", "--nope"}, "", "unknown flag --nope"},
		{"two install targets", []string{"hook", "install", "--user", "--local"}, "", "can't be used together"},
		{"bad format", []string{"policy", "test", "--format", "xml"}, "", "--format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runKong(t, tc.args, nil)
			if code != exitUsage || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) {
				t.Errorf("exit %d, want 2, %q on stdout and %q on stderr\nstdout:\n%s\nstderr:\n%s", code, tc.stdout, tc.stderr, out, errs)
			}
		})
	}
}

func runKong(t *testing.T, args []string, vars map[string]string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &cliEnv{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }})
	return code, out.String(), errb.String()
}

// parsed parses args with getenv behind every env binding and returns the selected command.
func parsed(t *testing.T, args []string, vars map[string]string) any {
	t.Helper()
	env := &cliEnv{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return vars[k] }}
	k, err := newParser(env, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := k.Parse(args)
	if err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return kctx.Selected().Target.Addr().Interface()
}

// TestEnvBindings checks each environment variable reaches its flag through cliEnv.Getenv
// (not the process environment), that a flag on the command line beats it, and that a blank
// variable counts as unset.
func TestEnvBindings(t *testing.T) {
	t.Setenv("PALISADE_ADMIN_URL", "http://process-env-must-not-leak") // Getenv decides, not os
	for _, tc := range []struct {
		name string
		args []string
		env  string
		get  func(any) string
		def  string // with the variable unset
	}{
		{"serve listen", []string{"serve"}, "PALISADE_LISTEN", func(c any) string { return c.(*serveCmd).Listen }, ""},
		{"serve config", []string{"serve"}, "PALISADE_CONFIG", func(c any) string { return c.(*serveCmd).Config }, ""},
		{"serve nats port", []string{"serve"}, "PALISADE_NATS_PORT", func(c any) string { return c.(*serveCmd).NATSPort }, ""},
		{"serve upstream", []string{"serve"}, "PALISADE_UPSTREAM", func(c any) string { return c.(*serveCmd).Upstream }, ""},
		{"serve client token", []string{"serve"}, "PALISADE_CLIENT_TOKEN", func(c any) string { return c.(*serveCmd).ClientToken }, ""},
		{"serve admin token", []string{"serve"}, "PALISADE_ADMIN_TOKEN", func(c any) string { return c.(*serveCmd).AdminToken }, ""},
		{"proxy bundle", []string{"proxy", "--", "cat"}, "PALISADE_BUNDLE", func(c any) string { return c.(*proxyRunCmd).Bundle }, ""},
		{"proxy nats creds", []string{"proxy", "--", "cat"}, "PALISADE_NATS_CREDS", func(c any) string { return c.(*proxyRunCmd).NATSCreds }, ""},
		{"hook gateway", []string{"hook"}, "PALISADE_GATEWAY", func(c any) string { return c.(*hookDecideCmd).Gateway }, ""},
		{"hook token", []string{"hook"}, "PALISADE_HOOK_TOKEN", func(c any) string { return c.(*hookDecideCmd).GatewayToken }, ""},
		{"hook log level", []string{"hook"}, "PALISADE_LOG_LEVEL", func(c any) string { return c.(*hookDecideCmd).LogLevel }, ""},
		{"mcp token", []string{"mcp"}, "PALISADE_MCP_TOKEN", func(c any) string { return c.(*mcpCmd).Token }, ""},
		{"mcp data dir", []string{"mcp"}, "PALISADE_DATA_DIR", func(c any) string { return c.(*mcpCmd).DataDir }, ""},
		{"bundle key", []string{"bundle", "sign", "d"}, "PALISADE_BUNDLE_KEY", func(c any) string { return c.(*bundleSignCmd).Key }, ""},
		{"bundle push nats", []string{"bundle", "push", "d"}, "PALISADE_NATS_URL", func(c any) string { return c.(*bundlePushCmd).NATSURL }, "nats://127.0.0.1:4222"},
		{"bundle ls url", []string{"bundle", "ls"}, "PALISADE_ADMIN_URL", func(c any) string { return c.(*bundleLsCmd).URL }, "http://127.0.0.1:8420"},
		{"bundle ls data dir", []string{"bundle", "ls"}, "PALISADE_DATA_DIR", func(c any) string { return c.(*bundleLsCmd).DataDir }, ".palisade"},
		{"approvals token", []string{"approvals", "list"}, "PALISADE_ADMIN_TOKEN", func(c any) string { return c.(*approvalsListCmd).Token }, ""},
		{"approvals creds", []string{"approvals", "deny", "X"}, "PALISADE_NATS_CREDS", func(c any) string { return c.(*approvalsDecideCmd).Creds }, ""},
		{"audit tail nats", []string{"audit", "tail"}, "PALISADE_NATS_URL", func(c any) string { return c.(*auditTailCmd).NATSURL }, "nats://127.0.0.1:4222"},
		{"policy bundle", []string{"policy", "test"}, "PALISADE_BUNDLE", func(c any) string { return c.(*policyTestCmd).Bundle }, ""},
		{"doctor config", []string{"doctor"}, "PALISADE_CONFIG", func(c any) string { return c.(*doctorCmd).Config }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.get(parsed(t, tc.args, map[string]string{tc.env: "from-env"})); got != "from-env" {
				t.Errorf("%s=from-env: flag = %q", tc.env, got)
			}
			if got := tc.get(parsed(t, tc.args, map[string]string{tc.env: "  "})); got != tc.def {
				t.Errorf("%s blank: flag = %q, want the default %q", tc.env, got, tc.def)
			}
			if got := tc.get(parsed(t, tc.args, nil)); got != tc.def {
				t.Errorf("%s unset: flag = %q, want the default %q", tc.env, got, tc.def)
			}
			flag := kebabFlag(t, tc.args, tc.env)
			args := append(append([]string(nil), tc.args[:len(tc.args)-trailing(tc.args)]...), "--"+flag+"=from-flag")
			args = append(args, tc.args[len(tc.args)-trailing(tc.args):]...)
			if got := tc.get(parsed(t, args, map[string]string{tc.env: "from-env"})); got != "from-flag" {
				t.Errorf("--%s beside %s: flag = %q, want from-flag", flag, tc.env, got)
			}
		})
	}
}

// trailing is how many of args are positional arguments at the end (kept after the flag).
func trailing(args []string) int {
	for i, a := range args {
		if a == "--" || (i > 0 && (args[0] == "bundle" && i == 2 || args[0] == "approvals" && i == 2)) {
			return len(args) - i
		}
	}
	return 0
}

// kebabFlag finds the flag of the selected command bound to env.
func kebabFlag(t *testing.T, args []string, env string) string {
	t.Helper()
	k, err := newParser(&cliEnv{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := k.Parse(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range kctx.Selected().Flags {
		for _, e := range f.Envs {
			if e == env {
				return f.Name
			}
		}
	}
	t.Fatalf("%v: no flag bound to %s", args, env)
	return ""
}

// TestEnvConfigReachesServe checks PALISADE_CONFIG, read through cliEnv, is the file serve
// loads: a config that does not parse is refused with exit 2 naming the file.
func TestEnvConfigReachesServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("listen: [not, a, string]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runKong(t, []string{"serve"}, map[string]string{"PALISADE_CONFIG": path})
	if code != exitUsage || !strings.Contains(errs, path) {
		t.Fatalf("serve with PALISADE_CONFIG=%s: exit %d, stderr %q", path, code, errs)
	}
}

// TestBoolFlagSpellings checks the spellings scripts used with the standard flag package still
// parse: --verify=false, --pin=false, and kong's --no-verify.
func TestBoolFlagSpellings(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		get  func(any) bool
		want bool
	}{
		{"verify default", []string{"audit", "tail"}, func(c any) bool { return c.(*auditTailCmd).Verify }, true},
		{"verify=false", []string{"audit", "tail", "--verify=false"}, func(c any) bool { return c.(*auditTailCmd).Verify }, false},
		{"no-verify", []string{"audit", "tail", "--no-verify"}, func(c any) bool { return c.(*auditTailCmd).Verify }, false},
		{"pin default", []string{"proxy", "--", "cat"}, func(c any) bool { return c.(*proxyRunCmd).Pin }, true},
		{"pin=false", []string{"proxy", "--pin=false", "--", "cat"}, func(c any) bool { return c.(*proxyRunCmd).Pin }, false},
		{"wrapped entry", []string{"proxy", "--inserted-args", "--", "cat"}, func(c any) bool { return c.(*proxyRunCmd).Inserted }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.get(parsed(t, tc.args, nil)); got != tc.want {
				t.Errorf("%v = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}

// TestInterspersedArgs checks flags may come before or after positional arguments, and that
// proxy passes everything after -- to the child untouched.
func TestInterspersedArgs(t *testing.T) {
	c := parsed(t, []string{"approvals", "deny", "--reason", "r", "ID", "--scope", "session"}, nil).(*approvalsDecideCmd)
	if c.ID != "ID" || c.Reason != "r" || c.Scope != "session" {
		t.Errorf("approvals deny = %+v", c)
	}
	p := parsed(t, []string{"proxy", "--server", "fs", "--", "npx", "-y", "server", "--bundle", "x"}, nil).(*proxyRunCmd)
	if p.Server != "fs" || p.Bundle != "" || strings.Join(p.Command, " ") != "npx -y server --bundle x" && strings.Join(p.Command, " ") != "-- npx -y server --bundle x" {
		t.Errorf("proxy = server %q bundle %q command %q", p.Server, p.Bundle, p.Command)
	}
}

// TestNegativeFlagValues checks a flag value that is a negative number parses as the value,
// not as a short flag: the help offers `--nats-port -1` for a random port.
func TestNegativeFlagValues(t *testing.T) {
	for _, args := range [][]string{{"serve", "--nats-port", "-1"}, {"serve", "--nats-port=-1"}} {
		if got := parsed(t, args, nil).(*serveCmd).NATSPort; got != "-1" {
			t.Errorf("%v: NATSPort = %q, want -1", args, got)
		}
	}
	// A flag still cannot swallow the next flag as its value.
	code, _, errs := runKong(t, []string{"serve", "--nats-port", "--listen", "x"}, nil)
	if code != exitUsage || !strings.Contains(errs, "nats-port") {
		t.Errorf("--nats-port --listen: exit %d, stderr %q; want 2 naming --nats-port", code, errs)
	}
}

// TestReadmeServeFlags: the README's Configuration section lists exactly serve's flags (it
// once said every setting had one, when serve had eleven).
func TestReadmeServeFlags(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Configuration")
	if !ok {
		t.Fatal("README has no Configuration section")
	}
	sec, _, _ = strings.Cut(sec, "```yaml")
	if strings.Contains(sec, "every setting also has a flag") {
		t.Error("README claims every setting has a flag")
	}
	listed := map[string]bool{}
	for _, f := range strings.Fields(sec) {
		f = strings.Trim(f, "`,.:()")
		if strings.HasPrefix(f, "--") && f != "--config" && f != "--help" {
			listed[f] = true
		}
	}
	k, err := newParser(&cliEnv{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := k.Parse([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range kctx.Selected().Flags {
		if n := "--" + f.Name; n != "--config" && n != "--help" {
			have[n] = true
			if !listed[n] {
				t.Errorf("README's Configuration section does not list %s", n)
			}
		}
	}
	for n := range listed {
		if !have[n] {
			t.Errorf("README lists %s, which serve does not have", n)
		}
	}
}
