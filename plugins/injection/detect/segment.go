package detect

// Segments cut the unanchored searches windows cannot (issue 26, det54). A rule with no window
// anchor, or whose anchor occurs too often, searched a long text whole: Go's NFA steps every
// byte with every live thread, ~50-100 ns a byte for one rule natively and ten times that in
// the guest, and a 20 KB message of links made ~20 candidate rules do it (26 ms natively,
// 250-500 ms in the guest). Most rules cannot hold some ASCII bytes at all: blind_delay's
// match is separators, spaces, digits and a few words, never '[', '(' or '.'. Those bytes
// (the rule's barriers, generated: genBarriers) cut the text into segments no match crosses,
// and every match holds one of the literals of each of the rule's clauses (derived from its
// regexp: requiredClauses), so only the segments holding such a literal can hold a match.
// segmentFind searches those, in order, each with the barrier byte on either side as context
// (so ^, $, \A, \z and \b judge them as the full text would; no match can start or end on a
// barrier): the first segment with a match has the leftmost match, and leftmost-first
// preference within a segment is the full search's, since every path that leaves it must
// consume a barrier. Each byte is read a bounded number of times, whatever the text
// (TestSegmentFindAgrees, FuzzSegmentFind hold it to the plain search).

import (
	"regexp"
	"strings"
)

// barriers are the ASCII bytes no match of a rule holds, as bits (byte c: word c/64, bit c%64).
type barriers [2]uint64

func (b *barriers) has(c byte) bool { return c < 0x80 && b[c>>6]&(1<<(c&63)) != 0 }

// maxSegmentLits bounds the literals segmentFind tracks (one search position each).
const maxSegmentLits = 32

// segmentLits returns the literals of the rule's most selective clause (the fewest literals,
// then the longest shortest one), or nil when the rule is not searched by segments.
func (ru *rule) segmentLits() []string {
	if ru.bar == (barriers{}) || ru.id >= len(ruleClauses) {
		return nil
	}
	cl := clauseLits()
	var best []string
	for _, c := range ruleClauses[ru.id] {
		lits := cl[c]
		if len(lits) == 0 || len(lits) > maxSegmentLits || minLitLen(lits) == 0 {
			continue
		}
		if best == nil || len(lits) < len(best) || len(lits) == len(best) && minLitLen(lits) > minLitLen(best) {
			best = lits
		}
	}
	return best
}

func minLitLen(l []string) int {
	m := 1 << 30
	for _, s := range l {
		m = min(m, len(s))
	}
	return m
}

// segmentFind is re's FindStringIndex on t (FindStringSubmatchIndex when sub), where no match
// of re holds a byte of bar and every match holds one of lits (non-empty strings): only the
// segments of t between barriers that hold one of lits are searched.
func segmentFind(re *regexp.Regexp, bar *barriers, lits []string, t string, sub bool) []int {
	var nextBuf [maxSegmentLits]int
	next := nextBuf[:len(lits)] // each literal's next occurrence at or after pos; -1: none left
	for i := range next {
		next[i] = -2
	}
	for pos := 0; pos < len(t); {
		p := -1
		for i, l := range lits {
			if next[i] == -1 {
				continue
			}
			if next[i] < pos {
				j := strings.Index(t[pos:], l)
				if j < 0 {
					next[i] = -1
					continue
				}
				next[i] = pos + j
			}
			if p < 0 || next[i] < p {
				p = next[i]
			}
		}
		if p < 0 {
			return nil
		}
		a, b := p, p // the segment around p: [a, b), barriers (or the text's ends) outside
		for a > pos && !bar.has(t[a-1]) {
			a--
		}
		for b < len(t) && !bar.has(t[b]) {
			b++
		}
		if a < b {
			lo, hi := max(a-1, 0), min(b+1, len(t))
			var loc []int
			if sub {
				loc = re.FindStringSubmatchIndex(t[lo:hi])
			} else {
				loc = re.FindStringIndex(t[lo:hi])
			}
			if loc != nil {
				for i := range loc {
					if loc[i] >= 0 {
						loc[i] += lo
					}
				}
				return loc
			}
		}
		pos = b + 1
	}
	return nil
}
