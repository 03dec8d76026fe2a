package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestKey(t *testing.T) {
	tests := []struct{ a, b string }{
		{"../../../etc/passwd", "..%2f..%2fetc%2fpasswd"},
		{"../../../etc/passwd", `..\..\etc\passwd`},
		{"' OR 1=1 --", `" or 2=2   --`},
		{"%252e%252e%252fetc%252fpasswd", "../etc/passwd"},
	}
	for _, tc := range tests {
		if ka, kb := Key(tc.a), Key(tc.b); ka != kb {
			t.Errorf("Key(%q)=%q, Key(%q)=%q: want equal", tc.a, ka, tc.b, kb)
		}
	}
	if Key("/etc/passwd") == Key("/etc/shadow") {
		t.Error("different files share a key")
	}
}

func TestCollapseRepeats(t *testing.T) {
	tests := []struct{ in, want string }{
		{"aaaa", "a"},
		{"../../../x", "./x"},
		{"abcabcabcd", "abcd"},
		{"hello", "helo"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := collapseRepeats(tc.in, 8); got != tc.want {
			t.Errorf("collapseRepeats(%q)=%q want %q", tc.in, got, tc.want)
		}
	}
}

// TestSplitIsClean runs the real split on the committed corpus twice and checks that it is
// deterministic, that no group and no near-duplicate key spans two splits, and that every
// label reaches every split.
func TestSplitIsClean(t *testing.T) {
	corpus := filepath.Join("..", "..", "data", "corpus")
	read := func(dir string) map[string][]Record {
		out := map[string][]Record{}
		for _, s := range []string{"train", "dev", "test"} {
			f, err := os.Open(filepath.Join(dir, s+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var r Record
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				out[s] = append(out[s], r)
			}
			f.Close()
		}
		return out
	}
	o := Options{CorpusDir: corpus, Seed: "palisade-split-v1", DevPct: 15, TestPct: 20, Jaccard: 0.5}
	o.OutDir = t.TempDir()
	if _, err := Run(o); err != nil {
		t.Fatal(err)
	}
	first := read(o.OutDir)
	o.OutDir = t.TempDir()
	if _, err := Run(o); err != nil {
		t.Fatal(err)
	}
	second := read(o.OutDir)
	groupSplit := map[string]string{}
	keySplit := map[string]string{}
	texts := map[string]bool{}
	labels := map[string]map[string]int{}
	for s, rs := range first {
		if len(rs) != len(second[s]) {
			t.Fatalf("split %s: %d then %d records: not deterministic", s, len(rs), len(second[s]))
		}
		labels[s] = map[string]int{}
		for i, r := range rs {
			if second[s][i].Text != r.Text {
				t.Fatalf("split %s record %d differs between runs", s, i)
			}
			if texts[r.Text] {
				t.Errorf("duplicate text %q", r.Text)
			}
			texts[r.Text] = true
			if prev, ok := groupSplit[r.Group]; ok && prev != s {
				t.Errorf("group %s in %s and %s", r.Group, prev, s)
			}
			groupSplit[r.Group] = s
			k := Key(r.Text)
			if prev, ok := keySplit[k]; ok && prev != s {
				t.Errorf("key %q in %s and %s", k, prev, s)
			}
			keySplit[k] = s
			labels[s][r.Label]++
		}
	}
	for _, s := range []string{"train", "dev", "test"} {
		for _, l := range append([]string{"benign"}, Labels...) {
			if labels[s][l] < 50 {
				t.Errorf("split %s has %d %s records, want >= 50", s, labels[s][l], l)
			}
		}
	}
}
