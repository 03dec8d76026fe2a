package main

import (
	"strings"
)

// A small reader of manual pages (man(7) and the common part of mdoc(7)) for the Debian set:
// it turns a page into blocks of plain text (headings, paragraphs, literal blocks), decoding
// roff's escapes, so the generator can take example commands, description paragraphs and the
// page as text. What it cannot decode it marks (block.ok false) rather than guess.

// roffBlock is one block of a page: a paragraph (its lines joined with spaces), a literal block
// (.nf/.fi, .EX/.EE, .Bd -literal/.Ed, .Dl: one line each), or a section heading.
type roffBlock struct {
	kind    string // "heading", "para" or "literal"
	section string // the .SH/.Sh heading it is under, upper case
	lines   []string
	bold    []bool // per line: the whole source line was bold (.B, \fB...\fR, .Nm/.Ic line)
	line    int    // source line of the block's first line (1-based)
	ok      bool   // every escape and request of the block was understood
}

// roffChars are the named characters (\(xx, \[xx]) and strings (\*(xx) pages use, as text.
var roffChars = map[string]string{
	"aq": "'", "dq": "\"", "ga": "`", "ti": "~", "ha": "^", "rs": "\\", "em": "\u2014", "en": "\u2013",
	"hy": "-", "mi": "-", "pl": "+", "eq": "=", "bu": "\u2022", "lq": "\u201c", "rq": "\u201d",
	"oq": "\u2018", "cq": "\u2019", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "de": "\u00b0",
	"mu": "\u00d7", "lt": "<", "gt": ">", "ba": "|", "bv": "|", "sl": "/", "at": "@", "sh": "#",
	"Do": "$", "dg": "\u2020", "ua": "\u2191", "da": "\u2193", "->": "\u2192", "<-": "\u2190",
	"<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "fm": "\u2032", "sq": "\u25a1", "ci": "\u25cb",
	"lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "\u27e8", "ra": "\u27e9", "Fo": "\u00ab",
	"Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a", "`a": "\u00e0", "'e": "\u00e9", ":u": "\u00fc",
	":o": "\u00f6", ":a": "\u00e4", "ss": "\u00df", "ho": "\u02db",
	// pod2man's, asciidoc's and mdoc's strings
	"C+": "C++", "L\"": "\u201c", "R\"": "\u201d", "C'": "'", "C`": "`", "Aq": "'", "Tm": "\u2122",
	"Lq": "\u201c", "Rq": "\u201d", "Pi": "\u03c0", "Ne": "\u2260", "Le": "\u2264", "Ge": "\u2265",
	"Lt": "<", "Gt": ">", "Ba": "|", "Am": "&", "q": "\"", "R": "\u00ae",
}

// roffInline decodes the escapes of one line of text; ok is false when it met one it does not
// know (a register, a motion, a width), whose text it leaves out.
func roffInline(s string) (string, bool) {
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '"', '#': // comment to the end of the line
			return strings.TrimRight(b.String(), " \t"), ok
		case '-', '.', '\'', '`':
			if e == '-' {
				b.WriteByte('-')
			} else {
				b.WriteByte(e)
			}
		case 'e', '\\':
			b.WriteByte('\\')
		case '&', '|', '^', ')', ',', '/', '%', ':', 'c', 'd', 'u', 'p', 'r', 'a', 't':
			if e == 't' {
				b.WriteByte('\t')
			}
		case ' ', '~', '0':
			b.WriteByte(' ')
		case 'f', 'F', 'n', 'g', 'k', '*', '(', '[':
			// \fX, \f(XX, \f[...]; \nX, \n(XX, \n[...]; \*X, \*(XX, \*[...]; \(xx; \[name]
			var name string
			j := i + 1
			if e == '(' || e == '[' {
				j = i
			}
			switch {
			case j < len(s) && s[j] == '(' && j+2 < len(s):
				name, i = s[j+1:j+3], j+2
			case j < len(s) && s[j] == '[':
				k := strings.IndexByte(s[j:], ']')
				if k < 0 {
					return b.String(), false
				}
				name, i = s[j+1:j+k], j+k
			case j < len(s):
				name, i = s[j:j+1], j
			default:
				return b.String(), false
			}
			switch e {
			case 'f', 'F':
				// a font change: no text
			case '(', '[', '*':
				if t, known := roffChars[name]; known {
					b.WriteString(t)
				} else if strings.HasPrefix(name, "u") && len(name) == 5 {
					var r rune
					for _, h := range name[1:] {
						r <<= 4
						switch {
						case h >= '0' && h <= '9':
							r |= h - '0'
						case h >= 'A' && h <= 'F':
							r |= h - 'A' + 10
						case h >= 'a' && h <= 'f':
							r |= h - 'a' + 10
						}
					}
					b.WriteRune(r)
				} else {
					ok = false
				}
			default:
				ok = false
			}
		case 's':
			// \sN, \s+N, \s-N, \s(NN, \s[N]: a size change, no text
			j := i + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			switch {
			case j < len(s) && s[j] == '(':
				j += 3
			case j < len(s) && s[j] == '[':
				if k := strings.IndexByte(s[j:], ']'); k >= 0 {
					j += k + 1
				}
			default:
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
			}
			i = j - 1
		default:
			// \h'..', \v'..', \w'..', \N'..', \o'..', \l, \L, \x, \X, \Z and the rest
			ok = false
			if i+1 < len(s) && s[i+1] == '\'' {
				if k := strings.IndexByte(s[i+2:], '\''); k >= 0 {
					i += k + 2
				}
			}
		}
	}
	return b.String(), ok
}

// roffArgs splits the arguments of a request line as roff does: spaces separate, double quotes
// group ("" inside them is a quote).
func roffArgs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		var b strings.Builder
		if s[i] == '"' {
			i++
			for i < len(s) {
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' {
				b.WriteByte(s[i])
				i++
			}
		}
		out = append(out, b.String())
	}
	return out
}

// mdocCallable are the mdoc macros a line may call inline, with the text they put around their
// argument; the rest of a line's words are text.
var mdocCallable = map[string][2]string{
	"Nm": {}, "Ar": {}, "Pa": {}, "Cm": {}, "Em": {}, "Sy": {}, "Li": {}, "Ev": {}, "Ic": {},
	"Va": {}, "Dv": {}, "Er": {}, "No": {}, "Fa": {}, "Fn": {}, "Xr": {}, "Ns": {}, "Fl": {},
	"Ql": {"'", "'"}, "Dq": {"\u201c", "\u201d"}, "Sq": {"\u2018", "\u2019"}, "Qq": {"\"", "\""},
	"Pq": {"(", ")"}, "Op": {"[", "]"}, "Aq": {"<", ">"}, "Brq": {"{", "}"}, "Bq": {"[", "]"},
}

// mdocLine renders the words of an mdoc line (after its first macro) as text: .Fl prefixes a
// dash, .Xr writes name(section), .Ns joins, enclosures close at the line's end, and closing
// punctuation sticks to the word before it.
func mdocLine(macro string, args []string, name string) (string, bool) {
	words := append([]string{macro}, args...)
	var b strings.Builder
	var closers []string
	noSpace, ok := false, true
	put := func(w string) {
		if w == "" {
			return
		}
		if b.Len() > 0 && !noSpace && !strings.ContainsAny(w[:1], ".,:;)]?!") {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		noSpace = false
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		enc, isMacro := mdocCallable[w]
		if !isMacro {
			if len(w) >= 2 && w[0] >= 'A' && w[0] <= 'Z' && w[1] >= 'a' && w[1] <= 'z' && len(w) <= 3 && i == 0 {
				return "", false // a macro this reader does not know
			}
			put(w)
			continue
		}
		switch w {
		case "Nm":
			if i+1 >= len(words) || isMdocCallable(words[i+1]) || strings.ContainsAny(words[i+1], ".,:;)") && len(words[i+1]) == 1 {
				put(name)
			}
		case "Fl":
			if i+1 < len(words) {
				if _, m := mdocCallable[words[i+1]]; !m {
					i++
					put("-" + words[i])
					continue
				}
			}
			put("-")
		case "Xr":
			if i+2 < len(words) {
				put(words[i+1] + "(" + words[i+2] + ")")
				i += 2
			}
		case "Ns":
			noSpace = true
		default:
			if enc[0] != "" {
				put(enc[0])
				noSpace = true
				closers = append(closers, enc[1])
			}
		}
	}
	for j := len(closers) - 1; j >= 0; j-- {
		b.WriteString(closers[j])
	}
	s, dok := roffInline(b.String())
	return s, ok && dok
}

func isMdocCallable(w string) bool {
	_, ok := mdocCallable[w]
	return ok
}

// manFont are man(7)'s font macros: their arguments are text, joined with spaces (B, I, SM, SB)
// or without (the alternating ones).
var manFont = map[string]bool{"B": false, "I": false, "SM": false, "SB": false,
	"BR": true, "BI": true, "IR": true, "IB": true, "RB": true, "RI": true}

// parseRoff reads a man(7) or mdoc(7) page into blocks; name is the page's name (for .Nm).
func parseRoff(src, name string) []roffBlock {
	var blocks []roffBlock
	var cur *roffBlock
	section := ""
	literal := false
	flush := func() {
		if cur != nil && len(cur.lines) > 0 {
			blocks = append(blocks, *cur)
		}
		cur = nil
	}
	add := func(kind, text string, bold, ok bool, line int) {
		if section == "" && kind != "heading" {
			return // the preamble before the first section: definitions, no text
		}
		if cur == nil || cur.kind != kind {
			flush()
			cur = &roffBlock{kind: kind, section: section, line: line, ok: true}
		}
		cur.lines = append(cur.lines, text)
		cur.bold = append(cur.bold, bold)
		cur.ok = cur.ok && ok
	}
	lines := strings.Split(src, "\n")
	skipTo := "" // ".." ends a .de or .ig body
	depth := 0   // the \{ ... \} nesting of a conditional body being skipped
	for n := 0; n < len(lines); n++ {
		l := strings.TrimRight(lines[n], " \t\r")
		if skipTo != "" {
			if strings.TrimSpace(l) == ".." {
				skipTo = ""
			}
			continue
		}
		if depth > 0 {
			depth += strings.Count(l, "\\{") - strings.Count(l, "\\}")
			continue
		}
		if l == "" {
			if literal {
				add("literal", "", false, true, n+1)
			} else {
				flush()
			}
			continue
		}
		if l[0] != '.' && l[0] != '\'' {
			text, ok := roffInline(l)
			bold := strings.HasPrefix(l, "\\fB") && strings.Count(l, "\\f") == 2 && (strings.HasSuffix(l, "\\fR") || strings.HasSuffix(l, "\\fP"))
			if literal {
				add("literal", text, bold, ok, n+1)
			} else {
				add("para", text, bold, ok, n+1)
			}
			continue
		}
		for strings.HasSuffix(l, "\\") && !strings.HasSuffix(l, "\\\\") && n+1 < len(lines) {
			n++ // a request goes on on the next line
			l = l[:len(l)-1] + strings.TrimRight(lines[n], " \t\r")
		}
		req := strings.TrimLeft(l[1:], " \t")
		if strings.HasPrefix(req, "\\\"") || req == "" {
			continue // a comment
		}
		if strings.HasPrefix(req, "\\}") {
			continue // the end of a conditional body
		}
		macro, rest, _ := strings.Cut(req, " ")
		if i := strings.IndexByte(macro, '\\'); i > 0 {
			macro, rest = macro[:i], macro[i:]+" "+rest // .el\{\
		}
		args := roffArgs(rest)
		switch macro {
		case "de", "de1", "ig", "am":
			skipTo = ".."
			continue
		case "if", "ie", "el", "ds", "nr", "tr", "so", "rm", "als", "ne", "ad", "na", "hy", "nh", "ft",
			"ps", "vs", "ta", "ll", "lt", "pl", "ss", "cs", "bd", "ul", "cu", "mso", "Dd", "Dt", "Os", "TH", "ev", "do":
			depth = max(0, strings.Count(l, "\\{")-strings.Count(l, "\\}"))
			continue
		case "SH", "Sh", "SS", "Ss":
			flush()
			literal = false
			h, ok := roffInline(strings.Join(args, " "))
			if macro == "SH" || macro == "Sh" {
				section = strings.ToUpper(strings.TrimSpace(h))
			}
			add("heading", h, false, ok, n+1)
			flush()
		case "nf", "EX", "Bd":
			flush()
			literal = macro != "Bd" || (len(args) > 0 && (args[0] == "-literal" || args[0] == "-unfilled"))
		case "fi", "EE", "Ed":
			flush()
			literal = false
		case "Dl", "D1":
			flush()
			text, ok := mdocLine("No", args, name)
			add("literal", text, true, ok, n+1)
			flush()
		case "in", "RS", "RE", "sp", "PP", "P", "LP", "Pp", "TP", "TQ", "IP", "HP", "br", "Bl", "El", "It", "Lp", "ce", "YS", "SY", "OP", "ti":
			if !literal || macro == "PP" || macro == "P" || macro == "TP" || macro == "IP" {
				flush()
			}
			switch macro {
			case "IP":
				if len(args) > 0 {
					t, ok := roffInline(args[0])
					add("para", t, false, ok, n+1)
					flush()
				}
			case "It":
				if len(args) > 0 {
					t, ok := mdocLine(args[0], args[1:], name)
					add("para", t, false, ok, n+1)
					flush()
				}
			case "SY", "OP":
				t, ok := roffInline(strings.Join(args, " "))
				add("para", t, false, ok, n+1)
			}
		case "UR", "UE", "MT", "ME":
			if len(args) > 0 {
				t, ok := roffInline(args[0])
				if literal {
					add("literal", t, false, ok, n+1)
				} else {
					add("para", t, false, ok, n+1)
				}
			}
		default:
			var text string
			ok := true
			bold := false
			if alt, font := manFont[macro]; font {
				var parts []string
				for _, a := range args {
					t, aok := roffInline(a)
					parts = append(parts, t)
					ok = ok && aok
				}
				if alt {
					text = strings.Join(parts, "")
				} else {
					text = strings.Join(parts, " ")
					bold = macro == "B" && len(args) > 0
				}
				if len(args) == 0 {
					continue // the font of the next line: its words are text as usual
				}
			} else if _, m := mdocCallable[macro]; m {
				text, ok = mdocLine(macro, args, name)
				bold = macro == "Nm" || macro == "Ic"
			} else {
				// a request this reader does not follow: the block it is in is not taken
				if cur == nil {
					cur = &roffBlock{kind: "para", section: section, line: n + 1}
					if literal {
						cur.kind = "literal"
					}
				}
				cur.ok = false
				continue
			}
			if literal {
				add("literal", text, bold, ok, n+1)
			} else {
				add("para", text, bold, ok, n+1)
			}
		}
	}
	flush()
	return blocks
}

// plainText renders blocks as a page reads on a terminal, roughly: headings on their own line,
// paragraphs as one line each, literal lines indented.
func plainText(blocks []roffBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		switch bl.kind {
		case "heading":
			b.WriteString("\n" + bl.lines[0] + "\n")
		case "literal":
			for _, l := range bl.lines {
				b.WriteString("    " + l + "\n")
			}
		default:
			b.WriteString(strings.Join(strings.Fields(strings.Join(bl.lines, " ")), " ") + "\n\n")
		}
	}
	return strings.TrimLeft(b.String(), "\n")
}
