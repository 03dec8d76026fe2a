package examples_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/added060/palisade/host/conformance"
	"github.com/added060/palisade/host/plugin"
)

// example is one folder under examples/.
type example struct {
	lang  string
	tools []string // commands its build needs
	// describe is the name its describe export must return.
	describe string
}

var all = []example{
	{"go", []string{"go"}, "shellguard"},
	{"wat", []string{"wat2wasm"}, "allowlist"},
	{"c", []string{"clang-14"}, "pathguard"},
	{"rust", []string{"/usr/bin/rustc"}, "secrets"},
}

// requireToolchains is set by `make test-sdk` so a missing compiler fails instead of skipping.
var requireToolchains = os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1"

var (
	buildMu sync.Mutex
	built   = map[string][]byte{}
)

// build runs `make build` in the example's folder, as its README says, once per test binary.
func build(tb testing.TB, ex example) []byte {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := built[ex.lang]; ok {
		return b
	}
	for _, tool := range ex.tools {
		if _, err := exec.LookPath(tool); err != nil {
			if requireToolchains {
				tb.Fatalf("%s: %s not installed (run make setup-sdk)", ex.lang, tool)
			}
			tb.Skipf("%s: %s not installed (make setup-sdk installs it; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal)", ex.lang, tool)
		}
	}
	out := filepath.Join(outDir(tb), ex.lang+".wasm")
	cmd := exec.Command("make", "-s", "-C", ex.lang, "build", "OUT="+out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build %s: %v\n%s", ex.lang, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	built[ex.lang] = b
	return b
}

func outDir(tb testing.TB) string {
	dir := os.Getenv("PALISADE_BUILD")
	if dir == "" {
		dir = filepath.Join("..", "build")
	}
	dir, _ = filepath.Abs(filepath.Join(dir, "examples"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func config(tb testing.TB, ex example) map[string]string {
	b, err := os.ReadFile(filepath.Join(ex.lang, "testdata", "config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{"config": "{}"}
	}
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]string{"config": string(b)}
}

func newRuntime(tb testing.TB) *plugin.Runtime {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// TestExamples loads every example through the real host runtime and runs the conformance
// checks and the example's fixtures: exactly what `palisade plugin test` does.
func TestExamples(t *testing.T) {
	rt := newRuntime(t)
	for _, ex := range all {
		t.Run(ex.lang, func(t *testing.T) {
			wasm := build(t, ex)
			rep, err := conformance.Check(context.Background(), rt, wasm, conformance.Options{
				Fixtures: filepath.Join(ex.lang, "testdata", "fixtures"),
				Config:   config(t, ex),
			})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			rep.WriteText(&sb)
			if !rep.Passed() {
				t.Errorf("conformance failed:\n%s", sb.String())
			}
			if len(rep.Fixtures) < 3 {
				t.Errorf("only %d fixtures ran; each example needs at least 3", len(rep.Fixtures))
			}
			if rep.Describe == nil || rep.Describe.Name != ex.describe {
				t.Errorf("describe = %+v, want name %q", rep.Describe, ex.describe)
			}
			t.Log("\n" + sb.String())
		})
	}
}
