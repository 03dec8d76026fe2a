package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestEveryPackageIsTested: `make test` names its packages (Makefile's CORE_PKGS and
// NATIVE_PKGS, the mk/*.mk fragments); a package with tests that no pattern there covers would
// never run in CI. Lines that only benchmark or fuzz do not count.
func TestEveryPackageIsTested(t *testing.T) {
	files, _ := filepath.Glob("../mk/*.mk")
	files = append(files, "../Makefile")
	pat := regexp.MustCompile(`\./(?:host|cmd|sdk|plugins|tools|examples|deploy)(?:/[\w.\-]*)*(?:/\.\.\.)?/?`)
	seen := map[string]bool{}
	var patterns []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "-bench") || strings.Contains(line, "-fuzz") || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, p := range pat.FindAllString(line, -1) {
				if !seen[p] {
					seen[p] = true
					patterns = append(patterns, p)
				}
			}
		}
	}
	list := func(args ...string) map[string]bool {
		cmd := exec.Command("go", append([]string{"list", "-e", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}"}, args...)...)
		cmd.Dir = ".."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	covered := list(patterns...)
	var missing []string
	for p := range list("./host/...", "./cmd/...", "./sdk/...", "./plugins/...", "./tools/...", "./deploy/...") {
		if !covered[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("packages with tests that make test never runs (add them to CORE_PKGS or a fragment's test target): %s", strings.Join(missing, " "))
	}
}
