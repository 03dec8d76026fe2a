package detect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// splitRecord is one line of data/split/*.jsonl (tools/eval/score.Record).
type splitRecord struct {
	Text         string          `json:"text"`
	Label        string          `json:"label"`
	Category     string          `json:"category"`
	HardNegative bool            `json:"hard_negative"`
	Tool         string          `json:"tool"`
	Arguments    json.RawMessage `json:"arguments"`
}

// placement puts an attack of each category in a tool context where it is an attack (issue
// 12): command injection in a hostname, SQL injection in a search box, XSS in a comment body,
// traversal and sensitive paths in a file path, SSRF in a URL, prompt injection in a message.
var placement = map[string][2]string{
	"command_injection": {"ping", "host"},
	"sql_injection":     {"web_search", "query"},
	"xss":               {"add_comment", "body"},
	"path_traversal":    {"read_file", "path"},
	"sensitive_paths":   {"read_file", "path"},
	"ssrf":              {"fetch_url", "url"},
	"prompt_injection":  {"send_message", "text"},
}

func splitEnvelope(r splitRecord) []byte {
	tool, args := r.Tool, r.Arguments
	if r.Label != "benign" || len(args) == 0 {
		p := placement[r.Category]
		if p[0] == "" {
			p = [2]string{"tool", "input"}
		}
		tool = p[0]
		args, _ = json.Marshal(map[string]string{p[1]: r.Text})
	}
	env, _ := json.Marshal(map[string]any{"abi": "1.0", "id": "eval", "phase": "request", "method": "tools/call", "tool": tool, "arguments": args})
	return env
}

// TestSplitInContext scores the test split through Evaluate (the plugin's own code path) with
// argument kinds and without (context-free, as before), benign calls in their recorded tool
// contexts and attacks placed where they are attacks, and guards against regressions: with
// kinds, no category's TPR may fall more than 1 point and benign FPR may not rise.
func TestSplitInContext(t *testing.T) {
	f, err := os.Open("../../../data/split/test.jsonl")
	if err != nil {
		t.Fatalf("the test split is part of the repository: %v", err)
	}
	defer f.Close()
	var recs []splitRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r splitRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	type tally struct{ n, hit int }
	run := func(e *Evaluator) map[string]*tally {
		out := map[string]*tally{}
		bump := func(k string, hit bool) {
			if out[k] == nil {
				out[k] = &tally{}
			}
			out[k].n++
			if hit {
				out[k].hit++
			}
		}
		for _, r := range recs {
			v, err := e.Evaluate(splitEnvelope(r))
			if err != nil {
				t.Fatal(err)
			}
			deny := v.Action == abi.ActionDeny
			if r.Label == "benign" {
				bump("benign "+r.Category, deny)
				bump("benign (all)", deny)
				if r.HardNegative {
					bump("benign (hard negatives)", deny)
				}
				if deny && testing.Verbose() && !e.kindsOff {
					t.Logf("false positive %s %s: %s", r.Tool, r.Arguments, v.Rule)
				}
			} else {
				bump(r.Category, deny)
				bump("attacks (all)", deny)
			}
		}
		return out
	}
	with := run(NewEvaluator(Config{}))
	base := NewEvaluator(Config{})
	base.kindsOff = true
	without := run(base)
	keys := make([]string, 0, len(with))
	for k := range with {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %5s %12s %12s\n", "test split", "n", "no kinds", "kinds")
	for _, k := range keys {
		w, o := with[k], without[k]
		rate := func(x *tally) float64 { return 100 * float64(x.hit) / float64(x.n) }
		fmt.Fprintf(&b, "%-26s %5d %11.2f%% %11.2f%%\n", k, w.n, rate(o), rate(w))
		if strings.HasPrefix(k, "benign") && w.hit > o.hit {
			t.Errorf("%s: %d false positives with kinds, %d without", k, w.hit, o.hit)
		}
		if !strings.HasPrefix(k, "benign") && rate(w) < rate(o)-1 {
			t.Errorf("%s: TPR %.2f%% with kinds, %.2f%% without", k, rate(w), rate(o))
		}
	}
	t.Logf("deny rate (TPR for attacks, FPR for benign):\n%s", b.String())
}
