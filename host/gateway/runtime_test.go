package gateway_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/internal/testenv"
)

// TestStagesRunFromAnyDirectory: a binary with ONNX Runtime beside it (DIR/ort/, as `make build`
// lays out build/) runs the example bundle's detector from any working directory, with no
// PALISADE_BUILD or PALISADE_ONNXRUNTIME_LIB; a binary without it refuses the bundle, naming
// the stage, instead of passing its fixtures with the detector silently off.
func TestStagesRunFromAnyDirectory(t *testing.T) {
	lib := testenv.ONNXRuntime(t)
	bundleDir := testenv.ExampleBundle(t)
	bin, err := palisadeBinary()
	if err != nil {
		t.Fatal(err)
	}
	install := func(withRuntime bool) string {
		dir := t.TempDir()
		copyFile(t, bin, filepath.Join(dir, "palisade"), 0o755)
		if withRuntime {
			if err := os.MkdirAll(filepath.Join(dir, "ort"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(lib, filepath.Join(dir, "ort", infer.LibraryFile)); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, "palisade")
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, infer.LibraryEnv+"=") && !strings.HasPrefix(kv, "PALISADE_BUILD=") {
			env = append(env, kv)
		}
	}
	policyTest := func(bin string) (int, string) {
		cmd := exec.Command(bin, "policy", "test", "--bundle", bundleDir)
		cmd.Dir, cmd.Env = t.TempDir(), env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := policyTest(install(true)); code != 0 || strings.Contains(out, "unavailable") {
		t.Fatalf("with the runtime beside the binary: exit %d\n%s", code, out)
	}
	code, out := policyTest(install(false))
	if code == 0 || !strings.Contains(out, "stages[2]") || !strings.Contains(out, "detector cannot run") {
		t.Fatalf("without a runtime: exit %d, want a refusal naming the detector stage\n%s", code, out)
	}
	// doctor, from elsewhere, finds the runtime beside the binary.
	cmd := exec.Command(install(true), "doctor")
	cmd.Dir, cmd.Env = t.TempDir(), append(env, "PALISADE_DATA_DIR="+t.TempDir())
	if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), filepath.Join("ort", infer.LibraryFile)) {
		t.Fatalf("doctor does not show the runtime beside the binary:\n%s", out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
