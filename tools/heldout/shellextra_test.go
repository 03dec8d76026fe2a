package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestScript: a script's simple command lines, continuations joined and heredoc bodies kept
// with the line that opens them; comments, blank lines, the shebang and shell syntax (if, for,
// case lines, function headers, braces) left out.
func TestScript(t *testing.T) {
	src := "#!/bin/sh\n" +
		"set -eu\n" +
		"\n" +
		"# a comment\n" +
		"install() {\n" +
		"  go build \\\n" +
		"    -o bin/app ./cmd/app\n" +
		"}\n" +
		"if [ -f go.mod ]; then\n" +
		"  go mod download\n" +
		"fi\n" +
		"case \"$1\" in\n" +
		"  test) go test ./... ;;\n" +
		"esac\n" +
		"cat > cfg.yaml <<EOF\n" +
		"if: not a keyword here\n" +
		"EOF\n" +
		"for f in *.go; do\n" +
		"  gofmt -l \"$f\"\n" +
		"done\n"
	type line struct {
		text string
		n    int
	}
	var got []line
	script(src, func(text string, n int) { got = append(got, line{text, n}) })
	want := []line{
		{"set -eu", 2},
		{"go build \\\n    -o bin/app ./cmd/app", 6},
		{"go mod download", 10},
		{"cat > cfg.yaml <<EOF\nif: not a keyword here\nEOF", 15},
		{"gofmt -l \"$f\"", 19},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestIsScript: shell scripts by extension, and Debian maintainer and package scripts by name.
func TestIsScript(t *testing.T) {
	for p, want := range map[string]bool{
		"hack/build.sh": true, "make/x.bash": true, "debian/postinst": true, "debian/app.prerm": true,
		"testdata/scripts/postinstall.sh": true, "scripts/preremove": true,
		"main.go": false, "Makefile": false, "docs/postinst.md": false, "install": false,
	} {
		if got := isScript(p); got != want {
			t.Errorf("isScript(%q) = %v, want %v", p, got, want)
		}
	}
}

// The shell-extra set's sources are in no other set, and each is pinned with its licence.
func TestShellExtraModulesAreNew(t *testing.T) {
	used := map[string]bool{libinjectionModule.Path: true}
	for _, m := range append(slices.Clone(goModules), wideModules...) {
		used[m.Path] = true
	}
	checkNewModules(t, shellExtraModules, used, "already a source of another held-out set")
}

// TestShellExtraByteIdentical: the committed shell-extra set is what the generator writes
// (it fetches 18 modules through the Go module proxy; skipped with -short).
func TestShellExtraByteIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches 18 Go modules")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := filepath.Join("..", "..")
	out := t.TempDir()
	others := []string{}
	for _, p := range []string{"calib.jsonl", "test.jsonl", "wide/calib.jsonl", "wide/test.jsonl"} {
		others = append(others, filepath.Join(root, "data", "heldout", p))
	}
	var log bytes.Buffer
	if err := generateShellExtra(out, others, &log); err != nil {
		t.Fatal(err)
	}
	checkRegenerated(t, out, filepath.Join(root, "data", "heldout"), "shell-extra", "heldout-shell-extra")
}

// checkRegenerated compares the calib.jsonl and COUNTS.md generated into out with the committed
// ones in heldout/set, naming the make target that regenerates them.
func checkRegenerated(t *testing.T, out, heldout, set, target string) {
	t.Helper()
	for _, f := range []string{"calib.jsonl", "COUNTS.md"} {
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(heldout, set, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: regenerated file differs from data/heldout/%s/%s (run make %s)", f, set, f, target)
		}
	}
}
