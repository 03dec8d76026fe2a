package detect

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// reWordComparison is or_tautology's match as prose writes a filter or a condition: "or", then
// one bare word compared with another ("For example, user = operator or host = www", a filter
// expression in cvtsudoers(1); issue 26, data/heldout/debian-extra calib). No quote and no
// parenthesis: a literal or a group closed and re-opened is SQL's.
var reWordComparison = lazyre.New(`^or\s+(\w+)\s*(?:=|like)\s*(\w+)$`)

// reAfterComparison is what ends a query after a condition: a comment or a second statement.
var reAfterComparison = lazyre.New(`^\s*(?:--|#|/\*|;)`)

// wordComparisonAt reports whether the or_tautology match t[at:end] compares two different bare
// words (reWordComparison), is not glued to a quote or a parenthesis a value closed before it,
// and is not followed by a comment or a statement's end. "x' or a = a", "1) or id = id",
// "or 1 = 1", "or 'a' = 'a'" and "or a = b --" stay tautologies.
func wordComparisonAt(t string, at, end int) bool {
	m := reWordComparison.FindStringSubmatch(t[at:end])
	if m == nil || strings.EqualFold(m[1], m[2]) {
		return false
	}
	before := strings.TrimRight(t[:at], " \t")
	if before != "" && strings.ContainsRune(`'"`+"`)", rune(before[len(before)-1])) {
		return false
	}
	return !reAfterComparison.MatchString(t[end:])
}

// wordComparisons drops or_tautology from wordy prose when every match of the rule compares two
// different bare words (wordComparisonAt): a filter or a condition described, which no row
// satisfies by itself. A text that hides a part of itself keeps the hit.
func wordComparisons(r *Result) {
	if !ruleHit(r, SQLInjection, "or_tautology") || hidesPart(r) {
		return
	}
	t := r.Norm.Text
	if everyMatchSpan(sqlRules, t, func(at, end int) bool { return wordComparisonAt(t, at, end) }, "or_tautology") {
		dropHits(r, SQLInjection, func(h Hit) bool { return h.Rule == "or_tautology" })
	}
}
