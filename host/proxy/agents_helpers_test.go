package proxy_test

import (
	"context"
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
	"github.com/added060/palisade/host/proxy"
)

// agentsBundleDir writes the agents test bundle (testdata/agents) with the freshly built rules
// plugin pinned by its sha256.
func agentsBundleDir(t testing.TB) string {
	t.Helper()
	wasm, sum := testenv.ReadPlugin(t, "./plugins/rules")
	dir := t.TempDir()
	tmpl, err := os.ReadFile("testdata/agents/bundle.yaml.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile("testdata/agents/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
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

// agentsEngine builds the agents test bundle and returns an engine recording into rec.
func agentsEngine(t testing.TB, rec proxy.Recorder) *proxy.Engine {
	t.Helper()
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: filepath.Join(os.TempDir(), "palisade-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Build(ctx, agentsBundleDir(t), bundle.BuildOptions{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	active := &chain.Active{}
	active.Swap(b.Chain)
	t.Cleanup(func() { b.Chain.CloseWhenDrained(ctx) })
	return proxy.NewEngine(proxy.EngineOptions{Active: active, Recorder: rec, Gateway: "test"})
}

// sink keeps the events it is given (the audit Publisher is exercised by the NATS tests).
type sink struct {
	mu  sync.Mutex
	evs []audit.Event
}

func (s *sink) Record(_ context.Context, ev audit.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev)
}

func (s *sink) events() []audit.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Event(nil), s.evs...)
}
