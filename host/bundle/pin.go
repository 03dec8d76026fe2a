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

// Pin fills each stage's sha256 in dir/bundle.yaml from the plugin file it names, keeping the
// rest of the file (comments, order) as written. It returns the stages whose pin changed.
// The manifest is validated after pinning.
func Pin(dir string) (changed []string, err error) {
	p := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("bundle pin: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("bundle pin: bundle.yaml: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("bundle pin: bundle.yaml is not a mapping")
	}
	stages := mapValue(doc.Content[0], "stages")
	if stages == nil || stages.Kind != yaml.SequenceNode {
		return nil, &FieldError{Path: "stages", Err: fmt.Errorf("a list of stages is required")}
	}
	for i, st := range stages.Content {
		if st.Kind != yaml.MappingNode {
			return nil, &FieldError{Path: fmt.Sprintf("stages[%d]", i), Err: fmt.Errorf("not a mapping")}
		}
		pl := mapValue(st, "plugin")
		if pl == nil || pl.Value == "" {
			return nil, &FieldError{Path: fmt.Sprintf("stages[%d].plugin", i), Err: fmt.Errorf("required")}
		}
		wasm, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(pl.Value)))
		if err != nil {
			return nil, &FieldError{Path: fmt.Sprintf("stages[%d].plugin", i), Err: err}
		}
		sum := sha256.Sum256(wasm)
		h := hex.EncodeToString(sum[:])
		name := pl.Value
		if n := mapValue(st, "name"); n != nil {
			name = n.Value
		}
		if v := mapValue(st, "sha256"); v != nil {
			if v.Value != h {
				v.Value, v.Tag, v.Style = h, "!!str", 0
				changed = append(changed, name)
			}
			continue
		}
		// Insert sha256 right after plugin.
		for j := 0; j+1 < len(st.Content); j += 2 {
			if st.Content[j].Value == "plugin" {
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "sha256"}
				v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: h}
				st.Content = append(st.Content[:j+2], append([]*yaml.Node{k, v}, st.Content[j+2:]...)...)
				break
			}
		}
		changed = append(changed, name)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("bundle pin: encode: %w", err)
	}
	if _, err := ParseManifest(buf.Bytes()); err != nil {
		return nil, err
	}
	if len(changed) == 0 {
		return nil, nil
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("bundle pin: %w", err)
	}
	return changed, nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
