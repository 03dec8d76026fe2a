package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/sdk/go/abi"
)

// heldoutRecord is what the trainer reads of a data/heldout record (tools/heldout writes them).
type heldoutRecord struct {
	ID           string          `json:"id"`
	Label        string          `json:"label"`
	Kind         string          `json:"kind"`
	HardNegative bool            `json:"hard_negative"`
	Tool         string          `json:"tool"`
	Arguments    json.RawMessage `json:"arguments"`
	Phase        string          `json:"phase"`
	Result       string          `json:"result"`
	Text         string          `json:"text"`
}

// HeldoutExamples maps the records of a held-out file (data/heldout/calib.jsonl) to labelled
// training texts, the texts the detector stage scores at serve time: scan.Texts with the
// stage's defaults (prose filter, 512-byte windows) over the record's call (request phase) or
// its tool output (response phase). A benign record gives every text it yields as benign. An
// attack record gives its label to the texts that are part of the attack's own field (its
// `text`), and nothing else: the other arguments of an attack call are filler tools/heldout
// wrote, not public text. File order, then document order; a text seen before is not added
// again. The result goes in Config.Heldout; labels are the model's (an unknown label is an
// error).
func HeldoutExamples(path string, labels []string) ([]Example, error) {
	known := map[string]bool{}
	for _, l := range labels {
		known[l] = true
	}
	cfg, err := scan.ParseConfig(nil)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("extra heldout: %w", err)
	}
	defer f.Close()
	var ex []Example
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r heldoutRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("extra heldout: %s:%d: %w", path, line, err)
		}
		if !known[r.Label] {
			return nil, fmt.Errorf("extra heldout: %s:%d: label %q is not one of the model's labels %v", path, line, r.Label, labels)
		}
		env := map[string]any{"phase": abi.PhaseRequest, "method": "tools/call", "tool": r.Tool, "arguments": r.Arguments}
		if r.Phase == abi.PhaseResponse {
			// The response envelope: the call's arguments and its output as MCP text content.
			env["phase"] = abi.PhaseResponse
			env["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": r.Result}}}
		}
		raw, err := json.Marshal(env)
		if err != nil {
			return nil, err
		}
		category := "heldout_" + r.Kind
		for _, t := range scan.Texts(raw, cfg) {
			label := r.Label
			if label != BenignLabel && (r.Text == "" || !strings.Contains(r.Text, t.Value)) {
				continue // an attack call's other arguments
			}
			if label != BenignLabel && r.Phase == abi.PhaseResponse && !strings.HasPrefix(t.Path, "result") {
				continue
			}
			if seen[t.Value] {
				continue
			}
			seen[t.Value] = true
			ex = append(ex, Example{Text: t.Value, Label: label, Category: category, HardNegative: r.HardNegative})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("extra heldout: %s: %w", path, err)
	}
	return ex, nil
}
