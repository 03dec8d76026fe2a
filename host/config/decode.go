package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode decodes the YAML document b into v strictly (yaml.v3 KnownFields): a key v's types do
// not declare, at any depth, is refused. An unknown key, a value of the wrong type or a bad
// duration comes back as a *FieldError naming its path ("approvals.on_timout",
// "upstreams[1].timeout"). An empty document leaves v alone.
func Decode(b []byte, v any) error {
	err := DecodeStrict(b, v)
	var fe *FieldError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("config: %w", err)
}

// DecodeStrict is Decode for any YAML file (bundle.yaml too): the error is a *FieldError
// naming the YAML path, or yaml.v3's own when the document does not parse. A type's
// UnmarshalYAML gets its error a path by returning a *yaml.TypeError whose message starts
// "line N: " (as Duration does), or "line N: column C: " to single out one of several values on
// a line (a flow mapping).
func DecodeStrict(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil {
		return err
	}
	msg := te.Errors[0]
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if p := keyPath(&root, "", line, m[2]); p != "" {
			return &FieldError{Path: p, Err: fmt.Errorf("unknown field %q (line %d)", m[2], line)}
		}
	}
	if m := atLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if p := valuePath(&root, line, col, m[3]); p != "" {
			return &FieldError{Path: p, Err: fmt.Errorf("%s (line %d)", m[3], line)}
		}
	}
	return err
}

// valuePath finds the field on line that msg is about: the key or value at col when col > 0,
// else the one whose value msg quotes (a flow mapping puts several on one line), else the first
// on the line; "" when none.
func valuePath(root *yaml.Node, line, col int, msg string) string {
	at := func(n *yaml.Node) bool {
		if n.Line != line {
			return false
		}
		if col > 0 {
			return n.Column == col
		}
		return n.Kind == yaml.ScalarNode && quotes(msg, n.Value)
	}
	var quoted string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if quoted != "" {
			return
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, val := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if at(val) || col > 0 && at(k) {
					quoted = p
					return
				}
				walk(val, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if at(c) {
					quoted = p
					return
				}
				walk(c, p)
			}
		}
	}
	walk(root, "")
	if quoted != "" {
		return quoted
	}
	return keyPath(root, "", line, "")
}

// quotes reports whether msg quotes v the way yaml.v3 ("`v`") or Go ("\"v\"") does.
func quotes(msg, v string) bool {
	return v != "" && (strings.Contains(msg, "`"+v+"`") || strings.Contains(msg, strconv.Quote(v)))
}

var (
	unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type`)
	atLine       = regexp.MustCompile(`^line (\d+): (?:column (\d+): )?(.*)$`)
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
