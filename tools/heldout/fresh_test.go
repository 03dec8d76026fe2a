package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoOf is the repository a module path lives in: owner and name on a code host, the first
// path element under a vanity domain (go.etcd.io/etcd/server/v3 is go.etcd.io/etcd's).
func repoOf(path string) string {
	parts := strings.Split(path, "/")
	n := 2
	switch parts[0] {
	case "github.com", "gitlab.com", "bitbucket.org", "codeberg.org":
		n = 3
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

func TestRepoOf(t *testing.T) {
	for path, want := range map[string]string{
		"go.etcd.io/etcd/server/v3":    "go.etcd.io/etcd",
		"go.etcd.io/etcd/v3":           "go.etcd.io/etcd",
		"github.com/anchore/grype":     "github.com/anchore/grype",
		"github.com/anchore/syft":      "github.com/anchore/syft",
		"github.com/zmap/zlint/v3":     "github.com/zmap/zlint",
		"gorm.io/gorm":                 "gorm.io/gorm",
		"sigs.k8s.io/kubebuilder/v4":   "sigs.k8s.io/kubebuilder",
		"github.com/securego/gosec/v2": "github.com/securego/gosec",
	} {
		if got := repoOf(path); got != want {
			t.Errorf("repoOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// The fresh set's sources are in no other set's list, nor in the repository of a module another
// set uses, and each is pinned with its licence.
func TestFreshModulesAreNew(t *testing.T) {
	used := map[string]bool{libinjectionModule.Path: true}
	repos := map[string]bool{repoOf(libinjectionModule.Path): true}
	for _, m := range slices.Concat(goModules, wideModules, shellExtraModules, queryExtraGoModules, proseExtraModules) {
		used[m.Path] = true
		repos[repoOf(m.Path)] = true
	}
	checkNewModules(t, freshModules, used, "already a source of another held-out set")
	for _, m := range freshModules {
		if repos[repoOf(m.Path)] {
			t.Errorf("%s is in %s, a repository another held-out set already uses", m.Path, repoOf(m.Path))
		}
	}
	// and the other sets' own checks cover the fresh list: no later set may reuse it
	for _, mods := range [][]goModule{goModules, wideModules, shellExtraModules, queryExtraGoModules, proseExtraModules} {
		fresh := map[string]bool{}
		for _, m := range freshModules {
			fresh[m.Path] = true
		}
		checkNewModules(t, mods, fresh, "a source of the fresh set too")
	}
}

// TestFreshSplitByModule: the split is by module, fixed in freshCalib, about half the modules
// each side, security tools on both; every record goes where its module's split says, so no
// module (source prefix) feeds both calib and test.
func TestFreshSplitByModule(t *testing.T) {
	paths := map[string]bool{}
	calib, sec := 0, map[string]int{}
	for _, m := range freshModules {
		paths[m.Path] = true
		s := freshSplit(Record{Source: m.Path + "@" + m.Version + "/README.md:1"})
		if s == "calib" {
			calib++
		}
		if securityModules[m.Path] {
			sec[s]++
		}
	}
	for p := range freshCalib {
		if !paths[p] {
			t.Errorf("freshCalib names %s, not a fresh module", p)
		}
	}
	if calib != len(freshModules)/2 {
		t.Errorf("%d of %d modules in calib, want half", calib, len(freshModules))
	}
	if sec["calib"] == 0 || sec["test"] == 0 {
		t.Errorf("security modules per split %v, want some on both sides", sec)
	}

	// Records of one module land in one split, whatever the file: the wide set's split by file
	// would put these two files of one module on different sides.
	m := freshModules[0]
	cands := []candidate{
		{kind: "prose", text: "Run the analyser on every package before you open a pull request.", mod: m, rel: "README.md", source: m.Path + "@" + m.Version + "/README.md:3", group: m.Path + "/README.md"},
		{kind: "shell", text: "make test", mod: m, rel: "docs/dev.md", source: m.Path + "@" + m.Version + "/docs/dev.md:9", group: m.Path + "/docs/dev.md"},
	}
	recs := placeBenign(cands)
	if freshSplit(recs[0]) != freshSplit(recs[1]) {
		t.Errorf("two files of %s in different splits", m.Path)
	}
	if recordModule(recs[1]) != m.Path {
		t.Errorf("recordModule = %q, want %q", recordModule(recs[1]), m.Path)
	}

	// The committed calib split holds calib modules' records only (its test split is never read
	// here: it is held out).
	f, err := os.Open(filepath.Join("..", "..", "data", "heldout", "fresh", "calib.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		n++
		if mod := recordModule(r); !freshCalib[mod] {
			t.Errorf("calib record %s is from %s, a test module", r.ID, mod)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("data/heldout/fresh/calib.jsonl is empty")
	}
}

// TestFreshByteIdentical: the committed fresh calib split and COUNTS.md are what the generator
// writes (it fetches 16 Go modules through the Go module proxy; skipped with -short).
func TestFreshByteIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches 16 Go modules")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out := t.TempDir()
	var log strings.Builder
	if err := generateFresh(out, &log); err != nil {
		t.Fatal(err)
	}
	checkRegenerated(t, out, filepath.Join("..", "..", "data", "heldout"), "fresh", "heldout-fresh")
}
