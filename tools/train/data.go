package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// Example is one labelled line of data/split/*.jsonl.
type Example struct {
	Text         string `json:"text"`
	Label        string `json:"label"`
	Category     string `json:"category,omitempty"`
	HardNegative bool   `json:"hard_negative,omitempty"`
}

// BenignLabel is the label meaning "no attack".
const BenignLabel = "benign"

// readExamples reads a JSONL file of examples in file order.
func readExamples(path string) ([]Example, error) {
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

// labelsOf returns benign first, then the other labels sorted: a fixed order
// that does not depend on the file's order.
func labelsOf(ex []Example) []string {
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
