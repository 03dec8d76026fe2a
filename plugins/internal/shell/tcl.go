package shell

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// More languages' one-liners (issue 26 class 2), read token by token as code.go reads the
// others: Tcl (tclsh, wish, and expect, which is Tcl with spawn, send and expect), R (Rscript
// -e, R -e) and Julia (julia -e).
//
// Tcl is read by its own word rules (Tcl(n): a command is words up to a newline or `;`, a word
// in braces is literal, one in double quotes or bare may hold a `[script]`), because its danger
// is in which command a line runs, not in a call with parentheses:
//   - `exec PROGRAM ARGS…` runs a program (Tcl's exec(n)); expect's `spawn PROGRAM ARGS…` runs one
//     under a pseudo-terminal (expect(1)); both are judged as that command;
//   - expect's `system ARGS…` hands its words, joined, to /bin/sh (expect(1));
//   - `open "|PROGRAM ARGS…"` runs a pipeline (Tcl's open(n));
//   - `file delete ?-force? PATH…` deletes, directories with their contents under -force
//     (Tcl's file(n)), judged as rm of those paths;
//   - a braced word (a body of if, catch, after, proc, foreach…) and a `[script]` are read as
//     scripts too, and `$env(HOME)` is the home directory.
//
// R's system() runs its text in a shell and system2(COMMAND, ARGS) pastes its command and
// arguments into one (R's documentation of both); its unlink(PATH, recursive = TRUE) and
// file.remove() delete. Julia's backtick literal is a command (Julia manual, "Running External
// Programs"), run by run(), success() or read(); its rm(PATH; recursive = true) deletes.

// tclLang reports whether lang (an interpreter's name without its version) reads Tcl.
func tclLang(lang string) bool {
	return lang == "tclsh" || lang == "wish" || lang == "expect"
}

// rLang reports whether lang runs R code.
func rLang(lang string) bool { return lang == "Rscript" || lang == "R" }

// tclWord is one word of a Tcl command: its text without the braces or quotes around it, and
// whether it was braced (literal: no substitution).
type tclWord struct {
	text   string
	braced bool
}

// tclHome matches Tcl's ways of naming the home directory through the environment.
var tclHome = lazyre.New(`\$(?:::)?env\(HOME\)|\$\{(?:::)?env\(HOME\)\}`)

// tcl judges Tcl script text (tclsh, wish, expect) at nesting depth d of scripts within it.
func (a *analyzer) tcl(src, line string, d int) {
	if d > MaxDepth {
		a.res.Incomplete = true
		return
	}
	src = tclHome.ReplaceAllString(src, "~")
	for _, words := range tclCommands(src) {
		a.tclCommand(words, line, d)
	}
}

// tclCommand judges one Tcl command and the scripts its words hold.
func (a *analyzer) tclCommand(words []tclWord, line string, d int) {
	if len(words) == 0 {
		return
	}
	evals := words[0].text == "eval" || words[0].text == "uplevel"
	for _, w := range words {
		if w.braced && !evals {
			a.tcl(w.text, line, d+1) // a body: if, catch, after, proc, foreach … (eval's below)
		}
		for _, s := range tclSubstitutions(w) {
			a.tcl(s, line, d+1)
		}
	}
	texts := make([]string, len(words))
	for i, w := range words {
		texts[i] = w.text
	}
	args := texts[1:]
	switch texts[0] {
	case "exec", "spawn", "::exec":
		// exec's options (-ignorestderr, -keepnewline) and spawn's (-noecho, -open, -ignore
		// SIGNAL…) come first, up to `--`; exec's redirections and a last `&` are not
		// the program's words.
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			stop := args[0] == "--"
			if args[0] == "-ignore" || args[0] == "-open" || args[0] == "-leaveopen" {
				args = args[1:]
			}
			if len(args) > 0 {
				args = args[1:]
			}
			if stop {
				break
			}
		}
		// exec's pipes and plain redirections are the shell's; its own (`2>@1`, `>@ chan`) and a
		// last `&` are dropped.
		var words []string
		for _, x := range args {
			switch {
			case x == "&" || strings.Contains(x, "@") && strings.ContainsAny(x, "<>"):
			case x == "|" || x == "|&" || x == "<" || x == ">" || x == ">>" || x == "2>" || x == "2>>":
				words = append(words, x)
			default:
				words = append(words, shellQuote(x))
			}
		}
		if len(words) > 0 {
			a.line(strings.Join(words, " "), a.depth+1)
		}
	case "system":
		if len(args) > 0 {
			a.line(strings.Join(args, " "), a.depth+1)
		}
	case "open":
		if len(args) > 0 && strings.HasPrefix(args[0], "|") {
			a.line(args[0][1:], a.depth+1)
		}
	case "file":
		if len(args) == 0 || args[0] != "delete" {
			return
		}
		argv := []string{"rm"}
		for _, x := range args[1:] {
			switch x {
			case "-force":
				argv = append(argv, "-rf")
			case "--":
			default:
				argv = append(argv, x)
			}
		}
		if len(argv) > 1 {
			a.command(argv)
		}
	case "eval", "uplevel":
		if len(args) > 0 && texts[0] == "uplevel" && (strings.HasPrefix(args[0], "#") || args[0] != "" && args[0][0] >= '0' && args[0][0] <= '9') {
			args = args[1:] // uplevel's level
		}
		a.tcl(strings.Join(args, " "), line, d+1)
	}
}

// tclCommands splits Tcl script text into commands and each command into words, by Tcl(n)'s
// rules, simplified: backslash-newline joins lines, `#` at a command's start is a comment, a
// braced word ends at its matching brace, a quoted one at its closing quote, a bare one at
// white space or `;` outside `[…]`. Backslash escapes inside quoted and bare words are
// resolved; substitution of variables is not made.
func tclCommands(src string) [][]tclWord {
	src = strings.ReplaceAll(src, "\\\n", " ")
	var cmds [][]tclWord
	var cur []tclWord
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\n' || c == ';':
			if len(cur) > 0 {
				cmds = append(cmds, cur)
				cur = nil
			}
			i++
		case c == '#' && len(cur) == 0:
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '{':
			end := tclClose(src, i, '{', '}')
			cur = append(cur, tclWord{text: src[i+1 : max(i+1, end-1)], braced: true})
			i = end
		case c == '"':
			text, j := tclText(src, i+1, "\"")
			cur = append(cur, tclWord{text: text})
			i = min(j+1, len(src))
		default:
			text, j := tclText(src, i, " \t\r\n;")
			cur = append(cur, tclWord{text: text})
			i = j
		}
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// tclText reads a quoted or bare word's text from src[i:] up to a byte of stops: backslash
// escapes resolved, a `[script]` kept whole. It returns the text and the index it stopped at.
func tclText(src string, i int, stops string) (string, int) {
	var b strings.Builder
	for i < len(src) && strings.IndexByte(stops, src[i]) < 0 {
		switch {
		case src[i] == '\\' && i+1 < len(src):
			b.WriteByte(tclEscape(src[i+1]))
			i += 2
		case src[i] == '[':
			end := tclClose(src, i, '[', ']')
			b.WriteString(src[i:end])
			i = end
		default:
			b.WriteByte(src[i])
			i++
		}
	}
	return b.String(), i
}

// tclClose returns the index just past the bracket that closes the one at src[i] (open),
// counting nesting and skipping backslash escapes; len(src) when it does not close.
func tclClose(src string, i int, open, close byte) int {
	depth := 0
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(src)
}

// tclEscape is the character a Tcl backslash sequence \c stands for (the common ones).
func tclEscape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return c
}

// tclSubstitutions returns the scripts of the command substitutions (`[…]`) in an unbraced
// word.
func tclSubstitutions(w tclWord) []string {
	if w.braced || !strings.Contains(w.text, "[") {
		return nil
	}
	var out []string
	for i := 0; i < len(w.text); i++ {
		if w.text[i] == '[' {
			end := tclClose(w.text, i, '[', ']')
			out = append(out, w.text[i+1:max(i+1, end-1)])
			i = end - 1
		}
	}
	return out
}

var (
	// rShell2 matches R's system2(), whose command and arguments are pasted into one shell
	// line.
	rShell2 = lazyre.New(`\bsystem2\s*\(`)
	// juliaCmd matches a Julia command literal: `…` (not inside a string, which one-liners
	// rarely hold).
	juliaCmd = lazyre.New("`([^`]*)`")
	// juliaRm matches Julia's rm(), which deletes its path (recursively with recursive=true).
	juliaRm = lazyre.New(`(?:^|[^.\w])rm\s*\(`)
)

// rCode judges what R code runs through system2: its literals joined with spaces as shell
// text (system() and the deletes are code.go's general calls).
func (a *analyzer) rCode(src string) {
	for _, loc := range rShell2.FindAllStringIndex(src, 16) {
		if lits := literals(balanced(src[loc[1]-1:])); len(lits) > 0 {
			a.line(strings.Join(lits, " "), a.depth+1)
		}
	}
}

// juliaCode judges a Julia one-liner's command literals and its rm() calls.
func (a *analyzer) juliaCode(src, line string) {
	for _, m := range juliaCmd.FindAllStringSubmatch(src, 16) {
		a.line(m[1], a.depth+1)
	}
	for _, loc := range juliaRm.FindAllStringIndex(src, 16) {
		a.codeDelete("rm", balanced(src[loc[1]-1:]), line)
	}
}
