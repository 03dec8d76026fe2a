package detect

// The window anchors' generator (part of TestGeneratedTables): for every rule as run it
// derives, from the regexp's syntax tree, a set of literals one of which every match contains
// within a bounded distance of the match's start (see window.go).

import (
	"regexp/syntax"
	"unicode/utf8"
)

// maxAnchorPre is the longest distance from a match's start to its anchor literal that
// deriveAnchor accepts: each occurrence of the literal costs one anchored try per byte of it.
const maxAnchorPre = 48

// maxAnchorLits bounds an anchor's literal set: each literal is one search of the text.
const maxAnchorLits = 96

// genAnchorDef is one rule's anchor as derived; pre < 0 means the rule has none.
type genAnchorDef struct {
	pre  int
	lits []string
}

var noAnchor = genAnchorDef{pre: -1}

// maxWidth is the most bytes a match of re can span, or -1 when unbounded.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				n += utf8.UTFMax // a folded rune may encode longer than the one written
			} else {
				n += utf8.RuneLen(r)
			}
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return encodedLen(re.Rune[len(re.Rune)-1])
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxWidth(re.Sub[0]) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		w := maxWidth(re.Sub[0])
		if w == 0 {
			return 0
		}
		if w < 0 || re.Max < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			n += w
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			n = max(n, w)
		}
		return n
	}
	return -1
}

// encodedLen is the most bytes any rune up to r encodes to (surrogates included, as the
// replacement character they match).
func encodedLen(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// deriveAnchor returns literals of which every match of re holds one starting at most pre
// bytes after the match's start, or noAnchor.
func deriveAnchor(re *syntax.Regexp) genAnchorDef {
	if e := exactSet(re); e != nil {
		if minLen(e) == 0 {
			return noAnchor
		}
		return genAnchorDef{0, dedup(e)}
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return deriveAnchor(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return deriveAnchor(re.Sub[0])
		}
	case syntax.OpAlternate:
		out := genAnchorDef{}
		for _, s := range re.Sub {
			a := deriveAnchor(s)
			if a.pre < 0 {
				return noAnchor
			}
			out.pre = max(out.pre, a.pre)
			out.lits = append(out.lits, a.lits...)
		}
		out.lits = dedup(out.lits)
		if len(out.lits) > maxAnchorLits {
			return noAnchor
		}
		return out
	case syntax.OpConcat:
		best := noAnchor
		consider := func(a genAnchorDef, off int) {
			if a.pre < 0 || off+a.pre > maxAnchorPre || len(a.lits) > maxAnchorLits {
				return
			}
			a.pre += off
			if best.pre < 0 || betterAnchor(a, best) {
				best = a
			}
		}
		off := 0
		for i := 0; i < len(re.Sub); {
			// A run of exact children is one literal set ("q" then ":" gives "q:").
			j := i
			for j < len(re.Sub) && exactSet(re.Sub[j]) != nil {
				j++
			}
			if j > i {
				if e := exactSet(&syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[i:j]}); e != nil && minLen(e) > 0 {
					consider(genAnchorDef{0, dedup(e)}, off)
				}
				for ; i < j; i++ {
					consider(deriveAnchor(re.Sub[i]), off)
					off += maxWidth(re.Sub[i]) // exact: always bounded
				}
				continue
			}
			consider(deriveAnchor(re.Sub[i]), off)
			w := maxWidth(re.Sub[i])
			if w < 0 {
				break // nothing after an unbounded part is a bounded distance from the start
			}
			off += w
			i++
		}
		return best
	}
	return noAnchor
}

// betterAnchor prefers longer shortest literals (fewer occurrences), then fewer literals,
// then a shorter distance from the start.
func betterAnchor(a, b genAnchorDef) bool {
	ma, mb := min(minLen(a.lits), 4), min(minLen(b.lits), 4)
	if ma != mb {
		return ma > mb
	}
	if len(a.lits) != len(b.lits) {
		return len(a.lits) < len(b.lits)
	}
	return a.pre < b.pre
}

// linearRuns reports whether anchored runs from different occurrences of a's literals cost at
// most one pass over the text between them: every unbounded repetition in re is of one
// character class that cannot match the first rune of any of the literals, so a run that
// reached another occurrence stops there (give or take a bounded part). Without it, windows
// could cost quadratic time: `'.*--$` tried from each of 4,000 quotes on one long line reads
// the line 4,000 times, where one unanchored pass reads it once.
func linearRuns(re *syntax.Regexp, a genAnchorDef) bool {
	var first []rune
	for _, l := range a.lits {
		r, _ := utf8.DecodeRuneInString(l)
		first = append(first, r)
	}
	var ok func(re *syntax.Regexp) bool
	ok = func(re *syntax.Regexp) bool {
		unbounded := re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpRepeat && re.Max < 0
		if unbounded && maxWidth(re.Sub[0]) != 0 {
			for _, r := range first {
				if canMatchRune(re.Sub[0], r) {
					return false
				}
			}
		}
		for _, s := range re.Sub {
			if !ok(s) {
				return false
			}
		}
		return true
	}
	return ok(re)
}
