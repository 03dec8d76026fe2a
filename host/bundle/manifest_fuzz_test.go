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
