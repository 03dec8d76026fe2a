package detect

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// searchValues returns the normalized search values of the calibration sets (the search-box
// records of data/heldout/calib.jsonl, and the sqli-extra and query-extra calibration sets)
// and the texts of the train and dev splits (every step-th record): attacks and benign
// searches, statements, prose and code, so the rules' real matches are all there.
func searchValues(t testing.TB, step int) []string {
	t.Helper()
	root := filepath.Join("..", "..", "..", "data")
	var out []string
	read := func(path string, keep func(kind string) bool, step int) {
		f, err := os.Open(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for i := 0; sc.Scan(); i++ {
			if i%step != 0 {
				continue
			}
			var rec struct{ Text, Kind string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			if keep(rec.Kind) {
				out = append(out, Normalize(rec.Text).Text)
			}
		}
	}
	all := func(string) bool { return true }
	read(filepath.Join("heldout", "calib.jsonl"), func(k string) bool { return k == "search_box" }, 1)
	read(filepath.Join("heldout", "sqli-extra", "calib.jsonl"), all, 1)
	read(filepath.Join("heldout", "query-extra", "calib.jsonl"), all, 1)
	read(filepath.Join("split", "train.jsonl"), all, step)
	read(filepath.Join("split", "dev.jsonl"), all, step)
	return out
}

// longSearchTexts joins values into texts of windowMin to 8 KiB, with separators that make and
// break word boundaries, quotes and statements, so the rules' matches land at every kind of
// offset; each value also stands at the start and at the end of filler (the rules anchored at
// either end).
func longSearchTexts(vals []string) []string {
	rng := rand.New(rand.NewPCG(26, 27))
	seps := []string{" ", "\n", "", "é", "x", "; ", "'", "\"", "1", ") ", " -- ", "\t"}
	fill := strings.Repeat("red running shoes size 42 and a guide to selecting from them. ", 20)
	var out []string
	var b strings.Builder
	size := windowMin + rng.IntN(7<<10)
	for i, v := range vals {
		b.WriteString(v)
		b.WriteString(seps[rng.IntN(len(seps))])
		if b.Len() >= size {
			out = append(out, b.String())
			b.Reset()
			size = windowMin + rng.IntN(7<<10)
		}
		if i%4 == 0 {
			out = append(out, v+fill, fill+v, fill+v+"\n"+fill)
		}
	}
	return out
}

// agreeSearch compares searchFind with the rule's plain search on every rule for tx; it
// reports how many rules matched, and how many of those matches a window found.
func agreeSearch(t *testing.T, tx string) (matched, byWindow int) {
	t.Helper()
	m := litMemo{t: tx}
	for i, r := range searchSQLRules {
		got, want := searchFind(i, tx, &m), r.re.FindStringIndex(tx)
		if !slices.Equal(got, want) {
			t.Errorf("%s on a %d-byte text: searchFind %v, the plain search %v (near: %q)", r.rule, len(tx), got, want, around(tx, append(got, want...)))
		}
		if want == nil {
			continue
		}
		matched++
		if plans := searchPlans(); plans != nil && len(tx) >= windowMin {
			for _, b := range plans[i] {
				if loc, ok := b.find(tx, &m); ok && !b.start && b.win != nil && slices.Equal(loc, want) {
					byWindow++
					break
				}
			}
		}
	}
	return matched, byWindow
}

// TestSearchFindAgrees: on long texts made of the calibration sets' search values and the
// labelled records, searchFind finds exactly what each search rule's plain search finds, and
// the cheaper tails of searchSQL (booleanSelfEquality, hexText) what their regexps find.
func TestSearchFindAgrees(t *testing.T) {
	if searchPlans() == nil {
		t.Fatal("search_gen.go is stale: run go generate ./plugins/injection/detect")
	}
	step := 5
	if os.Getenv("PALISADE_FULL") != "" {
		step = 1
	}
	texts := longSearchTexts(searchValues(t, step))
	runs, matched, byWindow := 0, 0, 0
	for _, tx := range texts {
		runs += len(searchSQLRules)
		n, w := agreeSearch(t, tx)
		matched, byWindow = matched+n, byWindow+w
		var want string
		for _, m := range reBooleanEquality.FindAllStringSubmatch(tx, -1) {
			if m[1] == m[2] {
				want = m[0]
				break
			}
		}
		if got := booleanSelfEquality(tx); got != want {
			t.Errorf("booleanSelfEquality = %q, want %q", got, want)
		}
	}
	t.Logf("%d texts, %d rule searches, %d matching, %d of them found by a window", len(texts), runs, matched, byWindow)
	if len(texts) < 500 || matched < 500 || byWindow < matched/3 {
		t.Errorf("%d texts, %d matches, %d by windows: the test no longer exercises the branches", len(texts), matched, byWindow)
	}
}

// TestSearchPlans: the generated plans cover every rule, and most branches have a cheap way
// in ordinary text: anchored at the start, a window anchor, or a clause of literals of three
// bytes or more (a person's text rarely holds `select (`).
func TestSearchPlans(t *testing.T) {
	plans := searchPlans()
	if len(plans) != len(searchSQLRules) {
		t.Fatalf("%d plans for %d rules", len(plans), len(searchSQLRules))
	}
	branches, start, window, rare := 0, 0, 0, 0
	for _, brs := range plans {
		for _, b := range brs {
			branches++
			switch {
			case b.start:
				start++
			case b.win != nil:
				window++
			case slices.ContainsFunc(b.clauses, func(c []string) bool { return minLen(c) >= 3 }):
				rare++
			}
		}
	}
	t.Logf("%d rules, %d branches: %d anchored at the start, %d with a window anchor, %d with a rare literal clause",
		len(plans), branches, start, window, rare)
	if start+window+rare < branches*2/3 {
		t.Errorf("only %d of %d branches have a cheap way", start+window+rare, branches)
	}
}

// FuzzSearchFind compares searchFind with each search rule's plain search on a fuzzed value
// placed inside filler long enough for the branches to be used (go test -fuzz FuzzSearchFind
// ./plugins/injection/detect).
func FuzzSearchFind(f *testing.F) {
	for _, s := range searchSeeds {
		f.Add(s, uint16(0))
		f.Add(s, uint16(900))
		f.Add(s, uint16(65535))
	}
	fill := strings.Repeat("a search for red shoes, or boots from 'brand' - select 2 (cheap). ", 20)
	f.Fuzz(func(t *testing.T, s string, at uint16) {
		off := int(at) % (len(fill) + 1)
		agreeSearch(t, Normalize(fill[:off]+s+fill[off:]).Text)
		agreeSearch(t, Normalize(s+fill).Text)
	})
}

// searchSeeds are values shaped as the search rules' matches (and near misses), one or more
// per rule.
var searchSeeds = []string{
	"x' --", "1'::int", "select version()", "or/**/1=1", "x' or name like", "'1'='1", "'a', (5)",
	"admin';", "' * from", "\\' and", "' (function(){})", "(select 1 from t)", "in (select",
	"having count(*)", "execute immediate", "union/**/select", "load_file('/x')", "and (a=1",
	"' collate x", "; drop table t", "select * from users", "information_schema", "user()",
	"concat(0x41)", "case when 1 then", "1 or 1=1", "1 xor 1", "1<>2", "1 --", "x'+1",
	"or 1 --", "sleep(", "or x = '", "and a isnull", "as' from", "'12", "declare @x",
	"create table t (", "`or`", "x', 1)", "order by 1 --", "1 union select", "'||'x",
	"1=1 or x", "and 1>0", ") when 1 then 2", "1;--", "/*'*/", "1;", "1 order by 2",
	"1.5union select", "drop table t;", "drop table t", "1 and not 1", "1 where a=1",
	"exec sp_who 'x'", "x'41'='a'", "1.e(", "2147483648", "\"a b\" or \"c d\"", "1 or x=x",
	"0x61646d696e", "é", "", "'", "\n",
}

// TestSearchGuard: windows run only where no anchor literal follows a rune of the guard: a
// run of letters from one "select" must not read on across the next (`selectselect…` would
// cost one try per occurrence over the rest of the run).
func TestSearchGuard(t *testing.T) {
	b := &searchBranchPlan{searchBranch: searchBranch{anchor: anchor{0, []string{"select"}}, guard: []rune{'_', '_', 'a', 'z'}}}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"select a(", true}, {"x select y select (", true}, {"é select", true}, {"select", true},
		{"selectselect", false}, {"x aselect", false}, {"select _select", false}, {"no literal", true},
	} {
		if got := b.guarded(tc.text); got != tc.want {
			t.Errorf("guarded(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	// The rules whose plans use a guard still agree on the texts it turns away.
	glued := strings.Repeat("selectselect(1) unionunion select from", 64)
	agreeSearch(t, glued)
	agreeSearch(t, "select "+strings.Repeat("aselect", 400)+"(")
}
