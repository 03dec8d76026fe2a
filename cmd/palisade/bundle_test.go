package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func bundleCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &cliEnv{Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// TestBundleSignVerifyCLI drives keys generate, bundle pin, sign, verify and build offline (the
// plugin is never compiled here; the fleet test in host/gateway runs the rest against gateways).
func TestBundleSignVerifyCLI(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "k.key")
	if code, out, errs := bundleCLI(t, "keys", "generate", "-o", key); code != exitOK || !strings.Contains(out, "key id") {
		t.Fatalf("keys generate: %d %s %s", code, out, errs)
	}
	if code, _, _ := bundleCLI(t, "keys", "generate", "-o", key); code != exitFail {
		t.Fatal("keys generate overwrote a key")
	}
	b := filepath.Join(dir, "b")
	os.MkdirAll(b, 0o755)
	os.WriteFile(filepath.Join(b, "p.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644)
	os.WriteFile(filepath.Join(b, "bundle.yaml"), []byte("name: t\nversion: \"1\"\ncoverage: {uncovered: pass}\nstages:\n  - name: s\n    plugin: p.wasm\n"), 0o644)

	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bundle", "verify", b, "--trusted-key", key + ".pub"}, exitFail, "unsigned"},
		{[]string{"bundle", "pin", b}, exitOK, "pinned 1 stage"},
		{[]string{"bundle", "verify", b, "--allow-unsigned"}, exitOK, "ok t 1"},
		{[]string{"bundle", "sign", b}, exitUsage, ""},
		{[]string{"bundle", "sign", b, "--key", key}, exitOK, "signed t 1"},
		{[]string{"bundle", "verify", b, "--trusted-key", key + ".pub"}, exitOK, "signed by"},
		{[]string{"bundle", "verify", b}, exitFail, "untrusted_key"},
		{[]string{"bundle", "build", b, "-o", filepath.Join(dir, "b.tar.gz")}, exitOK, "built"},
		{[]string{"bundle", "verify", filepath.Join(dir, "b.tar.gz"), "--trusted-key", key + ".pub"}, exitOK, "signed by"},
		{[]string{"bundle", "nope"}, exitUsage, ""},
	}
	for _, s := range steps {
		code, out, errs := bundleCLI(t, s.args...)
		if code != s.code || !strings.Contains(out+errs, s.want) {
			t.Fatalf("palisade %s = %d\n%s%s\nwant %d with %q", strings.Join(s.args, " "), code, out, errs, s.code, s.want)
		}
	}
	// A plugin changed after signing: verify names the tampering; an archive re-signed passes.
	os.WriteFile(filepath.Join(b, "p.wasm"), []byte("\x00asm\x01\x00\x00\x00\x00"), 0o644)
	if code, _, errs := bundleCLI(t, "bundle", "verify", b, "--trusted-key", key+".pub"); code != exitFail || !strings.Contains(errs, "tampered") {
		t.Fatalf("tampered verify = %d %s", code, errs)
	}
	if code, _, errs := bundleCLI(t, "bundle", "sign", b, "--key", key); code != exitFail || !strings.Contains(errs, "sha256 mismatch") {
		t.Fatalf("signing a bundle whose pin is stale = %d %s", code, errs)
	}
}
