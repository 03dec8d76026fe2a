package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Pin sets every stage's sha256 in dir/bundle.yaml to the hash of its plugin file, keeping the
// rest of the file (comments included). It returns the number of stages whose pin changed.
func Pin(dir string) (int, error) {
	path := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("bundle pin: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return 0, fmt.Errorf("bundle pin: %s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 0, fmt.Errorf("bundle pin: %s is not a mapping", path)
	}
	stages := mapValue(doc.Content[0], "stages")
	if stages == nil || stages.Kind != yaml.SequenceNode {
		return 0, fmt.Errorf("bundle pin: %s has no stages list", path)
	}
	changed := 0
	for i, st := range stages.Content {
		pl := mapValue(st, "plugin")
		if pl == nil {
			return 0, fmt.Errorf("bundle pin: stages[%d] has no plugin", i)
		}
		b, err := os.ReadFile(filepath.Join(dir, pl.Value))
		if err != nil {
			return 0, fmt.Errorf("bundle pin: stages[%d]: %w", i, err)
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		if cur := mapValue(st, "sha256"); cur != nil {
			if cur.Value != h {
				cur.Value, cur.Tag, cur.Style = h, "!!str", 0
				changed++
			}
			continue
		}
		st.Content = append(st.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: "sha256"},
			&yaml.Node{Kind: yaml.ScalarNode, Value: h, Tag: "!!str"})
		changed++
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return 0, err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return 0, fmt.Errorf("bundle pin: %w", err)
	}
	return changed, nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// CheckPins loads dir's manifest and checks every stage's plugin against its sha256 pin, as
// Build does, without compiling anything.
func CheckPins(dir string) (*Manifest, error) {
	m, err := LoadManifest(dir)
	if err != nil {
		return nil, err
	}
	for i, s := range m.Stages {
		wasm, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Plugin)))
		if err != nil {
			return nil, &FieldError{Path: fmt.Sprintf("stages[%d].plugin", i), Err: err}
		}
		sum := sha256.Sum256(wasm)
		if got := hex.EncodeToString(sum[:]); got != s.SHA256 {
			return nil, &FieldError{Path: fmt.Sprintf("stages[%d].sha256", i), Err: fmt.Errorf("%w: %s is %s, bundle.yaml pins %s", ErrHashMismatch, s.Plugin, got, s.SHA256)}
		}
	}
	return m, nil
}
