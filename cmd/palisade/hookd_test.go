//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var auditRef = regexp.MustCompile(`audit [0-9A-Za-z_-]+\)`)

// hookExec runs the built binary's hook on input with env, returning stdout, stderr and the
// way it decided (--timing: "engine", "in process ..." or "gateway").
func hookExec(t *testing.T, bin string, env []string, input []byte, args ...string) (out, how string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"hook", "--timing"}, args...)...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(input)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v\nstderr: %s", err, e.String())
	}
	m := regexp.MustCompile(`\((engine|in process[^\n]*|gateway|error[^\n]*)\)\n`).FindStringSubmatch(e.String())
	if m == nil {
		t.Fatalf("no timing line in stderr %q", e.String())
	}
	return auditRef.ReplaceAllString(o.String(), "audit ID)"), m[1]
}

// TestHookEngineMatchesInProcess: the background engine answers exactly what a hook deciding in
// process answers, for every agent fixture, after the bundle changes, and when the bundle no
// longer verifies; a hook whose config differs never reaches it.
func TestHookEngineMatchesInProcess(t *testing.T) {
	bin := palisadeBinary(t)
	bundle, data := agentsBundle(t, ""), t.TempDir()
	run, err := os.MkdirTemp("", "phk") // short: a socket path must fit in 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+run, "PALISADE_CONFIG=", "PALISADE_GATEWAY=", "PALISADE_HOOK_ENGINE=")
	args := []string{"--bundle", bundle, "--data-dir", data, "--nats-url", "nats://127.0.0.1:1"}
	t.Cleanup(func() { stopEngines(t, filepath.Join(run, "palisade")) })

	fixtures, _ := filepath.Glob("../../host/proxy/testdata/agents/hook/*.json")
	inputs := map[string][]byte{}
	for _, f := range fixtures {
		if filepath.Base(f) == "expected.json" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = b
	}
	if len(inputs) < 4 {
		t.Fatalf("fixtures: %v", fixtures)
	}
	// The first call starts the engine and decides in process; poll until the engine answers.
	first := inputs["bash_rm_rf.json"]
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, how := hookExec(t, bin, env, first, args...)
		if how == "engine" {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := filepath.Glob(filepath.Join(run, "palisade", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
			t.Fatalf("the engine never answered (last: %s)", how)
		}
		time.Sleep(50 * time.Millisecond)
	}
	same := func(t *testing.T, stage string) {
		t.Helper()
		for name, in := range inputs {
			want, how := hookExec(t, bin, env, in, append(args, "--engine", "off")...)
			if how != "in process" {
				t.Fatalf("%s %s: --engine off decided %s", stage, name, how)
			}
			got, how := hookExec(t, bin, env, in, args...)
			if how != "engine" {
				t.Fatalf("%s %s: decided %s, want the engine", stage, name, how)
			}
			if got != want {
				t.Errorf("%s %s: engine answered\n%s\nin process\n%s", stage, name, got, want)
			}
			if stage == "start" && !strings.Contains(got, "permissionDecision") {
				t.Errorf("%s %s: no decision: %q", stage, name, got)
			}
		}
	}
	same(t, "start")

	// The bundle changes: the engine's next answer follows it.
	rules := filepath.Join(bundle, "rules.yaml")
	orig, _ := os.ReadFile(rules)
	changed := bytes.ReplaceAll(orig, []byte("no-ssh-keys"), []byte("no-ssh-keys-v2"))
	if bytes.Equal(changed, orig) {
		t.Fatal("rules.yaml has no no-ssh-keys rule")
	}
	if err := os.WriteFile(rules, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := hookExec(t, bin, env, inputs["read_ssh_key.json"], args...); !strings.Contains(got, "no-ssh-keys-v2") {
		t.Fatalf("after the change: %s", got)
	}
	same(t, "changed")

	// The plugin no longer matches its pinned sha256: neither way decides with it. The engine
	// errs, so the hook falls back to in process, which asks.
	wasm := filepath.Join(bundle, "rules.wasm")
	w, _ := os.ReadFile(wasm)
	if err := os.WriteFile(wasm, append(w, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, in := range inputs {
		got, how := hookExec(t, bin, env, in, args...)
		if !strings.HasPrefix(how, "error; in process; engine: bundle") || !strings.Contains(got, `"permissionDecision":"ask"`) {
			t.Errorf("tampered bundle %s: %s decided %s", name, how, got)
		}
	}
	if err := os.WriteFile(wasm, w, 0o644); err != nil {
		t.Fatal(err)
	}
	same(t, "restored")

	// Another config (a different data dir) is another identity: it never reaches this engine.
	other := append([]string{}, args...)
	other[3] = t.TempDir()
	if _, how := hookExec(t, bin, env, first, other...); how == "engine" {
		t.Fatal("a hook with another config reached the running engine")
	}
}

// stopEngines removes every engine socket under dir until the engines let go of their locks
// (an engine exits when its socket is gone; one still building makes its socket later).
func stopEngines(t *testing.T, dir string) {
	locks, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, l := range locks {
		for ctx.Err() == nil {
			os.Remove(strings.TrimSuffix(l, ".lock"))
			f, err := os.OpenFile(l, os.O_RDWR, 0)
			if err != nil {
				break
			}
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			f.Close()
			if err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if ctx.Err() != nil {
		t.Errorf("an engine in %s did not exit after its socket was removed", dir)
	}
}

// TestHookIgnoresAnImpostorEngine: a process of the same user (the guarded agent) listening on
// the engine's socket cannot answer for it: the hook checks the peer runs its own binary, and
// decides in process instead of taking the impostor's allow.
func TestHookIgnoresAnImpostorEngine(t *testing.T) {
	bin := palisadeBinary(t)
	bundle, data := agentsBundle(t, ""), t.TempDir()
	run, err := os.MkdirTemp("", "phk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+run, "PALISADE_CONFIG=", "PALISADE_GATEWAY=", "PALISADE_HOOK_ENGINE=")
	args := []string{"--bundle", bundle, "--data-dir", data, "--nats-url", "nats://127.0.0.1:1"}
	dir := filepath.Join(run, "palisade")
	t.Cleanup(func() { stopEngines(t, dir) })
	in, err := os.ReadFile("../../host/proxy/testdata/agents/hook/bash_rm_rf.json")
	if err != nil {
		t.Fatal(err)
	}
	// Let the real engine come up once, to learn its socket's name, then stop it.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, how := hookExec(t, bin, env, in, args...); how == "engine" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine never answered")
		}
		time.Sleep(50 * time.Millisecond)
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("engine sockets: %v", socks)
	}
	stopEngines(t, dir)

	l, err := net.Listen("unix", socks[0])
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, c) // the whole request: the hook closes its write side
			_, _ = c.Write([]byte(`{"output":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}}`))
			c.Close()
		}
	}()
	out, how := hookExec(t, bin, env, in, args...)
	if how == "engine" || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("with an impostor on the socket the hook decided %s: %s", how, out)
	}
}
