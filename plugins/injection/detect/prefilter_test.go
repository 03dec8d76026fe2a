package detect

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func TestRequiredClauses(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`abc`, []string{"abc"}},
		{`\bunion\b.{0,40}select`, []string{"select"}},
		{`(?:foo|barbaz)x?`, []string{"barbaz", "foo"}},
		{`a*`, nil},
		{`['"]\s*or`, []string{"or"}},
		{`(?:q|p):x`, []string{"p:x", "q:x"}},
		{`x|.*`, nil},
	}
	for _, tc := range tests {
		re, err := syntax.Parse(tc.expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		cs := requiredClauses(re.Simplify())
		var got []string
		if cs != nil {
			got = bestClause(cs)
		}
		if (tc.want == nil) != (got == nil) || !slices.Equal(got, tc.want) {
			t.Errorf("requiredClauses(%q) best = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// TestPrefilterNeverHides runs every rule's regexp on the whole labelled set with and without
// the prefilter: a match the prefilter would have skipped is a bug in literal derivation.
func TestPrefilterNeverHides(t *testing.T) {
	var texts []string
	for _, s := range []string{"train", "dev", "test"} {
		f, err := os.Open(filepath.Join("..", "..", "..", "data", "split", s+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, rec.Text)
		}
		f.Close()
	}
	step := 7 // a deterministic seventh of the set keeps the test under ~15 s on a busy CI core
	if os.Getenv("PALISADE_FULL") != "" {
		step = 1
	}
	for i := 0; i < len(texts); i += step {
		raw := texts[i]
		n := Normalize(raw)
		for _, tx := range []string{n.Text, strings.ReplaceAll(n.Text, `\`, "/")} {
			cand := candidates(tx)
			for _, ru := range allRules {
				if !cand[ru.id] && ru.re().MatchString(tx) {
					t.Errorf("rule %s/%s matches %q but the prefilter skipped it", ru.cat, ru.name, tx)
				}
			}
		}
	}
}

// TestFewRulesAlwaysRun keeps the list of rules without a literal short: each runs on every
// text and costs a regexp pass.
func TestFewRulesAlwaysRun(t *testing.T) {
	for _, id := range always {
		t.Logf("always runs: %s/%s %s", allRules[id].cat, allRules[id].name, allRules[id].expr)
	}
	if len(always) > 3 {
		t.Errorf("%d rules always run, want at most 3", len(always))
	}
}
