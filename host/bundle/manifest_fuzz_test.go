package bundle

import (
	"errors"
	"strings"
	"testing"
)

const goodManifest = `name: b
version: "1"
coverage: {uncovered: pass}
stages:
  - name: rules
    plugin: rules.wasm
    sha256: "0000000000000000000000000000000000000000000000000000000000000000"
    timeout: 100ms
`

func TestManifestValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct{ name, edit, path string }{
		{"no name", "name: b\n|name: \"\"\n", "name"},
		{"bad timeout", "timeout: 100ms|timeout: 2h", "stages[0].timeout"},
		{"bad phase", "timeout: 100ms|timeout: 100ms\n    phase: sideways", "stages[0].phase"},
		{"bad failure", "timeout: 100ms|timeout: 100ms\n    failure: maybe", "stages[0].failure"},
		{"only on sample without resolving", "timeout: 100ms|timeout: 100ms\n    only_on_sample: true", "stages[0].only_on_sample"},
		{"short sha", `"0000000000000000000000000000000000000000000000000000000000000000"|"00"`, "stages[0].sha256"},
		{"escape", "plugin: rules.wasm|plugin: ../rules.wasm", "stages[0].plugin"},
		{"capability", "timeout: 100ms|timeout: 100ms\n    capabilities: [teleport]", "stages[0].capabilities[0]"},
		{"default", "version: \"1\"|version: \"1\"\ndefault_action: perhaps", "default_action"},
		{"abi major", "version: \"1\"|version: \"1\"\nabi: \"2.0\"", "abi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to, _ := strings.Cut(tc.edit, "|")
			_, err := ParseManifest([]byte(strings.Replace(goodManifest, from, to, 1)))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("err = %v, want a FieldError at %s", err, tc.path)
			}
		})
	}
	if _, err := ParseManifest([]byte(goodManifest)); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseManifest([]byte(goodManifest + "surprise: 1\n")); err == nil {
		t.Fatal("unknown field accepted")
	}
}

// TestManifestDecodeNamesThePath checks a typo key, a value of the wrong type and a bad
// duration are reported at their YAML path (and line), not as a Go type or a bare time error.
func TestManifestDecodeNamesThePath(t *testing.T) {
	for _, tc := range []struct{ name, edit, path, msg string }{
		{"typo at the top", "stages:|stagse:", "stagse", `unknown field "stagse" (line 4)`},
		{"typo in a stage", "timeout: 100ms|timeuot: 100ms", "stages[0].timeuot", `unknown field "timeuot" (line 8)`},
		{"bad duration", "timeout: 100ms|timeout: sixty", "stages[0].timeout", `invalid duration "sixty"`},
		{"bad duration in a flow map", "    timeout: 100ms\n|    timeout: 100ms\n  - {name: b, plugin: b.wasm, timeout: sixty}\n", "stages[1].timeout", `invalid duration "sixty"`},
		{"wrong type", "timeout: 100ms|timeout: 100ms\n    pool: many", "stages[0].pool", "cannot unmarshal"},
		{"coverage phase", "coverage: {uncovered: pass}|coverage: {uncovered: pass, pass: [ping]}", "coverage.pass", "per phase"},
		{"coverage phase typo", "coverage: {uncovered: pass}|coverage: {uncovered: pass, pass: {requests: [ping]}}", "coverage.pass.requests", `unknown phase "requests"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to, _ := strings.Cut(tc.edit, "|")
			_, err := ParseManifest([]byte(strings.Replace(goodManifest, from, to, 1)))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want a FieldError at %s saying %s", err, tc.path, tc.msg)
			}
			if strings.Contains(err.Error(), "bundle.Manifest") || strings.Contains(err.Error(), "time: ") {
				t.Errorf("err = %v names a Go type or package", err)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("stages: {}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		if m.Name == "" || len(m.Stages) == 0 {
			t.Fatalf("accepted a manifest without name or stages: %+v", m)
		}
	})
}
