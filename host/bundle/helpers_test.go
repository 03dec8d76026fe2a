package bundle_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

// stageDef is one rules stage: its name and the rules (id → action) it holds.
type stageDef struct {
	name   string
	plugin string // package to build; "" = ./plugins/rules
	rules  [][2]string
}

// writeBundle writes a bundle folder: bundle.yaml, plugins/*.wasm (pinned), fixtures.
func writeBundle(t testing.TB, dir, name, version string, stages []stageDef, expect string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	var y strings.Builder
	fmt.Fprintf(&y, "name: %s\nversion: %s\nabi: \"1.0\"\ndefault_action: deny\ncoverage: {uncovered: pass}\n", name, version)
	if expect != "" {
		y.WriteString("fixtures: fixtures\n")
	}
	y.WriteString("stages:\n")
	for _, s := range stages {
		pkg := s.plugin
		if pkg == "" {
			pkg = "./plugins/rules"
		}
		wasm, _ := testenv.ReadPlugin(t, pkg)
		file := "plugins/" + filepath.Base(pkg) + ".wasm"
		if err := os.WriteFile(filepath.Join(dir, file), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		var rules []map[string]any
		for _, r := range s.rules {
			rules = append(rules, map[string]any{"id": r[0], "action": r[1], "reason": name + " " + r[0]})
		}
		cfg, _ := json.Marshal(map[string]any{"rules": rules})
		fmt.Fprintf(&y, "  - name: %s\n    plugin: %s\n    timeout: 2s\n    pool: 4\n    config: %s\n", s.name, file, cfg)
	}
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatalf("pin %s: %v", dir, err)
	}
	if expect != "" {
		if err := os.MkdirAll(filepath.Join(dir, "fixtures"), 0o755); err != nil {
			t.Fatal(err)
		}
		fx := fmt.Sprintf(`[{"name":"call","method":"tools/call","params":{"name":"fs/read","arguments":{"path":"/tmp/x"}},"server":"files","expected":%q}]`, expect)
		if err := os.WriteFile(filepath.Join(dir, "fixtures", "basic.json"), []byte(fx), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// alpha allows every call (both stages allow); beta denies (stage two denies). Each rule id
// names its bundle, so a decision that mixed the two would show it.
func alphaStages() []stageDef {
	return []stageDef{{name: "s1", rules: [][2]string{{"alpha-1", "allow"}}}, {name: "s2", rules: [][2]string{{"alpha-2", "allow"}}}}
}

func betaStages() []stageDef {
	return []stageDef{{name: "s1", rules: [][2]string{{"beta-1", "allow"}}}, {name: "s2", rules: [][2]string{{"beta-2", "deny"}}}}
}

// events is a Recorder that keeps every event.
type events struct {
	mu sync.Mutex
	ev []audit.Event
}

func (e *events) Record(_ context.Context, ev audit.Event) {
	e.mu.Lock()
	e.ev = append(e.ev, ev)
	e.mu.Unlock()
}

func (e *events) kind(k string) []audit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []audit.Event
	for _, x := range e.ev {
		if x.Kind == k {
			out = append(out, x)
		}
	}
	return out
}

type fixture struct {
	rt     *plugin.Runtime
	active *chain.Active
	rec    *events
	pub    ed25519.PublicKey
	priv   ed25519.PrivateKey
	m      *bundle.Manager
	data   string
}

// sharedCacheDir is wazero's compilation cache shared by the test binaries of host/bundle,
// host/admin and host/gateway (entries are keyed by module hash, wazero version and CPU, and
// written by rename), so each plugin compiles once per machine: compiling a 3 MB Go module takes
// seconds, and a minute under the race detector.
var sharedCacheDir = filepath.Join(os.TempDir(), "palisade-test-wazero-cache")

var (
	sharedRT   *plugin.Runtime
	sharedOnce sync.Once
)

// newRuntime returns one runtime shared by the package's tests, so each plugin compiles once
// (the compilation cache is what activation relies on in production too).
func newRuntime(t testing.TB) *plugin.Runtime {
	t.Helper()
	sharedOnce.Do(func() {
		var err error
		sharedRT, err = plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: sharedCacheDir})
		if err != nil {
			t.Fatal(err)
		}
	})
	return sharedRT
}

// newFixture returns a manager that trusts one fresh key.
func newFixture(t testing.TB, allowUnsigned bool) *fixture {
	t.Helper()
	f := &fixture{rt: newRuntime(t), active: &chain.Active{}, rec: &events{}, data: t.TempDir()}
	var err error
	if f.pub, f.priv, err = bundle.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	f.m = f.manager(t, allowUnsigned)
	t.Cleanup(func() {
		if c := f.active.Swap(nil); c != nil {
			c.CloseWhenDrained(context.Background())
		}
		f.m.Close(context.Background())
	})
	return f
}

func (f *fixture) manager(t testing.TB, allowUnsigned bool) *bundle.Manager {
	t.Helper()
	m, err := bundle.NewManager(bundle.ManagerOptions{
		Active: f.active, Build: bundle.BuildOptions{Runtime: f.rt}, DataDir: f.data,
		Keys: bundle.KeySet{bundle.KeyID(f.pub): f.pub}, AllowUnsigned: allowUnsigned, Recorder: f.rec, Gateway: "gw-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// signed writes and signs a bundle with the fixture's key.
func (f *fixture) signed(t testing.TB, name, version string, stages []stageDef, expect string) string {
	t.Helper()
	dir := writeBundle(t, filepath.Join(t.TempDir(), name+"-"+version), name, version, stages, expect)
	if _, err := bundle.Sign(dir, f.priv); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildManifest writes y as dir's bundle.yaml (beside the plugins already there), pins it and
// builds it on a runtime of its own.
func buildManifest(t *testing.T, dir, y string) (*bundle.Bundle, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatal(err)
	}
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	return bundle.Build(context.Background(), dir, bundle.BuildOptions{Runtime: rt})
}
