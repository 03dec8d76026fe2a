package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/infer"
)

// TestInstallWritesTheRuntime: hook install and wrap write the ONNX Runtime found now (or
// named) into what they install, absolute, so the hook and the wrapped proxy run the detector
// from whatever directory the client starts them in.
func TestInstallWritesTheRuntime(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libonnxruntime.so")
	if err := os.WriteFile(lib, []byte("not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(infer.LibraryEnv, lib) // found now, as from the build tree

	settings := filepath.Join(dir, "settings.json")
	if code, out, errs := runCLI(t, "", "hook", "install", "--settings", settings, "--bundle", "/etc/palisade/bundle", "--allow-unsigned"); code != 0 {
		t.Fatalf("hook install: %d %s %s", code, out, errs)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "--onnxruntime "+lib) {
		t.Fatalf("settings do not name the runtime:\n%s", b)
	}

	cfg := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}}}`), 0o644)
	if code, out, errs := runCLI(t, "", "wrap", "--config", cfg, "--palisade", "/usr/local/bin/palisade", "--bundle", "/etc/palisade/bundle", "--allow-unsigned", "fs"); code != 0 {
		t.Fatalf("wrap: %d %s %s", code, out, errs)
	}
	b, _ = os.ReadFile(cfg)
	if !strings.Contains(string(b), `"--onnxruntime", "`+lib+`"`) && !strings.Contains(string(b), `"--onnxruntime","`+lib+`"`) {
		t.Fatalf("the wrapped entry does not name the runtime:\n%s", b)
	}

	// None found: installed without it, and the user is told what that means.
	t.Setenv(infer.LibraryEnv, filepath.Join(dir, "missing.so"))
	code, _, errs := runCLI(t, "", "hook", "install", "--settings", filepath.Join(dir, "s2.json"), "--bundle", "/b", "--allow-unsigned")
	if code != 0 || !strings.Contains(errs, "will be refused") {
		t.Fatalf("hook install without a runtime: %d %q", code, errs)
	}
}

// TestInstallRefusesWhatCannotWork: hook install with nothing to decide with, a shared project
// settings file naming a binary path of this machine, and wrap without a bundle are refused
// with what to do instead; a remote (url) server's refusal says to use the gateway.
func TestInstallRefusesWhatCannotWork(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "", "hook", "install", "--settings", filepath.Join(dir, "s.json")); code != exitUsage || !strings.Contains(errs, "--bundle DIR, --gateway URL or --config FILE") {
		t.Errorf("hook install with nothing to decide with: %d %q", code, errs)
	}
	// The default target is the project's shared settings.json; this test binary is not
	// palisade on PATH.
	t.Chdir(dir)
	t.Setenv("PATH", dir)
	if code, _, errs := runCLI(t, "", "hook", "install", "--gateway", "http://127.0.0.1:8420"); code != exitUsage || !strings.Contains(errs, "not on PATH") || !strings.Contains(errs, "--local") {
		t.Errorf("hook install into the shared project settings: %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "settings.json")); err == nil {
		t.Error("the shared settings were written")
	}
	if code, _, errs := runCLI(t, "", "hook", "install", "--local", "--gateway", "http://127.0.0.1:8420"); code != 0 {
		t.Errorf("hook install --local: %d %q", code, errs)
	}
	cfg := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"fs":{"command":"npx","args":["server"]},"remote":{"type":"http","url":"https://mcp.example.com/mcp"}}}`), 0o644)
	if code, _, errs := runCLI(t, "", "wrap", "--config", cfg, "fs"); code != exitUsage || !strings.Contains(errs, "--bundle DIR is required") {
		t.Errorf("wrap without a bundle: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "wrap", "--config", cfg, "--bundle", dir, "--allow-unsigned", "remote"); code == 0 || !strings.Contains(errs, "palisade serve") {
		t.Errorf("wrap of a url server: %d %q", code, errs)
	}
}

// TestSayWhileSlow: a start that outlasts the threshold says why; a quick one says nothing.
func TestSayWhileSlow(t *testing.T) {
	var slow, quick strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for {
		stop := sayWhileSlow(&slow, time.Millisecond, "compiling")
		time.Sleep(20 * time.Millisecond) // the start outlasts the threshold
		stop()                            // after stop, nothing writes: slow can be read
		if strings.Contains(slow.String(), "compiling") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no message from a slow start")
		}
	}
	sayWhileSlow(&quick, time.Hour, "compiling")()
	if quick.Len() != 0 {
		t.Fatalf("a quick start printed %q", quick.String())
	}
}
