package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The jsdev-extra set's sources are pinned with their licence and group, once each; none is a
// package the main, query or paths sets pack (npm-extra's may be reread for package.json only).
func TestJsdevExtraPackages(t *testing.T) {
	used := map[string]bool{}
	for _, p := range append(npmPackages, lunrPackage, elasticlunrPackage, liqePackage, luceneQPPackage,
		searchQPPackage, minisearchPackage, logicQueryPackage, banSensitiveFiles, ccSafetyNet) {
		used[p.Name] = true
	}
	groups := map[string]bool{"build": true, "test": true, "framework": true, "reactvue": true, "typescript": true, "lint": true,
		"cli": true, "db": true, "monorepo": true, "server": true, "util": true, "deploy": true}
	for _, p := range jsdevPackages {
		if used[p.Name] || p.Version == "" || p.License == "" || !groups[p.Group] {
			t.Errorf("%+v: used twice, or version, licence or group missing", p)
		}
		used[p.Name] = true
	}
	if n := len(jsdevPackages); n < 120 || n > 200 {
		t.Errorf("%d packages, want 120 to 200", n)
	}
}

// TestJsdevCandidates: every script is one whole command (not split at && or ;), the http(s)
// URLs of homepage, repository, bugs and funding are kept and the others left out with the
// reason, an empty script is left out, and README links are read only when asked.
func TestJsdevCandidates(t *testing.T) {
	dir := t.TempDir()
	pj := `{"name":"demo","scripts":{"build":"rimraf dist && tsc -p .","test":"jest --coverage; echo done","noop":" "},
	"homepage":"https://demo.dev/#readme","repository":{"type":"git","url":"git+https://github.com/o/demo.git"},
	"bugs":{"url":"https://github.com/o/demo/issues"},"funding":[{"type":"github","url":"https://github.com/sponsors/o"},"https://opencollective.com/demo"]}`
	readme := "# demo\n\n[![ci](https://img.shields.io/badge/ci-ok-green)](https://github.com/o/demo/actions?query=branch%3Amain)\n\nStart it and open http://localhost:3000/ or http://[::1]:3000/.\n"
	for f, s := range map[string]string{"package.json": pj, "README.md": readme} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := jsdevPackage{npmPackage{"@o/demo", "1.0.0", "MIT"}, "build"}
	got := func(readme bool) (map[string]string, []Dropped) {
		cs, left, err := jsdevCandidates(p, dir, readme)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, c := range cs {
			m[c.text] = c.kind
			if c.mod.Name != "o-demo" {
				t.Errorf("%q: folder %q, want o-demo", c.text, c.mod.Name)
			}
		}
		return m, left
	}
	want := map[string]string{"rimraf dist && tsc -p .": "shell", "jest --coverage; echo done": "shell",
		"https://demo.dev/#readme": "url", "https://github.com/o/demo/issues": "url",
		"https://github.com/sponsors/o": "url", "https://opencollective.com/demo": "url"}
	m, left := got(false)
	if len(m) != len(want) {
		t.Errorf("got %v, want %v", m, want)
	}
	for text, kind := range want {
		if m[text] != kind {
			t.Errorf("%q: kind %q, want %q", text, m[text], kind)
		}
	}
	if len(left) != 2 || left[0].Reason != "empty script" || left[1].Text != "git+https://github.com/o/demo.git" {
		t.Errorf("left out %+v", left)
	}
	m, left = got(true)
	if len(left) != 3 || left[2].Text != "http://[::1" || left[2].Reason != "no host (a link cut short)" {
		t.Errorf("left out %+v", left)
	}
	for _, u := range []string{"https://img.shields.io/badge/ci-ok-green", "https://github.com/o/demo/actions?query=branch%3Amain", "http://localhost:3000/"} {
		if m[u] != "url" {
			t.Errorf("README link %q not kept: %v", u, m)
		}
	}
}

// TestJsdevHardNegatives: the rule fixed before the set met the chain.
func TestJsdevHardNegatives(t *testing.T) {
	for cmd, want := range map[string]bool{
		"rimraf dist && tsc -p .": true, "curl -fsSL https://example.com/x.json -o x.json": true,
		"git push --follow-tags origin main": true, "npm publish --access public": true, "docker compose up -d": true,
		"node -e \"require('fs').rmSync('dist',{recursive:true})\"": true, "npx np": true,
		"tsc -p .": false, "cross-env NODE_ENV=production webpack": false, "node --inspect server.js": false,
		"jest --coverage": false, "eslint . --fix": false,
	} {
		if got := jsdevHardShell.MatchString(cmd); got != want {
			t.Errorf("jsdevHardShell(%q) = %v, want %v", cmd, got, want)
		}
	}
	for u, want := range map[string]bool{
		"http://localhost:3000/": true, "http://127.0.0.1/x": true, "https://example.com:8443/": true,
		"https://example.com/docs/auth": true, "https://example.com/?token=x": true,
		"https://github.com/o/demo/issues": false, "https://img.shields.io/npm/v/demo.svg": false,
	} {
		if got := jsdevHardURL(u); got != want {
			t.Errorf("jsdevHardURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestJsdevExtraRecords: a known text is dropped, shell and url are placed as shell-extra and
// prose-extra place them, and the hard rules mark their records.
func TestJsdevExtraRecords(t *testing.T) {
	m := jsdevMod(jsdevPackages[0])
	c := func(kind, text string) candidate {
		return candidate{kind: kind, text: text, mod: m, rel: "package.json", source: kind + ":" + text, group: m.Path + "/package.json"}
	}
	cands := []candidate{c("shell", "webpack --mode production"), c("shell", "rimraf dist"), c("shell", "make test"),
		c("url", "https://webpack.js.org/"), c("url", "http://localhost:8080/"), c("prose", "not a kind of this set")}
	recs, dropped := jsdevExtraRecords(cands, map[string]bool{"make test": true})
	if dropped != 1 || len(recs) != 4 {
		t.Fatalf("dropped %d, %d records; want 1 and 4: %+v", dropped, len(recs), recs)
	}
	want := map[string]string{"shell": "/Bash request", "url": "fetch/fetch request"}
	for _, r := range recs {
		if got := r.Server + "/" + r.Tool + " " + r.Phase; got != want[r.Kind] || r.Label != "benign" {
			t.Errorf("%s placed as %s, want %s", r.Kind, got, want[r.Kind])
		}
		if hard := r.Text == "rimraf dist" || r.Text == "http://localhost:8080/"; r.HardNegative != hard {
			t.Errorf("%q: hard negative %v, want %v", r.Text, r.HardNegative, hard)
		}
		if r.Kind == "shell" && r.Cwd != "/home/dev/src/"+m.Name {
			t.Errorf("%q: cwd %q", r.Text, r.Cwd)
		}
	}
}

// TestJsdevExtraByteIdentical: the committed jsdev-extra set is what the generator writes (it
// packs 200 npm packages; skipped with -short, without npm, or when a pin cannot be packed).
func TestJsdevExtraByteIdentical(t *testing.T) {
	root := filepath.Join("..", "..")
	cache := filepath.Join(root, "build", "_heldout-src")
	if _, err := exec.LookPath("npm"); err != nil || testing.Short() {
		t.Skip("packs 200 npm packages: skipped with -short or without npm")
	}
	for _, p := range jsdevPackages {
		if _, err := fetchNPM(cache, p.npmPackage); err != nil {
			t.Skipf("pin not offered: %v", err)
		}
	}
	out := t.TempDir()
	var log bytes.Buffer
	if err := generateJsdevExtra(out, cache, jsdevExtraOthers(filepath.Join(root, "data", "heldout")), &log); err != nil {
		t.Fatal(err)
	}
	checkRegenerated(t, out, filepath.Join(root, "data", "heldout"), "jsdev-extra", "heldout-jsdev-extra")
	got, err := os.ReadFile(filepath.Join(out, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want, err := os.ReadFile(filepath.Join(root, "data", "heldout", "jsdev-extra", "dropped.jsonl")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("dropped.jsonl differs from data/heldout/jsdev-extra/dropped.jsonl (run make heldout-jsdev-extra): %v", err)
	}
}
