package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// Labels are the classes of the labelled set, in file order.
var Labels = []string{
	"path_traversal", "sensitive_paths", "sql_injection", "command_injection",
	"ssrf", "xss", "prompt_injection",
}

// primaryArgs lists, in priority order, the argument that carries the payload of a benign call.
var primaryArgs = []string{"command", "query", "url", "path", "body", "text", "content", "pattern"}

// Record is one labelled example in a split file.
type Record struct {
	Text         string          `json:"text"`
	Label        string          `json:"label"`
	Category     string          `json:"category"`
	HardNegative bool            `json:"hard_negative"`
	Source       string          `json:"source"`
	Group        string          `json:"group"`
	Tool         string          `json:"tool,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
}

type benignCall struct {
	Tool         string                     `json:"tool"`
	Arguments    map[string]json.RawMessage `json:"arguments"`
	Category     string                     `json:"category"`
	HardNegative bool                       `json:"hard_negative"`
}

// Options configures a split run.
type Options struct {
	CorpusDir string
	OutDir    string
	Seed      string // salt of the stable group hash
	DevPct    int
	TestPct   int
	Jaccard   float64 // near-duplicate threshold on shingle sets
}

// Load reads the corpus: one attack per line in <label>.txt, benign calls in benign_toolcalls.jsonl.
func Load(dir string) ([]Record, error) {
	var out []Record
	for _, l := range Labels {
		f, err := os.Open(filepath.Join(dir, l+".txt"))
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", l, err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			t := strings.TrimSpace(sc.Text())
			if t == "" {
				continue
			}
			out = append(out, Record{Text: t, Label: l, Category: l, Source: fmt.Sprintf("%s.txt:%d", l, n)})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("load %s: %w", l, err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "benign_toolcalls.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("load benign: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var c benignCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("benign line %d: %w", n, err)
		}
		text := ""
		for _, k := range primaryArgs {
			raw, ok := c.Arguments[k]
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				text = s
				break
			}
		}
		if text == "" {
			continue
		}
		args, _ := json.Marshal(c.Arguments)
		out = append(out, Record{
			Text: text, Label: "benign", Category: c.Category, HardNegative: c.HardNegative,
			Source: fmt.Sprintf("benign_toolcalls.jsonl:%d", n), Tool: c.Tool, Arguments: args,
		})
	}
	return out, sc.Err()
}

// Key is the near-duplicate key of a text: decoded, case-folded, digits as 0, quotes and
// separators unified, whitespace collapsed, and short repeated units collapsed to one, so
// "../../../etc/passwd" and "..%5c..%5cetc%5cpasswd" share a key.
func Key(s string) string {
	for i := 0; i < 3; i++ {
		d, err := url.PathUnescape(s)
		if err != nil || d == s {
			break
		}
		s = d
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsDigit(r):
			r = '0'
		case r == '"' || r == '`' || r == '\u2019' || r == '\u2018':
			r = '\''
		case r == '\\':
			r = '/'
		case unicode.IsSpace(r):
			if space {
				continue
			}
			space = true
			b.WriteByte(' ')
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return collapseRepeats(strings.TrimSpace(b.String()), 8)
}

// collapseRepeats replaces back-to-back repeats of any unit of 1..maxUnit runes with one copy,
// until nothing changes.
func collapseRepeats(s string, maxUnit int) string {
	for {
		next := collapseOnce(s, maxUnit)
		if next == s {
			return s
		}
		s = next
	}
}

func collapseOnce(s string, maxUnit int) string {
	rs := []rune(s)
	out := make([]rune, 0, len(rs))
	for i := 0; i < len(rs); {
		done := false
		for u := maxUnit; u >= 1 && !done; u-- {
			if i+2*u > len(rs) {
				continue
			}
			if string(rs[i:i+u]) != string(rs[i+u:i+2*u]) {
				continue
			}
			j := i + u
			for j+u <= len(rs) && string(rs[j:j+u]) == string(rs[i:i+u]) {
				j += u
			}
			out = append(out, rs[i:i+u]...)
			i = j
			done = true
		}
		if !done {
			out = append(out, rs[i])
			i++
		}
	}
	return string(out)
}

// shingles returns the set of hashed word 3-grams of a key, or rune 5-grams for text with
// few spaces (scripts without word breaks, payloads).
func shingles(key string) (map[uint64]struct{}, bool) {
	set := map[uint64]struct{}{}
	words := strings.Fields(key)
	if len(words) >= 8 {
		for i := 0; i+3 <= len(words); i++ {
			set[hash64(strings.Join(words[i:i+3], " "))] = struct{}{}
		}
		return set, true
	}
	rs := []rune(key)
	for i := 0; i+5 <= len(rs); i++ {
		set[hash64(string(rs[i:i+5]))] = struct{}{}
	}
	return set, false
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func jaccard(a, b map[uint64]struct{}) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if _, ok := b[k]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

type unionFind []int

func (u unionFind) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if ra < rb {
		u[rb] = ra
	} else {
		u[ra] = rb
	}
}

// charThreshold is the Jaccard threshold for short texts compared on rune 5-grams: higher than
// the word threshold, because short payloads share many 5-grams by construction and a low
// threshold chains whole categories into one group.
const charThreshold = 0.75

const (
	bands = 16
	rows  = 4
)

// Group assigns every record a group id: exact key matches are one group, and texts whose
// shingle sets reach the Jaccard threshold (found by MinHash LSH, then checked exactly) join.
// It returns the records with exact duplicate texts removed (first occurrence kept).
func Group(recs []Record, threshold float64) []Record {
	seen := map[string]bool{}
	var uniq []Record
	for _, r := range recs {
		if seen[r.Text] {
			continue
		}
		seen[r.Text] = true
		uniq = append(uniq, r)
	}
	n := len(uniq)
	uf := make(unionFind, n)
	for i := range uf {
		uf[i] = i
	}
	keys := make([]string, n)
	byKey := map[string]int{}
	for i, r := range uniq {
		keys[i] = Key(r.Text)
		if j, ok := byKey[keys[i]]; ok {
			uf.union(i, j)
		} else {
			byKey[keys[i]] = i
		}
	}
	sh := make([]map[uint64]struct{}, n)
	wordShingled := make([]bool, n)
	buckets := map[[2]uint64][]int{}
	for i := range uniq {
		sh[i], wordShingled[i] = shingles(keys[i])
		if len(sh[i]) < 3 {
			continue
		}
		var sig [bands * rows]uint64
		for k := range sig {
			sig[k] = ^uint64(0)
		}
		for s := range sh[i] {
			for k := range sig {
				v := mix(s ^ uint64(k+1)*0x9e3779b97f4a7c15)
				if v < sig[k] {
					sig[k] = v
				}
			}
		}
		for bnd := 0; bnd < bands; bnd++ {
			h := uint64(1469598103934665603)
			for r := 0; r < rows; r++ {
				h = mix(h ^ sig[bnd*rows+r])
			}
			key := [2]uint64{uint64(bnd), h}
			buckets[key] = append(buckets[key], i)
		}
	}
	bkeys := make([][2]uint64, 0, len(buckets))
	for k := range buckets {
		bkeys = append(bkeys, k)
	}
	sort.Slice(bkeys, func(a, b int) bool {
		if bkeys[a][0] != bkeys[b][0] {
			return bkeys[a][0] < bkeys[b][0]
		}
		return bkeys[a][1] < bkeys[b][1]
	})
	for _, bk := range bkeys {
		members := buckets[bk]
		if len(members) < 2 {
			continue
		}
		for a := 0; a < len(members); a++ {
			for b := a + 1; b < len(members); b++ {
				i, j := members[a], members[b]
				if uf.find(i) == uf.find(j) {
					continue
				}
				if uniq[i].Label != uniq[j].Label {
					continue
				}
				t := threshold
				if !wordShingled[i] || !wordShingled[j] {
					t = charThreshold
				}
				if jaccard(sh[i], sh[j]) >= t {
					uf.union(i, j)
				}
			}
		}
	}
	// Name each group by the smallest key among its members: stable across runs and input order.
	name := map[int]string{}
	for i := range uniq {
		root := uf.find(i)
		if cur, ok := name[root]; !ok || keys[i] < cur {
			name[root] = keys[i]
		}
	}
	for i := range uniq {
		uniq[i].Group = fmt.Sprintf("%016x", hash64(name[uf.find(i)]))
	}
	return uniq
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb93e5a3fd8b6
	x ^= x >> 33
	return x
}

// SplitOf maps a group to train, dev or test by a salted stable hash.
func SplitOf(group, seed string, devPct, testPct int) string {
	b := int(hash64(seed+"/"+group) % 100)
	switch {
	case b < testPct:
		return "test"
	case b < testPct+devPct:
		return "dev"
	}
	return "train"
}

// Run loads, groups, splits and writes train.jsonl, dev.jsonl and test.jsonl, sorted by
// (label, source) so the files diff cleanly. It returns per-split, per-label counts.
func Run(o Options) (map[string]map[string]int, error) {
	recs, err := Load(o.CorpusDir)
	if err != nil {
		return nil, err
	}
	recs = Group(recs, o.Jaccard)
	parts := map[string][]Record{}
	counts := map[string]map[string]int{}
	for _, r := range recs {
		s := SplitOf(r.Group, o.Seed, o.DevPct, o.TestPct)
		parts[s] = append(parts[s], r)
		if counts[s] == nil {
			counts[s] = map[string]int{}
		}
		counts[s][r.Label]++
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("split: %w", err)
	}
	for _, s := range []string{"train", "dev", "test"} {
		rs := parts[s]
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Label != rs[j].Label {
				return rs[i].Label < rs[j].Label
			}
			return rs[i].Source < rs[j].Source
		})
		if err := writeJSONL(filepath.Join(o.OutDir, s+".jsonl"), rs); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

func writeJSONL(path string, rs []Record) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
