package detect

// Searching a long search-box value (issue 26/27). searchSQL runs ~58 unanchored regexps over
// a search value; Go's regexp steps its NFA over every byte for each (~3.7 ms per KiB for all
// of them natively, about three times that in a Wasm guest), so a long value in a search field
// took the injection stage's time budget. For a value of windowMin bytes or more, each rule is
// split into its top-level alternation branches (a leftmost-first match of a|b is the match of
// the branch with the leftmost start, the earlier branch on a tie), and each branch is
// resolved the cheapest exact way the generator (search_gen_test.go) found for it:
//   - anchored at the text's start (^ without the multi-line flag): its regexp, which tries
//     that one start only;
//   - a literal clause with no literal in the text (every match satisfies all its clauses,
//     requiredClauses): no match, without a regexp;
//   - a window anchor (window.go): anchored tries around the anchor's occurrences.
//
// A branch none of these settle is searched alone; a rule with more than maxOpenBranches of
// them is searched whole, as before. The result is
// the plain search's, byte for byte (TestSearchFindAgrees, FuzzSearchFind): nothing is
// skipped for length.

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// searchBranch is one branch of a search rule as the generator planned it (search_gen.go).
type searchBranch struct {
	expr    string // the branch's expression; "" when the rule is not split
	start   bool   // every match starts at the text's first byte
	clauses [][]string
	anchor  anchor
	// guard: rune ranges; windows run only where no anchor literal follows one (runGuard in
	// search_gen_test.go).
	guard []rune
}

// searchBranchPlan is a branch ready to search: its regexp and windows compile on first use.
type searchBranchPlan struct {
	searchBranch
	re        func() *regexp.Regexp
	win       *windowed
	clauseIDs [][]int32 // clauses as indices of searchPlanSet.lits
}

// searchPlanSet is genSearch ready to search: each rule's branches, and the literals of every
// branch's clauses (a clause names them by index in lits).
type searchPlanSet struct {
	plans [][]searchBranchPlan
	lits  []string
	// index finds which of lits a text holds in one pass (the prefilter's gram table, built on
	// first use: a call with no long search value never pays for it).
	index func() *gramIndex
}

// searchSet is genSearch ready to search; nil when search_gen.go is stale (every rule is then
// searched whole).
var searchSet = sync.OnceValue(func() *searchPlanSet {
	if genSearchFingerprint != searchRulesFingerprint() || len(genSearch) != len(searchSQLRules) {
		return nil
	}
	s := &searchPlanSet{plans: make([][]searchBranchPlan, len(genSearch))}
	ids := map[string]int32{}
	for i, brs := range genSearch {
		for _, b := range brs {
			p := searchBranchPlan{searchBranch: b}
			for _, c := range b.clauses {
				var cl []int32
				for _, l := range c {
					id, ok := ids[l]
					if !ok {
						id = int32(len(s.lits))
						ids[l] = id
						s.lits = append(s.lits, l)
					}
					cl = append(cl, id)
				}
				p.clauseIDs = append(p.clauseIDs, cl)
			}
			expr := b.expr
			if expr == "" {
				expr = searchSQLRules[i].re.String()
				p.re = searchSQLRules[i].re.Compiled
			} else {
				p.re = lazyRegexp(expr)
			}
			p.win = newWindowed(b.anchor, expr)
			s.plans[i] = append(s.plans[i], p)
		}
	}
	s.index = sync.OnceValue(func() *gramIndex {
		g := &gramIndex{}
		g.build(s.lits, make([][]int32, len(s.lits)), make([]uint8, len(s.lits)))
		return g
	})
	return s
})

// searchPlans is each rule's branches (searchSet); nil when search_gen.go is stale.
func searchPlans() [][]searchBranchPlan {
	if s := searchSet(); s != nil {
		return s.plans
	}
	return nil
}

// searchRulesFingerprint hashes searchSQLRules' expressions (FNV-1a), so that a stale
// search_gen.go is never used.
func searchRulesFingerprint() uint64 {
	h := uint64(14695981039346656037)
	for _, r := range searchSQLRules {
		s := r.re.String()
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return h
}

// litMemo holds which of searchSet's literals one text holds, found on first use, and whether
// the text is valid UTF-8.
type litMemo struct {
	t    string
	seen []bool
	utf8 utf8Memo
}

// validUTF8 reports whether the text is valid UTF-8, checked once per text.
func (m *litMemo) validUTF8() bool { return m.utf8.valid(m.t) }

// anyIn reports whether the text holds one of the literals c names. It is reached only
// through searchSet's plans, so searchSet is not nil.
func (m *litMemo) anyIn(c []int32) bool {
	if m.seen == nil {
		s := searchSet()
		m.seen = make([]bool, len(s.lits))
		s.index().scan(m.t, m.seen, func(int32) {})
	}
	for _, id := range c {
		if m.seen[id] {
			return true
		}
	}
	return false
}

// maxOpenBranches is the most branches of one rule searched alone: past it, one pass of the
// whole rule costs less.
const maxOpenBranches = 2

// searchFind is searchSQLRules[i].re.FindStringIndex(t), found by branches (see above) when t
// is long; m holds t's literals (m.t == t).
func searchFind(i int, t string, m *litMemo) []int {
	r := searchSQLRules[i]
	if len(t) < windowMin {
		return r.re.FindStringIndex(t)
	}
	plans := searchPlans()
	if plans == nil {
		return r.re.FindStringIndex(t)
	}
	brs := plans[i]
	locs := make([][]int, len(brs))
	var open [maxOpenBranches]int // the branches no cheap way settled: searched alone
	n := 0
	for j := range brs {
		loc, ok := brs[j].find(t, m)
		if !ok {
			if n == maxOpenBranches {
				return r.re.FindStringIndex(t) // more: one pass of the whole rule
			}
			open[n] = j
			n++
			continue
		}
		locs[j] = loc
	}
	for _, j := range open[:n] {
		locs[j] = brs[j].re().FindStringIndex(t)
	}
	// The leftmost start wins; on a tie, the earlier branch (leftmost-first).
	var best []int
	for _, loc := range locs {
		if loc != nil && (best == nil || loc[0] < best[0]) {
			best = loc
		}
	}
	return best
}

// find is the branch's FindStringIndex on t, or ok=false when no cheap way settles it.
func (b *searchBranchPlan) find(t string, m *litMemo) (loc []int, ok bool) {
	if b.start {
		return b.re().FindStringIndex(t), true
	}
	for _, c := range b.clauseIDs {
		if !m.anyIn(c) {
			return nil, true
		}
	}
	if b.win != nil && b.guarded(t) {
		return b.win.find(t, false, m.validUTF8())
	}
	return nil, false
}

// guarded reports whether no occurrence of the anchor's literals in t follows a rune of the
// branch's guard ranges: runs of those classes then cannot read on past the next occurrence,
// and windows cost one pass or so.
func (b *searchBranchPlan) guarded(t string) bool {
	if len(b.guard) == 0 {
		return true
	}
	for _, l := range b.anchor.lits {
		for i := 0; ; {
			j := strings.Index(t[i:], l)
			if j < 0 {
				break
			}
			p := i + j
			if p > 0 {
				r, _ := utf8.DecodeLastRuneInString(t[:p])
				for k := 0; k+1 < len(b.guard); k += 2 {
					if b.guard[k] <= r && r <= b.guard[k+1] {
						return false
					}
				}
			}
			i = p + 1
		}
	}
	return true
}
