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
		{`{"name":"view","abi":"1.2","input":"view","view":1}`, ""},
		{`{"name":"json","abi":"1.2","input":"envelope"}`, ""},
		{`{"name":"view2","abi":"1.2","input":"view","view":2}`, ""},
		{`{"name":"view3","abi":"1.2","input":"view","view":3}`, "plugin asks for view layout 3; this host speaks view layouts 1 to 2: upgrade the gateway"},
		{`{"name":"view0","abi":"1.2","input":"view"}`, "plugin asks for view layout 0; this host speaks view layouts 1 to 2"},
		{`{"name":"tree","abi":"1.2","input":"tree"}`, `plugin asks for input "tree"`},
	} {
		t.Run(tc.describe, func(t *testing.T) {
			p, err := rt.Load(context.Background(), plugin.Spec{Name: "d", Wasm: describing(t, tc.describe), PoolSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			_, err = bundle.CheckDescribe(context.Background(), p)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("CheckDescribe = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestActivationRefusesViewVersion: a bundle whose stage asks for a view layout this host does
// not speak does not activate, and the error names the stage and the layout.
func TestActivationRefusesViewVersion(t *testing.T) {
	dir := t.TempDir()
	wasm := describing(t, `{"name":"futureview","abi":"1.2","input":"view","view":7}`)
	if err := os.WriteFile(filepath.Join(dir, "p.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	y := "name: v\nversion: \"1\"\ncoverage: {uncovered: pass}\nstages:\n  - name: scanner\n    plugin: p.wasm\n"
	b, err := buildManifest(t, dir, y)
	if err == nil {
		b.Chain.CloseWhenDrained(context.Background())
		t.Fatal("a stage asking for view layout 7 activated")
	}
	for _, want := range []string{"stages[0]", "stage scanner", "view layout 7", "view layouts 1 to 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Build error %q does not say %q", err, want)
		}
	}
}
