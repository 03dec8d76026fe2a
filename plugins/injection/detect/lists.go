package detect

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Lists of quoted values in prose (issue 26, data/heldout/debian-extra calib): a manual page
// names an option's values as quoted words joined by commas and "or"/"and" ("The possible values
// are “dsa,” “ecdsa,” or “rsa.”", "if value starts with "./" or "/"."), which quote_or_quote and
// quote_tautology read as a literal closed, or-ed and reopened. The drop below reads each match
// of those two rules as a list's joint and keeps the hits when any one is not.

// reListItem is one quoted value of a list: a word, a path, a version, a file pattern or a
// regular expression's sign ('^' or '$'), words separated by single spaces, with the comma or
// full stop American punctuation puts inside the quotes. No comparison, parenthesis, semicolon,
// comment sign or leading space: where the quotes pair otherwise, that would be SQL.
var reListItem = lazyre.New(`^[a-z0-9._:/*+?^$@%~-]+(?: [a-z0-9._:/*+?^$@%~-]+)*[.,]?$`)

// reListItemSQL is a SQL word or comment sign inside a quoted value: no list names these.
var reListItemSQL = lazyre.New(`\b(?:select|union|insert|update|delete|drop|from|where|sleep|benchmark|waitfor|exec|or|and|xor|not|null|like|true|false)\b|--|/\*`)

// reListJoint is the joint after an item's closing quote: "or" or "and", then the next item's
// opening quote.
var reListJoint = lazyre.New(`^\s*(?:or|and)\s+['"]`)

// reListAfter is what may follow a list's last item: the end of the text, a sentence's
// punctuation before a space or the end ("'b' != 'c'" and PostgreSQL's cast "'b'::bool" are
// no punctuation), a word that is no SQL operator or clause, or an aside of examples in
// parentheses ("suffixed with "user" or "users" (eg. "1 user" or "10 users")"; pam_issue(8),
// issue 26, data/heldout/hardneg-extra calib).
var reListAfter = lazyre.New(`^\s*(?:$|[.,:!?](?:\s|$)|[a-z]|\(\s*(?:e\.?g\.|i\.e\.|such as\b|for example\b|for instance\b))`)

// reListAfterSQL is a SQL operator or clause word after a list's item.
// "in" and "is" count as SQL only as the set and the test ("in (", "is not null"): "'off' in the
// config file" and "'strict' is the default" are English. "into" counts as the clause that
// writes a file or a variable ("into outfile", "into dumpfile", "into @v"): "device names such
// as "cdrom" or "floppy" into security contexts" (selabel_media(5); issue 26, helper det61,
// data/heldout/hardneg-extra calib) maps words into things.
var reListAfterSQL = lazyre.New(`^\s*(?:(?:not|like|rlike|regexp|between|sounds|union|limit|order|group|having|procedure|xor|div|mod|collate|escape)\b|into\s+(?:outfile|dumpfile|@)|in\s*\(|is\s+(?:not\s+)?(?:null|true|false|unknown)\b)`)

// truthyItem is a value a database reads as true when it is or-ed as a condition: a number
// that is not zero (MySQL converts a string that starts with one), a sign, or a boolean word
// (PostgreSQL's boolean literals).
func truthyItem(item string) bool {
	c := item[0]
	if c >= '0' && c <= '9' || c == '+' || c == '-' {
		return true
	}
	switch strings.TrimRight(item, ".,") {
	case "t", "true", "y", "yes", "on":
		return true
	}
	return false
}

// listItemAt reads the quoted value whose closing quote is at t[end] and reports it (without
// quotes) and the index of its opening quote; ok is false when no short value of reListItem
// closes there.
func listItemBefore(t string, end int) (item string, open int, ok bool) {
	q := t[end]
	lo := max(0, end-48)
	j := strings.LastIndexByte(t[lo:end], q)
	if j < 0 {
		return "", 0, false
	}
	open = lo + j
	item = t[open+1 : end]
	if item == "" || !reListItem.MatchString(item) || reListItemSQL.MatchString(item) {
		return "", 0, false
	}
	return item, open, true
}

// quotedListJoint reports whether the match of quote_or_quote or quote_tautology at t[at] is the
// joint of a list of quoted values: at is the closing quote of a value opened after a space, a
// parenthesis or the start of the text (not glued to a word, "admin' or", nor after an
// operator, "name = 'x' or"), and what follows is a list's tail (listTail). "' or '1'='1",
// "x' or 'x'='x' --", "'a' or 'b' = 'b'" and "'a' or '1'" are no joints.
func quotedListJoint(t string, at int) bool {
	if at >= len(t) || (t[at] != '\'' && t[at] != '"') {
		return false
	}
	if _, open, ok := listItemBefore(t, at); !ok {
		return false
	} else if open > 0 {
		p := strings.TrimRight(t[:open], " ")
		if len(p) == len(t[:open]) && t[open-1] != '(' {
			return false // glued to a word or a sign: a literal closed, not a value opened
		}
		if p != "" && strings.ContainsRune("=<>!|&", rune(p[len(p)-1])) {
			return false
		}
	}
	return listTail(t, at)
}

// listTail reports whether the quote at t[at] is followed by "or" or "and", then one more
// quoted value that starts with a letter or a path's sign and is no truthy literal, closed by
// the same quote and followed by the end of the text, punctuation or a word that is no SQL
// operator or clause ("'b' --", "'b'; drop", "'b' = 'b'", "'b' union" are no list's tail); or
// by "or not" at the end of a phrase ("retained" or not.).
func listTail(t string, at int) bool {
	if at >= len(t) || (t[at] != '\'' && t[at] != '"') {
		return false
	}
	q := t[at]
	rest := t[at+1:]
	if m := reOrNot.FindStringIndex(rest); m != nil {
		after := rest[m[1]:]
		return reListAfter.MatchString(after) && !reListAfterSQL.MatchString(after)
	}
	j := reListJoint.FindStringIndex(rest)
	if j == nil || rest[j[1]-1] != q {
		return false
	}
	rest = rest[j[1]:]
	k := strings.IndexByte(rest, q)
	if k <= 0 {
		return false
	}
	item := rest[:k]
	after := rest[k+1:]
	if !reListItem.MatchString(item) || reListItemSQL.MatchString(item) || truthyItem(item) && !asideQuantity(t, at, item, after) {
		return false
	}
	if strings.HasPrefix(after, ")") && proseParenOpen(t[:at]) {
		after = after[1:] // the list closes the aside it stands in: "(such as 'pass', 'class' or 'for'), ..."
	}
	return reListAfter.MatchString(after) && !reListAfterSQL.MatchString(after)
}

// reProseParen is an aside's opening in prose, up to the first quoted value of its list: "(such
// as ", "(e.g. ", "(for example, ", "(either ".
var reProseParen = lazyre.New(`^(?:such as|e\.?g\.,?|i\.e\.,?|like|for example,?|for instance,?|either|namely|say)\s+(?:['"][^'"()]{0,48}['"],?\s+)*['"][^'"()]*$`)

// proseParenOpen reports whether before ends inside a parenthesis that opens an aside in prose
// (reProseParen) and is not closed yet: a list of quoted values in it may end with its ")".
// "('a' or 'b') = ('b')", "(such as 'a' or 'b'); drop table" and "(such as 'a' or 'b')--" are
// still no list's tail (reListAfter, reListAfterSQL).
func proseParenOpen(before string) bool {
	i := strings.LastIndexByte(before, '(')
	return i >= 0 && i > strings.LastIndexByte(before, ')') && reProseParen.MatchString(before[i+1:])
}

// reQuantity is a number and the word it counts: "10 users", "5 minutes".
var reQuantity = lazyre.New(`^\d+ [a-z]+$`)

// asideQuantity reports whether item, the last value of a list whose joint is at t[at] with
// after following it, is a quantity (reQuantity) and the list is the examples of an aside in
// prose that closes right after it ("(eg. "1 user" or "10 users")"): a database would read the
// value as its number, true, but the aside was opened by the text's own words, not by a value
// closing a query's literal. "x' or '1 user", "(eg. '1 user' or '10 users') --" and a quantity
// outside an aside keep the hit.
func asideQuantity(t string, at int, item, after string) bool {
	return reQuantity.MatchString(item) && strings.HasPrefix(after, ")") && proseParenOpen(t[:at])
}

// reOrNot is "or not" after a quoted word ("retained" or not).
var reOrNot = lazyre.New(`^\s*or\s+not\b`)

// everyQuoteRuleMatch reports whether quote_or_quote or quote_tautology match t and ok holds
// at the start of each of their matches (everyMatch).
func everyQuoteRuleMatch(t string, ok func(at int) bool) bool {
	return everyMatch(sqlRules, t, ok, "quote_or_quote", "quote_tautology")
}

// quotedValueLists drops quote_or_quote and quote_tautology from a message when every match of
// both rules in the text is the joint of a list of quoted values (quotedListJoint): the rules
// report their first match only, and the attacker writes a list before the real tautology
// ("values are 'a' or 'b'. login as x' or 'x'='x' --" keeps the hit). Text that hides a part of
// itself (zero-width or tag characters, an HTML comment, a collapsed <details>) keeps them.
func quotedValueLists(r *Result) {
	if !ruleHit(r, SQLInjection, "quote_or_quote") && !ruleHit(r, SQLInjection, "quote_tautology") {
		return
	}
	t := r.Norm.Text
	if hidesPart(r) || strings.Contains(t, "<!--") {
		return
	}
	if everyQuoteRuleMatch(t, func(at int) bool { return quotedListJoint(t, at) }) {
		dropHits(r, SQLInjection, func(h Hit) bool { return h.Rule == "quote_or_quote" || h.Rule == "quote_tautology" })
	}
}

// ruleHit reports whether rule name of category c hit.
func ruleHit(r *Result, c Category, name string) bool {
	for _, h := range r.Hits {
		if h.Category == c && h.Rule == name {
			return true
		}
	}
	return false
}

// reCommandSubject is a file system builder's name as a sentence's subject: "mkfs is simply a
// front-end for the various filesystem builders" (util-linux's manual), "mkfs.ext4 will
// create": a name then a copula or a modal verb, which no device or option of mkfs is.
var reCommandSubject = lazyre.New(`^mkfs(?:\.\w+)?\s+(?:is|was|will|can|could|may|might|must|should|does|did|has|had|would)\s`)

// reCommandOrder is what makes a sentence about mkfs an order or a command line: a device or
// a path, an option, a request or the reader.
var reCommandOrder = lazyre.New(`/dev/|(?:^|\s)/|\s-{1,2}\w|\b(?:run|runs|ran|running|execute\w*|invoke\w*|call|type|enter|now|please|you|your|must|should|need|needs|immediately|format|wipe|erase|destroy)\b`)

// commandSubjects drops destructive from a message when every match of the rule (its whole
// regexp) is mkfs named as a sentence's subject (reCommandSubject): prose about the tool, not
// a command line. A later "mkfs.ext4 /dev/sda", any other destructive shape and text that
// hides a part of itself keep the hit.
func commandSubjects(r *Result) {
	if !ruleHit(r, CommandInjection, "destructive") {
		return
	}
	t := r.Norm.Text
	if hidesPart(r) || strings.Contains(t, "<!--") {
		return
	}
	if everyMatch(commandRules, t, func(at int) bool {
		if !reCommandSubject.MatchString(t[at:]) {
			return false
		}
		// The sentence describes the tool: it names no device or file system to run it on and
		// asks no one to run it ("mkfs.ext4 should be run on /dev/sda now").
		return !reCommandOrder.MatchString(sentenceHead(t[at:]))
	}, "destructive") {
		dropHits(r, CommandInjection, func(h Hit) bool { return h.Rule == "destructive" })
	}
}
