package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/plugin"
)

// AgentsDir is the agents test bundle's source folder (host/proxy/testdata/agents): a template
// bundle.yaml, rules.yaml for Claude Code's and MCP tools, and hook inputs under hook/.
func AgentsDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "host", "proxy", "testdata", "agents")
}

// AgentsRules returns the agents test bundle's rules.yaml.
func AgentsRules(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(AgentsDir(t), "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// AgentsBundle writes the agents test bundle into a temporary folder and returns it: the rules
// plugin built from source and pinned by its sha256, with rules as its rules.yaml (nil =
// AgentsRules).
func AgentsBundle(t testing.TB, rules []byte) string {
	t.Helper()
	wasm, sum := ReadPlugin(t, "./plugins/rules")
	tmpl, err := os.ReadFile(filepath.Join(AgentsDir(t), "bundle.yaml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	if rules == nil {
		rules = AgentsRules(t)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"bundle.yaml": []byte(strings.Replace(string(tmpl), "SHA256", sum, 1)),
		"rules.yaml":  rules,
		"rules.wasm":  wasm,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// BuildBundle builds the bundle folder dir (fixtures included) with a plugin runtime on
// CacheDir. Its chain closes when the test ends.
func BuildBundle(t testing.TB, dir string) *bundle.Bundle {
	t.Helper()
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Build(ctx, dir, bundle.BuildOptions{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Chain.CloseWhenDrained(ctx) })
	return b
}
