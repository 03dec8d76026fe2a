package scan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestSplitInContext runs the trained model through Evaluate on data/split/test at the example
// bundle's threshold (0.9), with argument kinds and without: benign calls in their recorded
// tool context, attacks placed where they are attacks (as plugins/injection/detect's test of
// the same name). It fails when kinds raise a benign FPR or cut a category's TPR by more than
// a point; without kinds, an attack in a path argument that only the model's sensitive_paths
// flags counts as missed, as kinds leave that label to the injection stage there (modelOff).
func TestSplitInContext(t *testing.T) {
	r, _ := detectorRegistry(t, "")
	place := map[string][2]string{
		"command_injection": {"ping", "host"}, "sql_injection": {"web_search", "query"},
		"xss": {"add_comment", "body"}, "path_traversal": {"read_file", "path"},
		"sensitive_paths": {"read_file", "path"}, "ssrf": {"fetch_url", "url"},
		"prompt_injection": {"send_message", "text"},
	}
	f, err := os.Open(filepath.Join(repoRoot(t), "data", "split", "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type rec struct {
		Text, Label, Category, Tool string
		HardNegative                bool `json:"hard_negative"`
		Arguments                   json.RawMessage
	}
	var envs [][]byte
	var recs []rec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var x rec
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		tool, args := x.Tool, x.Arguments
		if x.Label != "benign" || len(args) == 0 {
			p := place[x.Category]
			tool = p[0]
			args, _ = json.Marshal(map[string]string{p[1]: x.Text})
		}
		env, _ := json.Marshal(map[string]any{"abi": "1.0", "id": "eval", "phase": "request", "method": "tools/call", "tool": tool, "arguments": args})
		envs = append(envs, env)
		recs = append(recs, x)
	}
	run := func(noKinds bool) map[string][2]int {
		c, _ := ParseConfig([]byte(`{"threshold":0.9}`))
		c.noKinds = noKinds
		out := map[string][2]int{}
		bump := func(k string, hit bool) {
			v := out[k]
			v[0]++
			if hit {
				v[1]++
			}
			out[k] = v
		}
		for i, env := range envs {
			v, err := Evaluate(env, c, inferVia(r))
			if err != nil {
				t.Fatal(err)
			}
			deny := v.Action == abi.ActionDeny
			x := recs[i]
			if noKinds && deny && x.Label != "benign" && place[x.Category][1] == "path" && slices.Equal(v.Labels, []string{"sensitive_paths"}) {
				// The model's sensitive_paths in a path argument is left to the injection stage's
				// rules by design (modelOff), in any category: a traversal to
				// /var/run/secrets/.../token the model calls sensitive_paths is caught there.
				deny = false
			}
			if x.Label == "benign" {
				bump("benign "+x.Category, deny)
				bump("benign (all)", deny)
				if x.HardNegative {
					bump("benign (hard negatives)", deny)
				}
			} else {
				bump(x.Category, deny)
				if x.Category != "sensitive_paths" {
					bump("attacks (all but sensitive_paths)", deny)
				}
			}
		}
		return out
	}
	without, with := run(true), run(false)
	keys := make([]string, 0, len(with))
	for k := range with {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %5s %12s %12s\n", "test split, threshold 0.9", "n", "no kinds", "kinds")
	rate := func(v [2]int) float64 { return 100 * float64(v[1]) / float64(v[0]) }
	for _, k := range keys {
		w, o := with[k], without[k]
		fmt.Fprintf(&b, "%-26s %5d %11.2f%% %11.2f%%\n", k, w[0], rate(o), rate(w))
		if strings.HasPrefix(k, "benign") && w[1] > o[1] {
			t.Errorf("%s: %d false positives with kinds, %d without", k, w[1], o[1])
		}
		// sensitive_paths in a path argument is left to the injection stage's rules (modelOff):
		// the detector alone loses it by design, the chain does not.
		if !strings.HasPrefix(k, "benign") && k != "sensitive_paths" && rate(w) < rate(o)-1 {
			t.Errorf("%s: TPR %.2f%% with kinds, %.2f%% without", k, rate(w), rate(o))
		}
	}
	t.Logf("deny rate (TPR for attacks, FPR for benign):\n%s", b.String())
}
