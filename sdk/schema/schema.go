package schema

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the schema files, named NAME.schema.json.
//
//go:embed *.schema.json
var FS embed.FS

// Names of the schemas in FS.
const (
	Envelope = "envelope"
	Verdict  = "verdict"
	Describe = "describe"
	Sample   = "sample"
	Infer    = "infer"
	KV       = "kv"
	Fixture  = "fixture"
)

// Names lists every schema in FS.
var Names = []string{Envelope, Verdict, Describe, Sample, Infer, KV, Fixture}

var (
	compileOnce sync.Once
	compiler    *jsonschema.Compiler
	compileErr  error
	cacheMu     sync.Mutex
	cache       = map[string]*jsonschema.Schema{}
)

const base = "https://palisade.dev/schema/abi/1/"

func load() {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, n := range Names {
		b, err := FS.ReadFile(n + ".schema.json")
		if err != nil {
			compileErr = fmt.Errorf("schema: read %s: %w", n, err)
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			compileErr = fmt.Errorf("schema: parse %s: %w", n, err)
			return
		}
		if err := c.AddResource(base+n+".schema.json", doc); err != nil {
			compileErr = fmt.Errorf("schema: add %s: %w", n, err)
			return
		}
	}
	compiler = c
}

// Compile returns the compiled schema for ref, which is a name from Names optionally followed by
// ".request" or ".response" for the host-function schemas ("kv.request"). Results are cached and
// safe for concurrent use.
func Compile(ref string) (*jsonschema.Schema, error) {
	compileOnce.Do(load)
	if compileErr != nil {
		return nil, compileErr
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if s, ok := cache[ref]; ok {
		return s, nil
	}
	name, part, _ := strings.Cut(ref, ".")
	loc := base + name + ".schema.json"
	if part != "" {
		loc += "#/$defs/" + part
	}
	s, err := compiler.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema: compile %s: %w", ref, err)
	}
	cache[ref] = s
	return s, nil
}

// Validate checks that doc (JSON text) is valid against the schema ref (see Compile).
func Validate(ref string, doc []byte) error {
	s, err := Compile(ref)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("schema: %s: not JSON: %w", ref, err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("schema: %s: %w", ref, err)
	}
	return nil
}
