package conformance_test

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
)

// wat assembles a WAT file with wabt's wat2wasm (installed by make setup-sdk).
func wat(t *testing.T, path string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("wat2wasm not installed (run make setup-sdk)")
		}
		t.Skip("wat2wasm not installed (make setup-sdk; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal)")
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	if msg, err := exec.Command("wat2wasm", path, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", path, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runtime(t *testing.T) *plugin.Runtime {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

func check(t *testing.T, rep conformance.Report, name string) conformance.Result {
	t.Helper()
	for _, c := range append(rep.Checks, rep.Fixtures...) {
		if c.Name == name {
			return c
		}
	}
	var sb strings.Builder
	rep.WriteText(&sb)
	t.Fatalf("no check %q in report:\n%s", name, sb.String())
	return conformance.Result{}
}

func TestMinimalPluginConforms(t *testing.T) {
	rep, err := conformance.Check(context.Background(), runtime(t), wat(t, "../../sdk/wat/minimal.wat"), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.WriteText(&sb)
	if !rep.Passed() {
		t.Fatalf("minimal plugin failed:\n%s", sb.String())
	}
	if rep.Describe != nil {
		t.Errorf("describe = %+v; minimal.wat exports none", rep.Describe)
	}
	// Empty input is answered with an error return, which counts as surviving.
	if c := check(t, rep, "survives empty input"); !c.OK {
		t.Errorf("empty input: %+v", c)
	}
	if !strings.Contains(sb.String(), "passed") {
		t.Errorf("text report has no summary:\n%s", sb.String())
	}
}

func TestFixtures(t *testing.T) {
	rep, err := conformance.Check(context.Background(), runtime(t), wat(t, "../../sdk/wat/minimal.wat"),
		conformance.Options{Fixtures: "testdata/fixtures-minimal"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Fixtures) != 2 {
		t.Fatalf("fixtures = %+v, want 2", rep.Fixtures)
	}
	if c := check(t, rep, "fixture 01-none"); !c.OK {
		t.Errorf("01-none: %+v", c)
	}
	c := check(t, rep, "fixture expects deny but gets none")
	if c.OK || !strings.Contains(c.Detail, "got none, want deny") {
		t.Errorf("wrong expectation passed or said the wrong thing: %+v", c)
	}
	if rep.Passed() || rep.Failures() != 1 {
		t.Errorf("Passed = %v, Failures = %d; want false, 1", rep.Passed(), rep.Failures())
	}
}

func TestBrokenPlugins(t *testing.T) {
	rt := runtime(t)
	for _, tc := range []struct {
		file    string
		failing []string // checks that must fail
		passing []string // checks that must pass
	}{
		{"no-evaluate.wat", []string{"exports evaluate"}, nil},
		{"traps.wat", []string{"verdict for tools/call", "survives empty input", "survives a 4 MiB envelope"}, []string{"exports evaluate"}},
		{"bad-output.wat", []string{"describe", "verdict for tools/call", "survives malformed JSON"}, []string{"exports evaluate"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rep, err := conformance.Check(context.Background(), rt, wat(t, filepath.Join("testdata", tc.file)), conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed() {
				t.Fatal("a broken plugin passed")
			}
			for _, n := range tc.failing {
				if c := check(t, rep, n); c.OK {
					t.Errorf("%s passed", n)
				}
			}
			for _, n := range tc.passing {
				if c := check(t, rep, n); !c.OK {
					t.Errorf("%s failed: %s", n, c.Detail)
				}
			}
		})
	}
}

func TestNotWasm(t *testing.T) {
	_, err := conformance.Check(context.Background(), runtime(t), []byte("not wasm"), conformance.Options{})
	if !errors.Is(err, conformance.ErrNotLoadable) {
		t.Errorf("err = %v, want ErrNotLoadable", err)
	}
}

func TestLoadFixturesErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conformance.LoadFixtures(dir); err == nil {
		t.Error("an empty folder loaded")
	}
	write("a.json", `{"method":"tools/call","expected":"perhaps"}`)
	if _, err := conformance.LoadFixtures(dir); err == nil || !strings.Contains(err.Error(), "not an action") {
		t.Errorf("bad action: %v", err)
	}
	write("a.json", `{"expected":"deny"}`)
	if _, err := conformance.LoadFixtures(dir); err == nil {
		t.Error("a fixture without envelope or method loaded")
	}
	write("a.json", `{"method":"tools/call","params":{"name":"x","arguments":{"k":1}},"expected":"deny"}`)
	fx, err := conformance.LoadFixtures(dir)
	if err != nil || len(fx) != 1 || fx[0].Name != "a" {
		t.Fatalf("LoadFixtures = %+v, %v", fx, err)
	}
	env, err := fx[0].EnvelopeOf()
	if err != nil || !strings.Contains(string(env), `"tool":"x"`) || !strings.Contains(string(env), `"arguments":{"k":1}`) {
		t.Errorf("EnvelopeOf = %s, %v", env, err)
	}
}

// TestMinimalExtismPluginConforms: a hand-written Extism plugin (the compatibility path) passes
// the same checks as one on the direct convention.
func TestMinimalExtismPluginConforms(t *testing.T) {
	rep, err := conformance.Check(context.Background(), runtime(t), wat(t, "../plugin/testdata/extism_minimal.wat"), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.WriteText(&sb)
	if !rep.Passed() {
		t.Fatalf("Extism minimal plugin failed:\n%s", sb.String())
	}
	if c := check(t, rep, "survives empty input"); !c.OK {
		t.Errorf("empty input: %+v", c)
	}
}
