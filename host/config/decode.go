package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Decode decodes the YAML document b into v strictly (yaml.v3 KnownFields): a key v's types do
// not declare, at any depth, is refused. An unknown key or a value of the wrong type comes back
// as a *FieldError naming its path ("approvals.on_timout", "upstreams[1].timeout"). An empty
// document leaves v alone.
func Decode(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return fmt.Errorf("config: %w", err)
	}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil {
		return fmt.Errorf("config: %w", err)
	}
	msg := te.Errors[0]
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if p := keyPath(&root, "", line, m[2]); p != "" {
			return &FieldError{Path: p, Err: errors.New("unknown key")}
		}
	}
	if m := atLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if p := keyPath(&root, "", line, ""); p != "" {
			return &FieldError{Path: p, Err: errors.New(m[2])}
		}
	}
	return fmt.Errorf("config: %w", err)
}

var (
	unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type`)
	atLine       = regexp.MustCompile(`^line (\d+): (.*)$`)
)

// keyPath finds, under n, the mapping key on line named key (any key when key is ""), or the
// sequence item or value starting on line, and returns its dotted path; "" when none.
func keyPath(n *yaml.Node, path string, line int, key string) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := keyPath(c, path, line, key); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if k.Line == line && (key == "" || k.Value == key) {
				return p
			}
			if q := keyPath(val, p, line, key); q != "" {
				return q
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if q := keyPath(c, p, line, key); q != "" {
				return q
			}
			if key == "" && c.Line == line {
				return p
			}
		}
	case yaml.ScalarNode:
		if key == "" && n.Line == line {
			return path
		}
	}
	return ""
}
