package bundle_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestOnlyOnSampleKeepsNoInstance: a stage that runs only on sampled calls keeps no instance
// once Build has checked the bundle (describe, fixtures), and the first sampled call starts the
// one it needs: the judge still decides it. A stage that runs on every call keeps its pool.
func TestOnlyOnSampleKeepsNoInstance(t *testing.T) {
	dir := t.TempDir()
	wasm, _ := testenv.ReadPlugin(t, "./plugins/rules")
	if err := os.WriteFile(filepath.Join(dir, "rules.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(map[string]any{"rules": []map[string]any{
		{"id": "sample-writes", "action": "sample", "reason": "a write", "when": map[string]any{"tool": []string{"write"}}}}})
	judge, _ := json.Marshal(map[string]any{"rules": []map[string]any{
		{"id": "judge-allows", "action": "allow", "reason": "judged"}}})
	y := "name: s\nversion: \"1\"\nabi: \"1.0\"\ndefault_action: allow\ncoverage: {uncovered: pass}\nstages:\n" +
		"  - name: first\n    plugin: rules.wasm\n    timeout: 2s\n    config: " + string(first) + "\n" +
		"  - name: judge\n    plugin: rules.wasm\n    timeout: 2s\n    needs_prior: true\n    resolves_sample: true\n    only_on_sample: true\n    config: " + string(judge) + "\n"
	b, err := buildManifest(t, dir, y)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Chain.CloseWhenDrained(context.Background())
	plugins := map[string]*plugin.Plugin{}
	for _, s := range b.Chain.Stages() {
		plugins[s.Name] = s.Plugin.(*plugin.Plugin)
	}
	if n := plugins["judge"].Stats().Instances.Load(); n != 0 {
		t.Fatalf("only_on_sample judge holds %d instances after Build, want 0", n)
	}
	if n := plugins["first"].Stats().Instances.Load(); n < 1 {
		t.Fatalf("the first stage holds %d instances after Build, want its pool", n)
	}
	checked := plugins["judge"].Stats().Calls.Load() // describe
	d, err := b.Chain.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "read"})
	if err != nil || d.Action != "allow" || plugins["judge"].Stats().Calls.Load() != checked {
		t.Fatalf("unsampled call: %s, %v; judge calls %d, %d before", d.Action, err, plugins["judge"].Stats().Calls.Load(), checked)
	}
	d, err = b.Chain.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "write"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != "allow" || d.Rule != "judge-allows" {
		t.Fatalf("sampled call decided %s by %q (%s), want allow by the judge's rule", d.Action, d.Rule, d.Reason)
	}
	if n := plugins["judge"].Stats().Instances.Load(); n != 1 {
		t.Fatalf("judge holds %d instances after its first call, want 1", n)
	}
}
