package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPluginNewAndTest(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("wat2wasm not installed")
		}
		t.Skip("wat2wasm not installed (make setup-sdk)")
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "allowlist.wasm")
	if out, err := exec.Command("wat2wasm", "../../examples/wat/allowlist.wat", "-o", wasm).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	env := &cliEnv{Stdout: &stdout, Stderr: &stderr}
	code := run(context.Background(), []string{"plugin", "test", wasm, "--fixtures", "../../examples/wat/testdata/fixtures",
		"--config", "../../examples/wat/testdata/config.json"}, env)
	if code != exitOK || !strings.Contains(stdout.String(), "fixture 02-get-env-denied: deny") {
		t.Fatalf("plugin test = %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	// Without the config every tool is denied, so the allow fixtures fail: exit 1.
	stdout.Reset()
	code = run(context.Background(), []string{"plugin", "test", "--fixtures", "../../examples/wat/testdata/fixtures", wasm}, env)
	if code != exitFail || !strings.Contains(stdout.String(), "FAIL fixture 01-echo-allowed") {
		t.Errorf("without config = %d\n%s", code, stdout.String())
	}

	stdout.Reset()
	proj := filepath.Join(dir, "proj")
	code = run(context.Background(), []string{"plugin", "new", "--lang", "c", "--dir", proj, "my-guard"}, env)
	if code != exitOK {
		t.Fatalf("plugin new = %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(proj, "plugin.c")); err != nil {
		t.Error(err)
	}
	if code := run(context.Background(), []string{"plugin", "new", "--lang", "cobol", "x"}, env); code != exitUsage {
		t.Errorf("unknown language = %d, want %d", code, exitUsage)
	}
}
