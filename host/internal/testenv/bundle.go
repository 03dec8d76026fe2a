package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
)

// StageBundle copies the bundle folder src (relative to the repo root, e.g. "examples/bundle")
// into a temporary folder, builds each Go plugin named in plugins (bundle path → package, e.g.
// "plugins/rules.wasm" → "./plugins/rules") into it, pins the hashes and returns the folder.
func StageBundle(t testing.TB, src string, plugins map[string]string) string {
	t.Helper()
	return StageBundleWith(t, src, plugins, nil)
}

// StageBundleWith is StageBundle with extra files (bundle path → contents) added before pinning.
func StageBundleWith(t testing.TB, src string, plugins map[string]string, files map[string][]byte) string {
	t.Helper()
	root := RepoRoot(t)
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	from := filepath.Join(root, src)
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.HasSuffix(p, ".wasm") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, pkg := range plugins {
		b, _ := ReadPlugin(t, pkg)
		out := filepath.Join(dst, rel)
		os.MkdirAll(filepath.Dir(out), 0o755)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, b := range files {
		out := filepath.Join(dst, rel)
		os.MkdirAll(filepath.Dir(out), 0o755)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bundle.Pin(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// ExampleBundle stages examples/bundle with its first-party plugins built from source and the
// detector models trained by `make model` (ExampleModels).
func ExampleBundle(t testing.TB) string {
	t.Helper()
	return StageBundleWith(t, "examples/bundle", ExamplePlugins(), ExampleModels(t))
}

// ExampleModels maps the example bundle's model files to the detector models `make model`
// trains (build/models: detector-v1.onnx, and detector-long-v1.onnx for texts over the
// stage's long_min_bytes).
func ExampleModels(t testing.TB) map[string][]byte {
	t.Helper()
	ONNXRuntime(t)
	out := map[string][]byte{}
	for _, name := range []string{"detector-v1.onnx", "detector-long-v1.onnx"} {
		b, err := os.ReadFile(filepath.Join(RepoRoot(t), "build", "models", name))
		if err != nil {
			t.Fatalf("testenv: the example bundle needs the detector models: run `make model` (%v)", err)
		}
		out["models/"+name] = b
	}
	return out
}

// ExamplePlugins maps the example bundle's plugin files to their Go packages: its five stages
// run the first-party module, each in its role.
func ExamplePlugins() map[string]string {
	return map[string]string{"plugins/firstparty.wasm": "./plugins/firstparty"}
}

// ONNXRuntime points PALISADE_ONNXRUNTIME_LIB at the library `make setup-onnxruntime` fetched
// (unless the environment already names one) and fails the test when it is missing.
func ONNXRuntime(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PALISADE_ONNXRUNTIME_LIB"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p := filepath.Join(RepoRoot(t), "build", "ort", "libonnxruntime.so.1.24.1")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("testenv: ONNX Runtime library missing: run `make setup-onnxruntime` (%v)", err)
	}
	os.Setenv("PALISADE_ONNXRUNTIME_LIB", p)
	return p
}
