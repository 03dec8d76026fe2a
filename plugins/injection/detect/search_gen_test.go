package detect

// The search rules' plan generator (go generate, as the prefilter tables): for every rule of
// searchSQLRules it splits a top-level alternation into its branches and derives, for each,
// whether it is anchored at the text's start, the literal clauses every match satisfies
// (requiredClauses) and a window anchor (deriveAnchor with linearRuns), and writes
// search_gen.go. searchFind (search.go) uses them to search a long value without one regexp
// pass per rule.

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func deriveSearchPlans(t *testing.T) [][]genSearchBranch {
	var out [][]genSearchBranch
	for _, r := range searchSQLRules {
		parsed, err := syntax.Parse(r.re.String(), syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", r.rule, err)
		}
		subs := distribute(parsed)
		var brs []genSearchBranch
		for _, sub := range subs {
			expr := sub.String()
			if len(subs) == 1 {
				expr = "" // the rule's own expression
			}
			re, err := syntax.Parse(sub.String(), syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			s := re.Simplify()
			b := genSearchBranch{expr: expr, start: startAnchored(s), anchor: deriveAnchor(s)}
			if b.anchor.pre >= 0 {
				guard, ok := runGuard(s, b.anchor)
				if !ok {
					b.anchor = noAnchor
				}
				b.guard = guard
			}
			for _, c := range requiredClauses(s) {
				b.clauses = append(b.clauses, []string(c))
			}
			brs = append(brs, b)
		}
		out = append(out, brs)
	}
	return out
}

// maxSearchBranches bounds the branches one rule is searched as.
const maxSearchBranches = 64

// distribute returns re as branches whose leftmost-first matches combine into re's (the
// leftmost start, the earlier branch on a tie): a top-level alternation's alternatives, and a
// concatenation whose first alternation follows parts that match one way only (literals,
// character classes, empty-width assertions) as one concatenation per alternative (`\b(?:a|b)\(`
// is `\ba\(` or `\bb\(`: each may have a window anchor where the whole has none). With
// several ways to match the prefix, the order of preference would change, so it stays whole.
func distribute(re *syntax.Regexp) []*syntax.Regexp {
	out := distributeInto(nil, re)
	if len(out) > maxSearchBranches {
		if re.Op == syntax.OpAlternate {
			return re.Sub
		}
		return []*syntax.Regexp{re}
	}
	return out
}

func distributeInto(out []*syntax.Regexp, re *syntax.Regexp) []*syntax.Regexp {
	if len(out) > maxSearchBranches {
		return append(out, re)
	}
	switch re.Op {
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			out = distributeInto(out, s)
		}
		return out
	case syntax.OpConcat:
		for i, s := range re.Sub {
			alt := s
			for alt.Op == syntax.OpCapture {
				alt = alt.Sub[0]
			}
			if alt.Op == syntax.OpAlternate {
				for _, a := range alt.Sub {
					sub := append([]*syntax.Regexp(nil), re.Sub[:i]...)
					if a.Op == syntax.OpConcat {
						sub = append(sub, a.Sub...)
					} else {
						sub = append(sub, a)
					}
					sub = append(sub, re.Sub[i+1:]...)
					out = distributeInto(out, &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: sub})
				}
				return out
			}
			if !oneWay(s) {
				break
			}
		}
	}
	return append(out, re)
}

// oneWay reports whether re matches any text it matches in one way only.
func oneWay(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpEmptyMatch,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpCapture:
		return oneWay(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == re.Max && oneWay(re.Sub[0])
	}
	return false
}

// genSearchBranch is one branch's plan as derived.
type genSearchBranch struct {
	expr    string
	start   bool
	clauses [][]string
	anchor  genAnchorDef
	guard   []rune
}

// runGuard is linearRuns with one more case for a search branch: an unbounded repetition of a
// single character class (or rune) that can match the first rune of an anchor literal is
// allowed, and its class is added to guard (rune ranges). Windows are then used only on a
// text where no occurrence of the literals follows a rune of guard (searchBranchPlan.find):
// a run of such a class that reads past the next occurrence p would hold the rune before p,
// so it can only start at p, and each stretch of text between two occurrences is read by a
// bounded number of tries (`\bselect\s*[a-z_]+\(` in prose: "select" after a space). ok is
// false when a repetition that may match a first rune is not a single class.
func runGuard(re *syntax.Regexp, a genAnchorDef) (guard []rune, ok bool) {
	var first []rune
	for _, l := range a.lits {
		r, _ := utf8.DecodeRuneInString(l)
		first = append(first, r)
	}
	ok = true
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		unbounded := re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpRepeat && re.Max < 0
		if unbounded && maxWidth(re.Sub[0]) != 0 && slices.ContainsFunc(first, func(r rune) bool { return canMatchRune(re.Sub[0], r) }) {
			switch sub := re.Sub[0]; {
			case sub.Op == syntax.OpCharClass:
				guard = append(guard, sub.Rune...)
			case sub.Op == syntax.OpAnyCharNotNL:
				guard = append(guard, 0, '\n'-1, '\n'+1, unicode.MaxRune)
			case sub.Op == syntax.OpAnyChar:
				guard = append(guard, 0, unicode.MaxRune)
			case sub.Op == syntax.OpLiteral && len(sub.Rune) == 1 && sub.Flags&syntax.FoldCase == 0:
				guard = append(guard, sub.Rune[0], sub.Rune[0])
			default:
				ok = false
			}
		}
		for _, s := range re.Sub {
			walk(s)
		}
	}
	walk(re)
	return guard, ok
}

// startAnchored reports whether every match of re starts at the text's first byte (\A, or ^
// without the multi-line flag): Go's regexp then tries that one start only.
func startAnchored(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginText:
		return true
	case syntax.OpCapture:
		return startAnchored(re.Sub[0])
	case syntax.OpConcat:
		return len(re.Sub) > 0 && startAnchored(re.Sub[0])
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !startAnchored(s) {
				return false
			}
		}
		return true
	}
	return false
}

func searchPlansSource(plans [][]genSearchBranch) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go generate (TestSearchTables in search_gen_test.go); DO NOT EDIT.\n\n")
	b.WriteString("package detect\n\n")
	fmt.Fprintf(&b, "const genSearchFingerprint = %#x\n\n", searchRulesFingerprint())
	b.WriteString("// genSearch: per searchSQLRules entry, its branches as searched (see search.go).\n")
	b.WriteString("var genSearch = [][]searchBranch{\n")
	quote := func(l []string) string {
		q := make([]string, len(l))
		for i, s := range l {
			q[i] = strconv.Quote(s)
		}
		return "{" + strings.Join(q, ", ") + "}"
	}
	for _, brs := range plans {
		b.WriteString("{\n")
		for _, br := range brs {
			var cl []string
			for _, c := range br.clauses {
				cl = append(cl, quote(c))
			}
			clauses := "nil"
			if cl != nil {
				clauses = "[][]string{" + strings.Join(cl, ", ") + "}"
			}
			a := "anchor{pre: -1}"
			if br.anchor.pre >= 0 {
				a = fmt.Sprintf("anchor{%d, []string%s}", br.anchor.pre, quote(br.anchor.lits))
			}
			guard := ""
			if br.guard != nil && br.anchor.pre >= 0 {
				g := make([]string, len(br.guard))
				for i, r := range br.guard {
					g[i] = strconv.QuoteRune(r)
				}
				guard = ", guard: []rune{" + strings.Join(g, ", ") + "}"
			}
			fmt.Fprintf(&b, "{expr: %s, start: %v, clauses: %s, anchor: %s%s},\n", strconv.Quote(br.expr), br.start, clauses, a, guard)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return out
}

// TestSearchTables checks that search_gen.go matches searchSQLRules (with -update: rewrites
// it).
func TestSearchTables(t *testing.T) {
	want := searchPlansSource(deriveSearchPlans(t))
	got, _ := os.ReadFile("search_gen.go")
	if bytes.Equal(got, want) {
		return
	}
	if *update {
		if err := os.WriteFile("search_gen.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("search_gen.go is out of date: run go generate ./plugins/injection/detect")
}
