package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
)

// Record is one tool call of the held-out set. Text is the argument (or tool output) that
// carries the content; Arguments is the whole arguments object the call sends.
type Record struct {
	ID           string          `json:"id"`
	Label        string          `json:"label"`         // benign or an attack class (data/README.md)
	Kind         string          `json:"kind"`          // benign: shell, path, sql, url, prose, code; attack: its context
	HardNegative bool            `json:"hard_negative"` // benign text that looks like an attack
	Transport    string          `json:"transport"`     // hook (Claude Code built-in tool) or mcp (tools/call through the gateway)
	Server       string          `json:"server,omitempty"`
	Tool         string          `json:"tool"`
	Arguments    json.RawMessage `json:"arguments"`
	Phase        string          `json:"phase"`            // request, or response when Text is the tool's output
	Result       string          `json:"result,omitempty"` // response phase: the tool output text
	Cwd          string          `json:"cwd,omitempty"`
	Text         string          `json:"text"`
	Source       string          `json:"source"` // module@version/path:line or npm package@version/path:line
	Group        string          `json:"group"`  // records of one group stay in one split
	// Destructive marks SQL that drops, truncates or deletes without a WHERE: benign in a
	// migration, yet a SQL tool may rightly ask first. Counted apart in the report.
	Destructive bool `json:"destructive,omitempty"`
}

// Dropped is a candidate attack line left out, with why.
type Dropped struct {
	Label  string `json:"label"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
	Source string `json:"source"`
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// calibShare is the share of groups that go to calib/; the rest is test/.
const calibShare = 40

// splitOf puts whole groups in calib (calibShare %) or test by a salted hash.
func splitOf(group string) string {
	if hash64("palisade-heldout-v1/"+group)%100 < calibShare {
		return "calib"
	}
	return "test"
}

func sortRecords(rs []Record) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.ID < b.ID
	})
}

func writeJSONL[T any](path string, xs []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// mustJSON encodes v as a client would send it (no HTML escaping of <, > and &).
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
