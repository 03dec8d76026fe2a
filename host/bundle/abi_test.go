package bundle_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

// describing returns a direct-convention module whose describe answers d, assembled with
// wabt's wat2wasm (make setup-sdk); without it the test is skipped.
func describing(t *testing.T, d string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("wat2wasm not installed (run make setup-sdk)")
		}
		t.Skip("wat2wasm not installed (make setup-sdk; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal)")
	}
	src := `(module (memory (export "memory") 1)
  (data (i32.const 0) "` + strings.ReplaceAll(d, `"`, `\22`) + `")
  (func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "evaluate") (param i32) (result i64) (i64.const 0))
  (func (export "describe") (param i32) (result i64) (i64.const ` + strconv.Itoa(len(d)) + `)))`
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// TestActivationChecksDescribedABI: a plugin stating envelope schema 1.0 or 1.1 (what plugins
// built before and after the versions were split state) activates; one stating a newer minor or
// another major is refused, and the error says why.
func TestActivationChecksDescribedABI(t *testing.T) {
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		describe, want string // want: "" = accepted, else a substring of the error
	}{
		{`{"name":"old","abi":"1.0"}`, ""},
		{`{"name":"now","abi":"1.1"}`, ""},
		{`{"name":"none"}`, ""}, // no version stated: taken as 1.0
		{`{"name":"newer","abi":"1.3"}`, "plugin abi 1.3 is newer than the host's envelope schema 1.2"},
		{`{"name":"major","abi":"2.0"}`, "plugin abi 2.0: major 2 differs from the host's envelope schema 1.2"},
	} {
		t.Run(tc.describe, func(t *testing.T) {
			p, err := rt.Load(context.Background(), plugin.Spec{Name: "d", Wasm: describing(t, tc.describe), PoolSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			err = bundle.CheckDescribe(context.Background(), p)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("CheckDescribe = %v, want %q", err, tc.want)
			}
		})
	}
}
