package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
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
	Group        string          `json:"group"` // the source group: a calib fold holds whole groups
	line         int             // in its file, from 1
}

// HeldoutExamples maps the records of held-out files (data/heldout/calib.jsonl) to labelled
// training texts. A benign record gives the texts the detector stage scores at serve time,
// every one as benign: scan.Texts with the stage's defaults (prose filter, 512-byte windows)
// over the record's call (request phase) or its tool output (response phase). An attack record
// gives one text, its own field (`text`) whole, under its label, when the stage reads it
// (scan.Prose, at least the stage's min_bytes): not its windows, most of which hold no attack
// (a long jailbreak's role-play), and not the call's other arguments, which are filler
// tools/heldout wrote. File order, then document order; within a file, a text seen before is
// not added again.
//
// files is comma-separated; each is a path, or a path and "@" and the record kinds to train on
// joined by "+" (data/heldout/wide/calib.jsonl@prose+doc_output+url: only those kinds'
// records; HeldoutSpec). The i-th file's examples have Part i, so each file is capped on its
// own (capHeldout). The result goes in Config.Heldout; labels are the model's (an unknown
// label is an error).
func HeldoutExamples(files string, labels []string) ([]Example, error) {
	var all []Example
	for i, spec := range strings.Split(files, ",") {
		path, kinds := HeldoutSpec(spec)
		recs, err := readHeldout(path)
		if err != nil {
			return nil, err
		}
		ex, err := heldoutExamples(path, filterKinds(recs, kinds), labels)
		if err != nil {
			return nil, err
		}
		for j := range ex {
			ex[j].Part = i
		}
		all = append(all, ex...)
	}
	return all, nil
}

// HeldoutSpec splits a held-out file named as HeldoutExamples takes it ("path" or
// "path@kind+kind") into its path and the kinds trained on (nil = every kind).
func HeldoutSpec(spec string) (path string, kinds []string) {
	path, ks, ok := strings.Cut(spec, "@")
	if ok {
		kinds = strings.Split(ks, "+")
	}
	return path, kinds
}

// filterKinds is recs whose kind is one of kinds (all of recs when kinds is nil).
func filterKinds(recs []heldoutRecord, kinds []string) []heldoutRecord {
	if kinds == nil {
		return recs
	}
	var out []heldoutRecord
	for _, r := range recs {
		if slices.Contains(kinds, r.Kind) {
			out = append(out, r)
		}
	}
	return out
}

// readHeldout reads a held-out file's records in file order.
func readHeldout(path string) ([]heldoutRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("extra heldout: %w", err)
	}
	defer f.Close()
	var recs []heldoutRecord
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
		r.line = line
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("extra heldout: %s: %w", path, err)
	}
	return recs, nil
}

// envelope is the envelope the detector stage reads for r: its call (request phase), or the
// call and its tool output as MCP text content (response phase).
func (r heldoutRecord) envelope() ([]byte, error) {
	env := map[string]any{"phase": abi.PhaseRequest, "method": "tools/call", "tool": r.Tool, "arguments": r.Arguments}
	if r.Phase == abi.PhaseResponse {
		env["phase"] = abi.PhaseResponse
		env["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": r.Result}}}
	}
	return json.Marshal(env)
}

// heldoutExamples is HeldoutExamples on records read.
func heldoutExamples(path string, recs []heldoutRecord, labels []string) ([]Example, error) {
	known := map[string]bool{}
	for _, l := range labels {
		known[l] = true
	}
	cfg, err := scan.ParseConfig(nil)
	if err != nil {
		return nil, err
	}
	var ex []Example
	seen := map[string]bool{}
	for _, r := range recs {
		if !known[r.Label] {
			return nil, fmt.Errorf("extra heldout: %s:%d: label %q is not one of the model's labels %v", path, r.line, r.Label, labels)
		}
		category := "heldout_" + r.Kind
		if r.Label != BenignLabel {
			// The attack's own field, whole, when the stage reads it (prose, long enough):
			// not its windows. A window of a benign text is benign, but most windows of a long
			// jailbreak are role-play with no attack in them, and labelled as the attack they
			// taught the model that ordinary words are one (issue 26: "Please provide your
			// information" scored 0.96 as prompt_injection, 0.05 before).
			if len(r.Text) < cfg.MinBytes || !scan.Prose(r.Text) || seen[r.Text] {
				continue
			}
			seen[r.Text] = true
			ex = append(ex, Example{Text: r.Text, Label: r.Label, Category: category, HardNegative: r.HardNegative})
			continue
		}
		raw, err := r.envelope()
		if err != nil {
			return nil, err
		}
		for _, t := range scan.Texts(raw, cfg) {
			if seen[t.Value] {
				continue
			}
			seen[t.Value] = true
			ex = append(ex, Example{Text: t.Value, Label: BenignLabel, Category: category, HardNegative: r.HardNegative})
		}
	}
	return ex, nil
}
