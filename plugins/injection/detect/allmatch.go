package detect

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Every match of a rule, found in linear time (issue 26, helper det40). The drops of
// docStructure and docPhrases ask about every match of a rule's whole regexp (everyMatchSpan):
// a rule reports its first match only, and the attacker writes the excused shape before the
// real one. FindAllStringIndex of the whole regexp steps Go's NFA over every byte of the text
// with every branch of a rule alive (user_data_request has sixteen), once per question: a
// manual page of 6 KiB took 30 ms natively and timed out at the stage's 250 ms in a loaded
// guest. ruleFindAll gives the same matches, byte for byte, from the rule's branches as the
// prefilter splits them (init): a branch with a window anchor (window.go) runs anchored only
// where its anchor's literals occur, a branch without one is skipped when a literal every
// match of it holds is absent, and runs unanchored otherwise. TestRuleFindAllAgrees and
// FuzzRuleFindAll hold it to FindAllStringIndex.

// clauseLits lists each prefilter clause's literals (clause id -> literals), the inverse of
// genLitClauses, built on first use.
var clauseLits = sync.OnceValue(func() [][]string {
	out := make([][]string, numClauses)
	for lit, cs := range index.rules {
		for _, c := range cs {
			out[c] = append(out[c], index.lits[lit])
		}
	}
	return out
})

// mayMatch reports whether part p of a rule (an entry of allRules) may match t: false only
// when one of its prefilter clauses derived from its regexp has no literal in t. A rule whose
// clauses may come from its hand-written fallback literals (pre), not its regexp, may match.
func mayMatch(p *rule, pre []string, t string) bool {
	if pre != nil || p.id >= len(ruleClauses) {
		return true
	}
	cl := clauseLits()
	for _, c := range ruleClauses[p.id] {
		found := false
		for _, l := range cl[c] {
			if strings.Contains(t, l) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// partSearch finds, for one branch of a rule, the leftmost match that starts at or after a
// position, remembering the last one: the leftmost match from pos is also the leftmost from
// any later position up to its start.
type partSearch struct {
	p      *rule
	starts []int32 // candidate starts (window mode); nil with whole set: search unanchored
	whole  bool
	from   int   // the position the remembered answer was searched from; -1: none yet
	loc    []int // the remembered answer (nil: no match at or after from)
}

// at returns the leftmost match of the branch that starts at or after pos.
func (s *partSearch) at(t string, pos int) []int {
	if s.from >= 0 && s.from <= pos && (s.loc == nil || s.loc[0] >= pos) {
		return s.loc
	}
	s.from, s.loc = pos, nil
	if s.whole {
		s.loc = searchFrom(s.p, t, pos)
		return s.loc
	}
	i, _ := slices.BinarySearch(s.starts, int32(pos))
	for _, q := range s.starts[i:] {
		if loc := s.p.win.matchAt(t, int(q), false); loc != nil {
			s.loc = loc
			return loc
		}
	}
	return nil
}

// searchFrom is the leftmost match of p's regexp in t that starts at or after pos (pos a
// rune's first byte), judged with the text before pos as context, as FindAllStringIndex's
// later searches are.
func searchFrom(p *rule, t string, pos int) []int {
	if pos == 0 {
		return p.re().FindStringIndex(t)
	}
	if pos > len(t) {
		return nil
	}
	_, n := utf8.DecodeLastRuneInString(t[:pos])
	base := pos - n
	m := p.after().FindStringSubmatchIndex(t[base:])
	if m == nil {
		return nil
	}
	return []int{m[2] + base, m[3] + base}
}

// ruleParts returns the entries of allRules that run table rule ru (its branches, or ru
// itself), nil when the tables are not loaded.
func ruleParts(ru *rule) []*rule {
	if tablesStale || ru.tail == nil {
		return nil
	}
	n := 0
	for n < len(ru.tail) && ru.tail[n].group == ru.group {
		n++
	}
	return ru.tail[:n]
}

// ruleFindAll is ru.re().FindAllStringIndex(t, n), in time linear in the text for a rule
// whose branches have window anchors.
func ruleFindAll(ru *rule, t string, n int) [][]int {
	parts := ruleParts(ru)
	if parts == nil || len(t) < windowMin || len(t) > 1<<30 || !utf8.ValidString(t) {
		return ru.re().FindAllStringIndex(t, n)
	}
	if n < 0 {
		n = len(t) + 1
	}
	srch := make([]partSearch, 0, len(parts))
	for _, p := range parts {
		if !mayMatch(p, ru.pre, t) {
			continue
		}
		s := partSearch{p: p, from: -1}
		if p.win != nil {
			sp := startsPool.Get().(*[]int32)
			st, ok := p.win.starts(t, sp)
			if ok {
				if len(st) == 0 {
					startsPool.Put(sp)
					continue // no anchor literal: the branch cannot match
				}
				s.starts = slices.Clone(st)
			} else {
				s.whole = true
			}
			startsPool.Put(sp)
		} else {
			s.whole = true
		}
		srch = append(srch, s)
	}
	if len(srch) == 0 || n == 0 {
		return nil
	}
	var out [][]int
	// FindAllStringIndex's loop (regexp.allMatches); the whole regexp's leftmost-first match
	// from pos is the earliest start among its branches' matches, the first branch on a tie.
	for pos, prevEnd := 0, -1; len(out) < n && pos <= len(t); {
		var loc []int
		for i := range srch {
			if l := srch[i].at(t, pos); l != nil && (loc == nil || l[0] < loc[0]) {
				loc = l
			}
		}
		if loc == nil {
			break
		}
		accept := true
		if loc[1] == pos {
			if loc[0] == prevEnd {
				accept = false
			}
			if _, w := utf8.DecodeRuneInString(t[pos:]); w > 0 && pos < len(t) {
				pos += w
			} else {
				pos = len(t) + 1
			}
		} else {
			pos = loc[1]
		}
		prevEnd = loc[1]
		if accept {
			out = append(out, []int{loc[0], loc[1]})
		}
	}
	return out
}

// fromRegexp is \A(?s:.)(?s:.*?)(expr): the leftmost match of expr after a context rune.
func fromRegexp(expr string) func() *regexp.Regexp {
	return lazyRegexp(`\A(?s:.)(?s:.*?)(` + expr + `)`)
}
