package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/examples"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"gopkg.in/yaml.v3"
)

// TestPluginsInFiveLanguages loads the Go, Rust, C, AssemblyScript and WAT example plugins as
// stages of one bundle in one gateway, sends each one's denying fixture through the gateway as
// a real MCP request, and checks the audit event shows that stage's decision.
func TestPluginsInFiveLanguages(t *testing.T) {
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	ctx := context.Background()
	type stage struct {
		Name         string         `yaml:"name"`
		Plugin       string         `yaml:"plugin"`
		SHA256       string         `yaml:"sha256"`
		Failure      string         `yaml:"failure"`
		Timeout      string         `yaml:"timeout"`
		MemoryPages  int            `yaml:"memory_pages"`
		Capabilities []string       `yaml:"capabilities,omitempty"`
		Match        map[string]any `yaml:"match"`
		Config       map[string]any `yaml:"config"`
	}
	man := map[string]any{"name": "five-languages", "version": "1", "default_action": "allow", "coverage": map[string]any{"uncovered": "pass"}}
	var stages []stage
	denying := map[string][]bundle.Fixture{} // the fixtures up to and including the first deny
	for _, ex := range examples.All {
		wasm, err := ex.Build(ctx, root, filepath.Join(dir, "build"))
		if err != nil {
			t.Fatalf("%s: %v", ex.Lang, err)
		}
		os.WriteFile(filepath.Join(dir, ex.Lang+".wasm"), wasm, 0o644)
		cfg, err := ex.Config(root)
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		json.Unmarshal([]byte(cfg["config"]), &c)
		stages = append(stages, stage{Name: ex.Lang, Plugin: ex.Lang + ".wasm", Failure: "open", Timeout: "5s", MemoryPages: 512,
			Capabilities: ex.Capabilities(), Match: map[string]any{"methods": []string{"tools/call", "resources/read"}}, Config: c})
		fs, err := bundle.ReadFixtures(filepath.Join(root, "examples", ex.Lang, "testdata", "fixtures"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Method != "tools/call" || len(f.Params) == 0 {
				continue
			}
			denying[ex.Lang] = append(denying[ex.Lang], f)
			if f.Expected == "deny" {
				break
			}
		}
		if n := len(denying[ex.Lang]); n == 0 || denying[ex.Lang][n-1].Expected != "deny" {
			t.Fatalf("%s has no denying tools/call fixture", ex.Lang)
		}
	}
	man["stages"] = stages
	y, _ := yaml.Marshal(man)
	os.WriteFile(filepath.Join(dir, "bundle.yaml"), y, 0o644)
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatal(err)
	}

	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	g := startGateway(t, ns.ClientURL(), dir, config.Upstream{Name: "go", URL: up})
	url := "http://" + g.Addr() + "/mcp"
	hdr := map[string]string{pmcp.HeaderProtocolVersion: "2025-03-26"}

	// A benign call passes every stage.
	status, m := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`, hdr)
	if status != 200 || m["result"] == nil {
		t.Fatalf("benign call: %d %v", status, m)
	}
	sent := 1
	for i, ex := range examples.All {
		for j, f := range denying[ex.Lang] {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 100*i + j + 10, "method": f.Method, "params": json.RawMessage(f.Params)})
			status, m := post(t, url, string(body), hdr)
			sent++
			if f.Expected == "deny" && (status != 200 || errCode(m) != pmcp.CodeDenied) {
				t.Fatalf("%s fixture %s: %d %v", ex.Lang, f.Name, status, m)
			}
		}
	}
	evs := events(t, ns.ClientURL(), sent)
	if len(evs) < sent {
		t.Fatalf("%d audit events", len(evs))
	}
	denies := map[string]bool{}
	for _, ev := range evs {
		if ev.Action == "allow" && ev.Tool == "echo" {
			if len(ev.Stages) != len(examples.All) {
				t.Errorf("benign call: %d stage results, want %d: %+v", len(ev.Stages), len(examples.All), ev.Stages)
			}
			for _, s := range ev.Stages {
				if s.Error != "" {
					t.Errorf("stage %s failed on a benign call: %s", s.Stage, s.Error)
				}
			}
			continue
		}
		for _, s := range ev.Stages {
			if s.Action == "deny" {
				denies[s.Stage] = true
			}
		}
	}
	var missing []string
	for _, ex := range examples.All {
		if !denies[ex.Lang] {
			missing = append(missing, ex.Lang)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("no audit event shows a deny by %s", strings.Join(missing, ", "))
	}
	t.Logf("decisions by stage in audit: %v", fmt.Sprint(denies))
}
