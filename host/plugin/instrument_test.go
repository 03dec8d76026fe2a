package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildRules builds the rules plugin (a 4 MB Go module) for the instrumenter's tests.
func buildRules(t testing.TB) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rules.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./plugins/rules")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInstrumentIsDeterministicAndAddsTheExports(t *testing.T) {
	wasm := buildRules(t)
	a, err := instrument(wasm, stopByGlobal)
	if err != nil {
		t.Fatal(err)
	}
	b, err := instrument(wasm, stopByGlobal)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("instrument is not deterministic: the compilation cache would miss")
	}
	names, err := exportNames(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{stopExport, countExport, "evaluate", directAllocExport} {
		if _, ok := names[n]; !ok {
			t.Errorf("instrumented module lacks export %s", n)
		}
	}
	if _, err := instrument(a, stopByGlobal); err == nil {
		t.Error("instrumenting an instrumented module succeeded")
	}
}

func TestInstrumentRejectsGarbage(t *testing.T) {
	for _, tc := range []struct {
		name string
		wasm []byte
	}{
		{"empty", nil},
		{"not wasm", []byte("hello, world")},
		{"truncated section", []byte("\x00asm\x01\x00\x00\x00\x0a\x05\x01")},
		{"no memory", []byte("\x00asm\x01\x00\x00\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := instrument(tc.wasm, stopByGlobal); err == nil {
				t.Error("instrument accepted it")
			}
		})
	}
}

func BenchmarkInstrument(b *testing.B) {
	wasm := buildRules(b)
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := instrument(wasm, stopByGlobal); err != nil {
			b.Fatal(err)
		}
	}
}
