package detect

import (
	"strings"

	libinjection "github.com/corazawaf/libinjection-go"
)

// ruleFingerprint is the rule of a search value that libinjection reads as SQL injection.
const ruleFingerprint = "search/libinjection"

// fingerprintSQL asks libinjection (github.com/corazawaf/libinjection-go, the Coraza WAF's Go
// port of the tokenizer behind ModSecurity CRS rule 942100) whether a search value is SQL
// injection, when the rules' own votes did not already decide it. libinjection folds the
// value's first tokens into a fingerprint (`1&1` for `1 = 1 or 1`, `nUE1` for `foo - (bar)
// union select 1`) and looks it up in a list learned from attacks on HTTP parameters, which a
// search box's value is: it knows shapes no rule here spells out, but it also reads some
// searches a person types as SQL (`1 or 2 or 3`, `1 --verbose`, a quoted "union select"). So
// its finding is uncertain, asked and never denied on its own (issue 26): the rules' votes
// below the cut become uncertain with it, since what fires then fires because of the
// fingerprint. A search value only: on statements, prose, code and shell its fingerprints
// are wrong as often as right, and a question (see judgeKind) or a code-search tool's query
// never reaches it.
func fingerprintSQL(r *Result, d *Detector) {
	if !d.enabled[SQLInjection] || r.Scores[SQLInjection] >= d.Cut(SQLInjection) {
		return
	}
	ok, fp := libinjection.IsSQLi(r.Norm.Text)
	if !ok || len(fp) >= 2 && (fp[0] == 'E' || fp[0] == 'f') && fp[1] == '(' {
		// A value that starts with a word and a parenthesis is a product name as often as
		// a call (`select (2) items`, `char(broil) grill`, `max(speed) 200`): the rules
		// judge SQL function calls themselves (search/sql_function_args, search/select_call).
		return
	}
	if booleanSearch(fp, r.Norm.Text) {
		return
	}
	for i := range r.Hits {
		if r.Hits[i].Category == SQLInjection {
			r.Hits[i].Uncertain = true
		}
	}
	voteHit(r, d, Hit{Category: SQLInjection, Rule: ruleFingerprint, Weight: 0.85, Match: r.Norm.Text, Uncertain: true})
}

// booleanSearch reports whether libinjection's fingerprint fp of t is a boolean search of words
// (issue 26: `(welcome OR bye) AND hello`, `fizz AND (buzz OR baz)`): only bare words (n),
// boolean operators (&) and parentheses, or also strings (s) when t's quotes only set off
// phrases (phraseQuery), and then also operators (o) when every operator sign outside the
// phrases is a search engine's own (searchOperators: `"fried eggs" +(eggplant | potato)
// -frittata`). SQL that libinjection reads so has a literal, a number, a keyword, a
// comparison or a comment, and a fingerprint with another token.
func booleanSearch(fp, t string) bool {
	tokens := "n&()"
	if phraseQuery(t) {
		tokens = "sn&()"
		if searchOperators(t) {
			tokens = "sno&()"
		}
	}
	return fp != "" && strings.Trim(fp, tokens) == ""
}

// searchOperators reports whether every operator sign of t outside its double-quoted phrases
// is one of a search engine's query syntax (Lucene's and Elasticsearch's simple_query_string):
// `+` or `-` that marks the next term, group or phrase required or excluded (at the start or
// after a space or an opening parenthesis, and glued to a letter, a quote or a parenthesis),
// and `|` standing alone between spaces, simple_query_string's OR. No digit may stand outside
// the phrases: an operator beside a number is arithmetic (`"a" +(1)`, `"a" | 1`), and SQL's
// `||`, a sign before a space or after a word (`x -1`, `"a" - "b"`) is no search operator.
// t has passed phraseQuery, so it holds no comparison, comment, call or SQL keyword outside
// its phrases.
func searchOperators(t string) bool {
	in := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '"':
			in = !in
		case in:
		case c >= '0' && c <= '9':
			return false
		case c == '+' || c == '-':
			if i > 0 && !strings.ContainsRune(" (", rune(t[i-1])) || i+1 == len(t) || !isLetter(t[i+1]) && !strings.ContainsRune(`"(`, rune(t[i+1])) {
				return false
			}
		case c == '|':
			if i == 0 || i+1 == len(t) || t[i-1] != ' ' || t[i+1] != ' ' {
				return false
			}
		case strings.IndexByte("*/%^~!&<>=:", c) >= 0:
			return false
		}
	}
	return true
}
