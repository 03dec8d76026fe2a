package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Phrase reports whether the bytes [start, end) of cmd lie in text a reader would read as
// words: inside one shell word (a quoted string, `"you are now on the merge branch"`), inside
// the arguments of echo or printf (their output is the words joined, quoted or not), inside a
// here-document's body, or inside a comment. A span that crosses from one word of a command
// to the next (`go list "${1}")\/internal`, `--output private-backup.tar`, `vault write
// auth/.../secret-id`) is a program's arguments, not a sentence. A line that does not parse, or
// a span that is not in cmd, is a phrase: the caller keeps what it found (issue 26, fifth
// round).
func Phrase(cmd string, start, end int) bool {
	if start < 0 || end > len(cmd) || start >= end {
		return true
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return true
	}
	within := func(n syntax.Node) bool {
		return n.Pos().IsValid() && int(n.Pos().Offset()) <= start && end <= int(n.End().Offset())
	}
	var inner syntax.Node
	crosses, echoArgs := false, false
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			// a span that starts inside a substitution and ends outside it (or the other way)
			// runs across commands
			p, e := int(x.Pos().Offset()), int(x.End().Offset())
			if p < end && start < e && !(p <= start && end <= e) && !(start <= p && e <= end) {
				crosses = true
			}
		case *syntax.CallExpr:
			if len(x.Args) > 1 {
				switch wordText(x.Args[0]) {
				case "echo", "printf":
					first, last := x.Args[1], x.Args[len(x.Args)-1]
					if int(first.Pos().Offset()) <= start && end <= int(last.End().Offset()) {
						echoArgs = true
					}
				}
			}
		}
		if within(n) {
			inner = n
		}
		return true
	})
	if crosses {
		return false
	}
	if echoArgs {
		return true
	}
	switch inner.(type) {
	case *syntax.Word, *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.Comment:
		return true
	}
	return false
}
