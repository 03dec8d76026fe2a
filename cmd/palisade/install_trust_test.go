package main

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
)

// TestInstallWritesTrust: hook install and wrap with --bundle refuse an unsigned bundle unless
// --allow-unsigned (then written explicitly), refuse a signed one without its key or with
// another key, and otherwise write the key's text (not its path) into what they install. The
// hook installed that way decides with the signed bundle and refuses it once a file changes.
func TestInstallWritesTrust(t *testing.T) {
	dir := t.TempDir()
	unsigned := agentsBundle(t, "")
	signed := filepath.Join(dir, "signed")
	if err := os.CopyFS(signed, os.DirFS(unsigned)); err != nil {
		t.Fatal(err)
	}
	_, priv, _ := bundle.GenerateKey()
	pubFile, err := bundle.WriteKeyPair(filepath.Join(dir, "keys", "bundle.key"), priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Sign(signed, priv); err != nil {
		t.Fatal(err)
	}
	_, other, _ := bundle.GenerateKey()
	otherPub, err := bundle.WriteKeyPair(filepath.Join(dir, "keys", "other.key"), other)
	if err != nil {
		t.Fatal(err)
	}
	keyText := bundle.EncodePublicKey(priv.Public().(ed25519.PublicKey))

	install := func(args ...string) (int, string, string) {
		settings := filepath.Join(t.TempDir(), "settings.json")
		code, _, errs := runCLI(t, "", append([]string{"hook", "install", "--settings", settings}, args...)...)
		b, _ := os.ReadFile(settings)
		return code, string(b), errs
	}
	wrapped := func(args ...string) (int, []string, string) {
		cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
		os.WriteFile(cfg, []byte(`{"mcpServers":{"fs":{"command":"npx","args":["server"]}}}`), 0o644)
		code, _, errs := runCLI(t, "", append([]string{"wrap", "--config", cfg, "--palisade", "/usr/local/bin/palisade", "fs"}, args...)...)
		var c struct {
			MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
		}
		raw, _ := os.ReadFile(cfg)
		_ = json.Unmarshal(raw, &c)
		return code, c.MCPServers["fs"].Args, errs
	}

	// Unsigned: refused, nothing written; with --allow-unsigned, written explicitly.
	if code, settings, errs := install("--bundle", unsigned); code == 0 || settings != "" || !strings.Contains(errs, "unsigned") {
		t.Errorf("hook install, unsigned bundle: %d %q %s", code, settings, errs)
	}
	if code, args, errs := wrapped("--bundle", unsigned); code == 0 || !strings.Contains(errs, "unsigned") || strings.Contains(strings.Join(args, " "), "proxy") {
		t.Errorf("wrap, unsigned bundle: %d %q %s", code, args, errs)
	}
	if code, settings, errs := install("--bundle", unsigned, "--allow-unsigned"); code != 0 || !strings.Contains(settings, "--allow-unsigned") {
		t.Errorf("hook install --allow-unsigned: %d %s %s", code, settings, errs)
	}
	if code, args, errs := wrapped("--bundle", unsigned, "--allow-unsigned"); code != 0 || !strings.Contains(strings.Join(args, " "), "--allow-unsigned") {
		t.Errorf("wrap --allow-unsigned: %d %q %s", code, args, errs)
	}

	// Signed: its key is required, another key is refused.
	if code, settings, errs := install("--bundle", signed); code == 0 || settings != "" || !strings.Contains(errs, "--trust-key") {
		t.Errorf("hook install, signed bundle without its key: %d %q %s", code, settings, errs)
	}
	if code, _, errs := install("--bundle", signed, "--trust-key", otherPub); code == 0 || !strings.Contains(errs, "untrusted") {
		t.Errorf("hook install, signed bundle, another key: %d %s", code, errs)
	}
	code, settings, errs := install("--bundle", signed, "--trust-key", pubFile)
	if code != 0 || !strings.Contains(settings, "--trust-key '"+keyText+"'") || strings.Contains(settings, pubFile) || strings.Contains(settings, "--allow-unsigned") {
		t.Fatalf("hook install, signed bundle and its key: %d %s %s", code, settings, errs)
	}
	code, args, errs := wrapped("--bundle", signed, "--trust-key", pubFile)
	if code != 0 || !strings.Contains(strings.Join(args, "|"), "|--trust-key|"+keyText+"|") {
		t.Fatalf("wrap, signed bundle and its key: %d %q %s", code, args, errs)
	}

	// The installed command's flags: the signed bundle decides; changed, it is refused.
	in, err := os.ReadFile("../../host/proxy/testdata/agents/hook/bash_rm_rf.json")
	if err != nil {
		t.Fatal(err)
	}
	hook := func() (string, string) {
		_, out, errs := runCLI(t, string(in), "hook", "--engine", "off", "--bundle", signed, "--trust-key", keyText, "--data-dir", filepath.Join(dir, "data"), "--nats-url", "nats://127.0.0.1:1")
		return out, errs
	}
	if out, errs := hook(); !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("hook with the signed bundle: %s %s", out, errs)
	}
	if err := os.WriteFile(filepath.Join(signed, "rules.yaml"), []byte("rules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs := hook(); !strings.Contains(out, `"permissionDecision":"ask"`) || !strings.Contains(errs, "do not match the signed digest") {
		t.Fatalf("hook with the bundle changed after signing: %s %s", out, errs)
	}
}
