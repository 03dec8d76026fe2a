package detect

// The bytes and runes a regexp may consume, read from its syntax tree: the generator's
// anchors and barriers (window_gen_test.go, prefilter_gen_test.go) and, at run time, the
// barriers of the hand-written regexps searched by segments (docs.go: hidingParts; det57).

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// canMatchRune reports whether re may consume r as its first rune (true when unsure).
func canMatchRune(re *syntax.Regexp, r rune) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return false
		}
		if re.Flags&syntax.FoldCase != 0 {
			return unicode.SimpleFold(re.Rune[0]) == r || re.Rune[0] == r || unicode.ToLower(re.Rune[0]) == unicode.ToLower(r)
		}
		return re.Rune[0] == r
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= r && r <= re.Rune[i+1] {
				return true
			}
		}
		return false
	case syntax.OpAnyCharNotNL:
		return r != '\n'
	case syntax.OpCapture:
		return canMatchRune(re.Sub[0], r)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if canMatchRune(s, r) {
				return true
			}
		}
		return false
	}
	return true
}

// barrierBytes returns the ASCII bytes no match of re can hold, as bits (segment.go): a byte
// is a barrier unless some part of re may consume it as a rune (case folding included). It
// errs toward consuming: a barrier that is not one would split a match.
func barrierBytes(re *syntax.Regexp) (bar [2]uint64) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		if !mayConsume(re, c) {
			bar[c>>6] |= 1 << (c & 63)
		}
	}
	return bar
}

// mayConsume reports whether re may consume the rune c anywhere in a match.
func mayConsume(re *syntax.Regexp, c rune) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == c {
				return true
			}
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if f == c {
						return true
					}
				}
			}
		}
		return false
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return canMatchRune(re, c)
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return false
	}
	for _, s := range re.Sub {
		if mayConsume(s, c) {
			return true
		}
	}
	return false
}
