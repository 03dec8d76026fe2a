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

// Pin sets every stage's sha256 in dir/bundle.yaml to the hash of its plugin file, and every
// model's to the hash of its file, keeping the rest of the file (comments included). It returns
// the number of pins that changed.
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
	pin := func(what string, i int, st *yaml.Node, fileKey string) error {
		pl := mapValue(st, fileKey)
		if pl == nil {
			return fmt.Errorf("bundle pin: %s[%d] has no %s", what, i, fileKey)
		}
		b, err := os.ReadFile(filepath.Join(dir, pl.Value))
		if err != nil {
			return fmt.Errorf("bundle pin: %s[%d]: %w", what, i, err)
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		if cur := mapValue(st, "sha256"); cur != nil {
			if cur.Value != h {
				cur.Value, cur.Tag, cur.Style = h, "!!str", 0
				changed++
			}
			return nil
		}
		st.Content = append(st.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: "sha256"},
			&yaml.Node{Kind: yaml.ScalarNode, Value: h, Tag: "!!str"})
		changed++
		return nil
	}
	for i, st := range stages.Content {
		if err := pin("stages", i, st, "plugin"); err != nil {
			return 0, err
		}
	}
	if models := mapValue(doc.Content[0], "models"); models != nil && models.Kind == yaml.SequenceNode {
		for i, m := range models.Content {
			if f := mapValue(m, "file"); f == nil || f.Value == "" {
				continue // a remote-only (kserve) model
			}
			if err := pin("models", i, m, "file"); err != nil {
				return 0, err
			}
		}
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
