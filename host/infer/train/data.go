package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Example is one labelled line of data/split/*.jsonl.
type Example struct {
	Text         string `json:"text"`
	Label        string `json:"label"`
	Category     string `json:"category,omitempty"`
	HardNegative bool   `json:"hard_negative,omitempty"`
	// Arguments is the whole tool call's arguments, when the split kept them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Part is, for a held-out example (Config.Heldout), the held-out file it came from, numbered
	// from 0 in the order HeldoutExamples was given them: each part is capped on its own
	// (capHeldout). Not read or written as JSON.
	Part int `json:"-"`
	// OnTop is, for a held-out example, that its file was given as one to add on top
	// (tools/train's -extra-heldout-on-top): left out of the class-balanced weights' counts
	// (Row.OnTop), so it adds to its class's weight instead of diluting the class's other
	// examples. Not read or written as JSON.
	OnTop bool `json:"-"`
}

// BenignLabel is the label meaning "no attack".
const BenignLabel = "benign"

// ReadExamples reads a JSONL file of examples in file order.
func ReadExamples(path string) ([]Example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read examples: %w", err)
	}
	defer f.Close()
	var out []Example
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Example
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if e.Label == "" {
			return nil, fmt.Errorf("%s:%d: no label", path, line)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// BenignExtras returns the extra benign training texts: every string value
// in the arguments of benign examples (other than the example's own text),
// then each line of the files, de-duplicated, in a fixed order.
func BenignExtras(ex []Example, files []string) ([]Example, error) {
	seen := map[string]bool{}
	for _, e := range ex {
		seen[e.Text] = true
	}
	var out []Example
	add := func(s, category string) {
		if s == "" || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, Example{Text: s, Label: BenignLabel, Category: category})
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			add(v, "argument")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		}
	}
	for _, e := range ex {
		if e.Label != BenignLabel || len(e.Arguments) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(e.Arguments, &v); err == nil {
			walk(v)
		}
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("extra benign: %w", err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if !strings.HasSuffix(f, ".jsonl") {
				add(strings.TrimSpace(line), "extra")
				continue
			}
			if strings.TrimSpace(line) == "" {
				continue
			}
			var e struct{ Text string }
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				return nil, fmt.Errorf("extra benign: %s:%d: %w", f, i+1, err)
			}
			add(e.Text, "extra")
		}
	}
	return out, nil
}

// LabelsOf returns benign first, then the other labels sorted: a fixed order
// that does not depend on the file's order.
func LabelsOf(ex []Example) []string {
	seen := map[string]bool{}
	for _, e := range ex {
		seen[e.Label] = true
	}
	var rest []string
	for l := range seen {
		if l != BenignLabel {
			rest = append(rest, l)
		}
	}
	slices.Sort(rest)
	return append([]string{BenignLabel}, rest...)
}

// countLabels counts examples per label.
func countLabels(ex []Example) map[string]int {
	m := map[string]int{}
	for _, e := range ex {
		m[e.Label]++
	}
	return m
}
