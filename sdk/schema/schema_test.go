package schema_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/schema"
)

// example is one fenced ```json block of sdk/ABI.md. The info string names the schema it must
// satisfy ("```json verdict", "```json kv.request"); a trailing "invalid" marks a counterexample
// that must be rejected.
type example struct {
	line    int
	ref     string
	invalid bool
	body    []byte
}

func extract(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var (
		out  []example
		cur  *example
		body bytes.Buffer
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trim, "```json"):
			fields := strings.Fields(strings.TrimPrefix(trim, "```"))
			cur = &example{line: n}
			if len(fields) > 1 {
				cur.ref = fields[1]
			}
			cur.invalid = len(fields) > 2 && fields[2] == "invalid"
			body.Reset()
		case cur != nil && trim == "```":
			cur.body = append([]byte(nil), body.Bytes()...)
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated json block", path, cur.line)
	}
	return out
}

func TestABIExamples(t *testing.T) {
	examples := extract(t, "../ABI.md")
	seen := map[string]bool{}
	for _, ex := range examples {
		t.Run(ex.ref+"@"+itoa(ex.line), func(t *testing.T) {
			if ex.ref == "" {
				t.Fatalf("ABI.md:%d: json block names no schema (write ```json verdict)", ex.line)
			}
			if !json.Valid(ex.body) {
				t.Fatalf("ABI.md:%d: not valid JSON:\n%s", ex.line, ex.body)
			}
			err := schema.Validate(ex.ref, ex.body)
			switch {
			case ex.invalid && err == nil:
				t.Errorf("ABI.md:%d: counterexample accepted by %s:\n%s", ex.line, ex.ref, ex.body)
			case !ex.invalid && err != nil:
				t.Errorf("ABI.md:%d: %v", ex.line, err)
			}
		})
		if !ex.invalid {
			seen[ex.ref] = true
		}
	}
	for _, want := range []string{
		"envelope", "verdict", "describe",
		"sample.request", "sample.response", "infer.request", "infer.response",
		"kv.request", "kv.response", "fixture",
	} {
		if !seen[want] {
			t.Errorf("ABI.md has no valid example for %s", want)
		}
	}
}

// TestGoTypes checks that what the shared Go types marshal to satisfies the schemas, so the Go SDK
// and the host cannot emit JSON the document forbids.
func TestGoTypes(t *testing.T) {
	for _, tc := range []struct {
		name, ref string
		v         any
	}{
		{"minimal verdict", "verdict", abi.Verdict{Action: abi.ActionAllow}},
		{"full verdict", "verdict", abi.Verdict{
			Action: abi.ActionDeny, Reason: "r", Rule: "x", Score: 0.5, Labels: []string{"a"},
			Evidence: []abi.Evidence{{Label: "a", Path: "arguments.p", Match: "m"}},
			Final:    true, Guidance: "g", Arguments: json.RawMessage(`{"a":1}`),
			Result: json.RawMessage(`{"content":[]}`), RequireToken: true, Fallback: "f",
			Metadata: json.RawMessage(`{"k":"v"}`),
		}},
		{"envelope", "envelope", abi.Envelope{
			ABI: abi.Version, ID: "01J", Phase: abi.PhaseRequest, Method: "tools/call",
			RequestID: json.RawMessage(`7`), Tool: "echo", Arguments: json.RawMessage(`{}`),
			Client: &abi.Client{Name: "c"}, Prior: []abi.Prior{{Stage: "s", Action: "allow"}},
		}},
		{"describe", "describe", abi.Describe{Name: "x", ABI: abi.Version, Phases: []string{"request"}}},
		{"kv request", "kv.request", abi.KVRequest{Op: "incr", Key: "k", Delta: 1, TTLMS: 1000}},
		{"kv response", "kv.response", abi.KVResponse{Found: true, Count: 2}},
		{"kv error", "kv.response", abi.KVResponse{Error: "capability not granted: kv"}},
		{"infer request", "infer.request", abi.InferRequest{Model: "m", Texts: []string{"t"}}},
		{"infer response", "infer.response", abi.InferResponse{Model: "m", Results: []abi.InferResult{{Label: "l", Score: 0.2}}}},
		{"sample request", "sample.request", abi.SampleRequest{Guidance: "g", Tool: "t"}},
		{"sample response", "sample.response", abi.SampleResponse{Decision: "deny", Confidence: 0.9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(tc.ref, b); err != nil {
				t.Errorf("%s: %v", b, err)
			}
		})
	}
}

// TestRejects shows the schemas are not vacuous: each row must fail validation.
func TestRejects(t *testing.T) {
	for _, tc := range []struct{ name, ref, doc string }{
		{"unknown action", "verdict", `{"action":"maybe"}`},
		{"no action", "verdict", `{"reason":"x"}`},
		{"score above 1", "verdict", `{"action":"deny","score":3}`},
		{"envelope without id", "envelope", `{"abi":"1.0","phase":"request","method":"x"}`},
		{"bad phase", "envelope", `{"abi":"1.0","id":"a","phase":"later","method":"x"}`},
		{"bad abi", "describe", `{"name":"x","abi":"one"}`},
		{"unknown capability", "describe", `{"name":"x","abi":"1.0","capabilities":["net"]}`},
		{"kv bad op", "kv.request", `{"op":"scan","key":"k"}`},
		{"infer no texts", "infer.request", `{"model":"m"}`},
		{"sample both", "sample.response", `{"decision":"allow","error":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := schema.Validate(tc.ref, []byte(tc.doc)); err == nil {
				t.Errorf("%s accepted %s", tc.ref, tc.doc)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestFixtureFiles validates every fixture file in the repository's examples and scaffold
// templates against fixture.schema.json.
func TestFixtureFiles(t *testing.T) {
	var files []string
	for _, pat := range []string{
		"../../examples/*/testdata/fixtures/*.json",
		"../../host/scaffold/templates/common/testdata/fixtures/*.json",
		"../../host/conformance/testdata/*/*.json",
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d fixture files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(schema.Fixture, b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
