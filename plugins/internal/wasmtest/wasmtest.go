// Package wasmtest builds first-party plugins for wasip1 and loads them through the real host
// runtime, for the plugins' own tests. One runtime per test binary, with the compilation cache
// the host tests share, so a module compiles once.
package wasmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/added060/palisade/host/plugin"
)

var (
	rtOnce sync.Once
	rt     *plugin.Runtime
	rtErr  error

	buildMu sync.Mutex
	built   = map[string][]byte{}
)

// Runtime returns the test binary's plugin runtime.
func Runtime(t testing.TB) *plugin.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "palisade-test-wazero-cache")
		rt, rtErr = plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: dir})
	})
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	return rt
}

// Build builds the Go package pkg (a path as `go build` takes it from the test's folder) as a
// wasip1 c-shared module named name.wasm, once per test binary, into $PALISADE_BUILD/plugins when
// set (else a temporary folder). PALISADE_<NAME>_WASM names a prebuilt module to use instead.
func Build(t testing.TB, pkg, name string) []byte {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := built[pkg]; ok {
		return b
	}
	if p := os.Getenv("PALISADE_" + strings.ToUpper(name) + "_WASM"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		built[pkg] = b
		return b
	}
	dir := os.Getenv("PALISADE_BUILD")
	if dir == "" {
		dir = t.TempDir()
	}
	out := filepath.Join(dir, "plugins", name+".wasm")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	built[pkg] = b
	return b
}
