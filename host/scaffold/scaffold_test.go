package scaffold_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/conformance"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/host/scaffold"
)

var tools = map[string][]string{
	"go":             {"go", "make"},
	"rust":           {"/usr/bin/rustc", "make"},
	"c":              {"clang-14", "cc", "make"},
	"assemblyscript": {"npm", "node", "make"},
}

func need(t *testing.T, lang string) {
	for _, tool := range tools[lang] {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
				t.Fatalf("%s: %s not installed (run make setup-sdk)", lang, tool)
			}
			t.Skipf("%s: %s not installed (make setup-sdk; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal)", lang, tool)
		}
	}
}

func mk(t *testing.T, dir string, target string) {
	t.Helper()
	cmd := exec.Command("make", "-s", target)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make %s in %s: %v\n%s", target, dir, err, out)
	}
}

// TestNewBuildsAndConforms scaffolds a plugin in every language, builds it and runs its own tests
// with its Makefile, then loads it through the real host runtime: conformance and fixtures.
func TestNewBuildsAndConforms(t *testing.T) {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, lang := range scaffold.Langs {
		t.Run(lang, func(t *testing.T) {
			need(t, lang)
			name := "deny-tools-" + lang
			dir := filepath.Join(t.TempDir(), name)
			if err := scaffold.New(lang, name, dir); err != nil {
				t.Fatal(err)
			}
			want, err := scaffold.Files(lang)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range want {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("missing %s: %v", f, err)
				}
			}
			readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
			if !strings.Contains(string(readme), "# "+name) {
				t.Errorf("README does not name the plugin:\n%s", readme)
			}
			mk(t, dir, "build")
			mk(t, dir, "test")
			wasm, err := os.ReadFile(filepath.Join(dir, "build", name+".wasm"))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := os.ReadFile(filepath.Join(dir, "testdata", "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := conformance.Check(ctx, rt, wasm, conformance.Options{
				Fixtures: filepath.Join(dir, "testdata", "fixtures"),
				Config:   map[string]string{"config": string(cfg)},
			})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			rep.WriteText(&sb)
			if !rep.Passed() || len(rep.Fixtures) != 3 {
				t.Errorf("conformance:\n%s", sb.String())
			}
			if rep.Describe == nil || rep.Describe.Name != name {
				t.Errorf("describe = %+v, want name %s", rep.Describe, name)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, lang, plugin, dir string
		want                    error
	}{
		{"unknown language", "cobol", "p", t.TempDir(), scaffold.ErrLang},
		{"upper case name", "go", "Deny", t.TempDir(), scaffold.ErrName},
		{"path in name", "go", "../x", t.TempDir(), scaffold.ErrName},
		{"empty name", "c", "", t.TempDir(), scaffold.ErrName},
		{"dir not empty", "c", "p", full, scaffold.ErrNotEmpty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := scaffold.New(tc.lang, tc.plugin, tc.dir); !errors.Is(err, tc.want) {
				t.Errorf("New = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestVendoredSDKIsCurrent checks the vendored files are the SDK's own, byte for byte.
func TestVendoredSDKIsCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := scaffold.New("rust", "x", dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "palisade-sdk", "src", "json.rs"))
	want, _ := os.ReadFile("../../sdk/rust/src/json.rs")
	if len(want) == 0 || string(got) != string(want) {
		t.Error("vendored json.rs differs from sdk/rust/src/json.rs")
	}
}
