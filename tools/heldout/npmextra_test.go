package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"
)

// The npm-extra set's sources are pinned with their licence and group, once each, and none is
// a package another set packs.
func TestNpmExtraPackages(t *testing.T) {
	used := map[string]bool{}
	for _, p := range append(npmPackages, lunrPackage, elasticlunrPackage, liqePackage, luceneQPPackage,
		searchQPPackage, minisearchPackage, logicQueryPackage, banSensitiveFiles, ccSafetyNet) {
		used[p.Name] = true
	}
	groups := map[string]bool{"web": true, "security": true, "auth": true, "config": true, "db": true,
		"process": true, "html": true, "http": true, "tooling": true}
	for _, p := range npmExtraPackages {
		if used[p.Name] || p.Version == "" || p.License == "" || !groups[p.Group] {
			t.Errorf("%+v: used twice, or version, licence or group missing", p)
		}
		used[p.Name] = true
	}
}

// TestIsNpmDoc: a package's README and the Markdown under docs/, nothing else.
func TestIsNpmDoc(t *testing.T) {
	for rel, want := range map[string]bool{
		"README.md": true, "Readme.md": true, "docs/api.md": true, "docs/docs/api/Agent.md": true,
		"CHANGELOG.md": false, "lib/README.md": false, "docs/index.html": false, "node_modules/x/README.md": false,
	} {
		if got := isNpmDoc(rel); got != want {
			t.Errorf("isNpmDoc(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestNpmExtraRecords: prose, pages and shell commands are kept and placed as prose-extra and
// shell-extra place them, a known text is dropped, a page's URL is its package's npm page, and a
// hard group's records are hard negatives.
func TestNpmExtraRecords(t *testing.T) {
	var cands []candidate
	for _, x := range [][3]string{
		{"express", "prose", "Express is a fast, unopinionated, minimalist web framework for building small and large apps."},
		{"express", "prose", "This paragraph is already in another held-out set and must not be written here again."},
		{"express", "shell", "npm install express"},
		{"express", "url", "https://expressjs.com/"},
		{"shelljs", "doc_output", "# ShellJS\n\nPortable Unix shell commands for Node.js.\n"},
	} {
		m := goModule{Path: x[0], Version: "1.0.0", Name: x[0]}
		cands = append(cands, candidate{kind: x[1], text: x[2], mod: m, rel: "README.md", source: x[0] + "@1.0.0/README.md:1", group: x[0] + "/README.md"})
	}
	known := map[string]bool{"This paragraph is already in another held-out set and must not be written here again.": true}
	recs, dropped := npmExtraRecords(cands, known)
	if dropped != 1 || len(recs) != 3 {
		t.Fatalf("dropped %d, %d records; want 1 and 3: %+v", dropped, len(recs), recs)
	}
	want := map[string]string{"doc_output": "fetch/fetch response", "prose": "slack/post_message request", "shell": "/Bash request"}
	for _, r := range recs {
		if got := r.Server + "/" + r.Tool + " " + r.Phase; got != want[r.Kind] || r.Label != "benign" {
			t.Errorf("%s placed as %s, want %s", r.Kind, got, want[r.Kind])
		}
		if r.HardNegative != (r.Kind == "doc_output") {
			t.Errorf("%s: hard negative %v (only shelljs, a process package, is in a hard group)", r.Kind, r.HardNegative)
		}
	}
	if got := string(recs[0].Arguments); got != `{"url":"https://www.npmjs.com/package/shelljs/v/0.10.0"}` /* the pin's version */ {
		t.Errorf("page URL %s", got)
	}
}

// TestNpmExtraByteIdentical: the committed npm-extra set is what the generator writes (it packs
// 34 npm packages; skipped with -short, without npm, or when a pin cannot be packed).
func TestNpmExtraByteIdentical(t *testing.T) {
	root := filepath.Join("..", "..")
	cache := filepath.Join(root, "build", "_heldout-src")
	if _, err := exec.LookPath("npm"); err != nil || testing.Short() {
		t.Skip("packs 34 npm packages: skipped with -short or without npm")
	}
	for _, p := range npmExtraPackages {
		if _, err := fetchNPM(cache, p.npmPackage); err != nil {
			t.Skipf("pin not offered: %v", err)
		}
	}
	out := t.TempDir()
	var log bytes.Buffer
	if err := generateNpmExtra(out, cache, npmExtraOthers(filepath.Join(root, "data", "heldout")), &log); err != nil {
		t.Fatal(err)
	}
	checkRegenerated(t, out, filepath.Join(root, "data", "heldout"), "npm-extra", "heldout-npm-extra")
}
