package detect

import (
	"regexp/syntax"
	"sort"
)

// The prefilter keeps regexps off the hot path. For every rule it derives, from the regexp's
// syntax tree, a set of literals of which every match must contain at least one. One pass over
// the text (a 1-, 2- and 3-byte gram table) finds which literals occur; only rules with a
// literal present run their regexp. Benign text usually holds none, so a scan of 1 KiB costs
// a few microseconds instead of one regexp pass per rule.

// clause is a set of literals one of which must occur; a rule's prefilter is a conjunction
// of clauses.
type clause []string

// exactMemo caches exactSet per node: requiredClauses asks for the same nodes repeatedly, and
// init time matters (it runs when each Wasm instance starts).
var exactMemo = map[*syntax.Regexp][]string{}

// exactSet returns every string re matches when that set is finite and small, else nil.
func exactSet(re *syntax.Regexp) []string {
	if e, ok := exactMemo[re]; ok {
		return e
	}
	e := exactSetUncached(re)
	if exactMemo != nil {
		exactMemo[re] = e
	}
	return e
}

func exactSetUncached(re *syntax.Regexp) []string {
	const maxSet = 64
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo > 16 {
				return nil
			}
			for r := lo; r <= hi; r++ {
				out = append(out, string(r))
				if len(out) > maxSet {
					return nil
				}
			}
		}
		return out
	case syntax.OpCapture:
		return exactSet(re.Sub[0])
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			e := exactSet(s)
			if e == nil || len(out)+len(e) > maxSet {
				return nil
			}
			out = append(out, e...)
		}
		return out
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			e := exactSet(s)
			if e == nil || len(out)*len(e) > maxSet {
				return nil
			}
			next := make([]string, 0, len(out)*len(e))
			for _, a := range out {
				for _, b := range e {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out
	}
	return nil
}

// requiredClauses returns clauses every match of re satisfies (all of them), or nil when it
// cannot tell (the rule must then always run).
func requiredClauses(re *syntax.Regexp) []clause {
	if e := exactSet(re); e != nil {
		if minLen(e) == 0 {
			return nil
		}
		return []clause{dedup(e)}
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return requiredClauses(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredClauses(re.Sub[0])
		}
		return nil
	case syntax.OpAlternate:
		var out clause
		for _, s := range re.Sub {
			cs := requiredClauses(s)
			if cs == nil {
				return nil
			}
			out = append(out, bestClause(cs)...)
		}
		return []clause{dedup(out)}
	case syntax.OpConcat:
		var cs []clause
		// Runs of exact children multiply into longer literals ("q" then ":" gives "q:").
		var run []*syntax.Regexp
		flush := func() {
			if len(run) == 0 {
				return
			}
			if e := exactSet(&syntax.Regexp{Op: syntax.OpConcat, Sub: run}); e != nil && minLen(e) > 0 {
				cs = append(cs, dedup(e))
			} else {
				for _, r := range run {
					cs = append(cs, requiredClauses(r)...)
				}
			}
			run = nil
		}
		for _, s := range re.Sub {
			if exactSet(s) != nil {
				run = append(run, s)
				continue
			}
			flush()
			cs = append(cs, requiredClauses(s)...)
		}
		flush()
		if len(cs) == 0 {
			return nil
		}
		sort.SliceStable(cs, func(i, j int) bool { return better(cs[i], cs[j]) })
		if len(cs) > 4 {
			cs = cs[:4]
		}
		return cs
	}
	return nil
}

// bestClause is the most selective of cs.
func bestClause(cs []clause) clause {
	best := cs[0]
	for _, c := range cs[1:] {
		if better(c, best) {
			best = c
		}
	}
	return best
}

// better prefers the set whose shortest literal is longer, then the smaller set.
func better(a, b []string) bool {
	if b == nil {
		return true
	}
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(l []string) int {
	m := 1 << 30
	for _, s := range l {
		m = min(m, len(s))
	}
	return m
}

func dedup(l []string) clause {
	l = append([]string(nil), l...)
	sort.Strings(l)
	out := l[:0]
	for i, s := range l {
		if i == 0 || s != l[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// gramIndex finds which of a fixed set of literals occur in a text. It is built with add, then
// frozen into flat offset tables (no maps on the hot path: map access is slow in Wasm).
type gramIndex struct {
	one   [256][]int32 // literal ids of length 1, by byte
	has2  [1 << 16 / 64]uint64
	has3  [1 << 16 / 64]uint64
	lits  []string
	ids   map[string]int32
	rules [][]int32 // literal id -> clause ids

	two, three       map[uint32][]int32 // while building
	twoOff, threeOff []int32            // frozen: offsets into twoIDs/threeIDs, by 16-bit key
	twoIDs, threeIDs []int32
}

func hash3(a, b, c byte) uint32 { return (uint32(a)*31*31 + uint32(b)*31 + uint32(c)) & 0xFFFF }

func newGramIndex() *gramIndex {
	return &gramIndex{two: map[uint32][]int32{}, three: map[uint32][]int32{}, ids: map[string]int32{}}
}

// add registers lit as satisfying clause id.
func (g *gramIndex) add(lit string, clause int32) {
	if id, ok := g.ids[lit]; ok {
		g.rules[id] = append(g.rules[id], clause)
		return
	}
	id := int32(len(g.lits))
	g.ids[lit] = id
	g.lits = append(g.lits, lit)
	g.rules = append(g.rules, []int32{clause})
	switch len(lit) {
	case 1:
		g.one[lit[0]] = append(g.one[lit[0]], id)
	case 2:
		k := uint32(lit[0])<<8 | uint32(lit[1])
		g.two[k] = append(g.two[k], id)
		g.has2[k/64] |= 1 << (k % 64)
	default:
		h := hash3(lit[0], lit[1], lit[2])
		g.three[h] = append(g.three[h], id)
		g.has3[h/64] |= 1 << (h % 64)
	}
}

// freeze turns the build maps into offset tables.
func (g *gramIndex) freeze() {
	flat := func(m map[uint32][]int32) ([]int32, []int32) {
		off := make([]int32, 1<<16+1)
		var ids []int32
		for k := 0; k < 1<<16; k++ {
			off[k] = int32(len(ids))
			ids = append(ids, m[uint32(k)]...)
		}
		off[1<<16] = int32(len(ids))
		return off, ids
	}
	g.twoOff, g.twoIDs = flat(g.two)
	g.threeOff, g.threeIDs = flat(g.three)
	g.two, g.three, g.ids = nil, nil, nil
}

// scan calls found once for every literal that occurs in t; seen (one flag per literal)
// keeps a literal that occurs many times from being reported again.
func (g *gramIndex) scan(t string, seen []bool, found func(id int32)) {
	n := len(t)
	for i := 0; i < n; i++ {
		a := t[i]
		for _, id := range g.one[a] {
			if !seen[id] {
				seen[id] = true
				found(id)
			}
		}
		if i+1 >= n {
			break
		}
		b := t[i+1]
		k2 := uint32(a)<<8 | uint32(b)
		if g.has2[k2/64]&(1<<(k2%64)) != 0 {
			for _, id := range g.twoIDs[g.twoOff[k2]:g.twoOff[k2+1]] {
				if !seen[id] {
					seen[id] = true
					found(id)
				}
			}
		}
		if i+2 >= n {
			continue
		}
		h := hash3(a, b, t[i+2])
		if g.has3[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, id := range g.threeIDs[g.threeOff[h]:g.threeOff[h+1]] {
			if seen[id] {
				continue
			}
			l := g.lits[id]
			if len(l) <= n-i && t[i:i+len(l)] == l {
				seen[id] = true
				found(id)
			}
		}
	}
}
