package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkBOM validates the shape a consumer relies on: CycloneDX 1.5, a described component, and
// components that each have a name, a version and a pkg:golang purl naming both.
func checkBOM(t *testing.T, b []byte, wantMain string, wantDeps ...string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if doc["bomFormat"] != "CycloneDX" || doc["specVersion"] != "1.5" {
		t.Fatalf("bomFormat %v specVersion %v", doc["bomFormat"], doc["specVersion"])
	}
	if s, _ := doc["serialNumber"].(string); !strings.HasPrefix(s, "urn:uuid:") || len(s) != len("urn:uuid:")+36 {
		t.Errorf("serialNumber %q", s)
	}
	meta, _ := doc["metadata"].(map[string]any)
	top, _ := meta["component"].(map[string]any)
	if top["name"] != wantMain || top["type"] != "application" {
		t.Errorf("metadata.component %v, want application %s", top, wantMain)
	}
	comps, _ := doc["components"].([]any)
	if len(comps) < len(wantDeps) {
		t.Fatalf("%d components", len(comps))
	}
	names := map[string]bool{}
	for i, c := range comps {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		version, _ := m["version"].(string)
		purl, _ := m["purl"].(string)
		if name == "" || version == "" || purl == "" {
			t.Errorf("components[%d] lacks name, version or purl: %v", i, m)
			continue
		}
		if !strings.HasPrefix(purl, "pkg:golang/") || !strings.Contains(purl, "@") {
			t.Errorf("components[%d] purl %q is not pkg:golang/PATH@VERSION", i, purl)
		}
		if m["bom-ref"] != purl {
			t.Errorf("components[%d] bom-ref %v, want its purl", i, m["bom-ref"])
		}
		names[name] = true
	}
	for _, d := range wantDeps {
		if !names[d] {
			t.Errorf("no component %s", d)
		}
	}
	deps, _ := doc["dependencies"].([]any)
	if len(deps) != 1 {
		t.Fatalf("dependencies %v", deps)
	}
	if on, _ := deps[0].(map[string]any)["dependsOn"].([]any); len(on) != len(comps) {
		t.Errorf("main depends on %d refs, %d components", len(on), len(comps))
	}
}

func TestModuleSBOM(t *testing.T) {
	out := filepath.Join(t.TempDir(), "module.cdx.json")
	var stderr bytes.Buffer
	if rc := run([]string{"-mod", "../..", "-o", out}, os.Stdout, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Direct dependencies of this module from go.mod.
	checkBOM(t, b, "github.com/added060/palisade",
		"github.com/nats-io/nats-server/v2", "github.com/prometheus/client_golang", "github.com/extism/go-sdk")
	var again bytes.Buffer
	if rc := run([]string{"-mod", "../.."}, &again, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	if !bytes.Equal(b, again.Bytes()) {
		t.Error("two runs on the same module differ: the SBOM is not deterministic")
	}
}

// TestBinarySBOM reads the build info of this test binary, which links this package's imports.
func TestBinarySBOM(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"-bin", exe, "-name", "sbom-test", "-version", "v9.9.9"}, &stdout, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	checkBOM(t, stdout.Bytes(), "sbom-test", "stdlib")
	if !strings.Contains(stdout.String(), `"purl": "pkg:golang/sbom-test@v9.9.9"`) {
		t.Error("-version not used for the described component")
	}
	if !strings.Contains(stdout.String(), `"timestamp": "2023-11-14T22:13:20Z"`) {
		t.Error("SOURCE_DATE_EPOCH not used as the timestamp")
	}
}

func TestPURL(t *testing.T) {
	for _, tc := range []struct{ path, version, want string }{
		{"github.com/a/b", "v1.2.3", "pkg:golang/github.com/a/b@v1.2.3"},
		{"github.com/a/b/v2", "v2.0.0+incompatible", "pkg:golang/github.com/a/b/v2@v2.0.0%2Bincompatible"},
		{"stdlib", "go1.26.0", "pkg:golang/stdlib@go1.26.0"},
		{"example.com/x", "", "pkg:golang/example.com/x"},
	} {
		t.Run(tc.path+"@"+tc.version, func(t *testing.T) {
			if got := PURL(tc.path, tc.version); got != tc.want {
				t.Errorf("PURL(%q, %q) = %q, want %q", tc.path, tc.version, got, tc.want)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	if rc := run(nil, os.Stdout, &stderr); rc != 2 {
		t.Errorf("no flags: rc %d, want 2", rc)
	}
}
