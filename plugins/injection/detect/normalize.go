package detect

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// maxDecodeRounds bounds repeated URL decoding (%25252e takes three rounds).
const maxDecodeRounds = 4

// Normalized is a text after Normalize, with what normalization had to undo.
type Normalized struct {
	// Text is decoded (URL, %u, overlong UTF-8, HTML entities, Unicode tag characters), NFKC
	// normalized, case folded, with invisible and NUL characters removed and each run of white
	// space collapsed to one newline (if it held one: newlines separate commands) or one space.
	Text string
	// DecodeRounds counts URL decoding rounds that changed the text (2+ = double encoding).
	DecodeRounds int
	// Overlong is set when an overlong UTF-8 sequence (%c0%ae) was decoded.
	Overlong bool
	// NUL is set when the input held a NUL byte (raw or encoded).
	NUL bool
	// Invisible counts zero-width, bidi-control and soft-hyphen characters removed.
	Invisible int
	// TagChars counts Unicode tag characters (U+E0000 block) decoded to ASCII: hidden text.
	TagChars int
	// Entities is set when HTML entities were decoded.
	Entities bool
	// NFKC is set when compatibility normalization changed the text (fullwidth or circled
	// characters, ligatures): a common way to slip ASCII payloads past filters.
	NFKC bool
}

// Normalize prepares s for matching: repeated URL decoding (including %uXXXX and overlong
// UTF-8), HTML entity decoding, Unicode tag characters to ASCII, NFKC, case folding, removal of
// zero-width and control characters, white space collapsed. It never panics and always returns
// valid UTF-8.
func Normalize(s string) Normalized {
	if t, ok := normalizePlainASCII(s); ok {
		return Normalized{Text: t}
	}
	return normalizeFull(s)
}

// normalizeFull is Normalize without the plain-ASCII fast path.
func normalizeFull(s string) Normalized {
	var n Normalized
	cur := s
	for i := 0; i < maxDecodeRounds; i++ {
		next, overlong, changed := urlDecode(cur)
		if !changed {
			break
		}
		n.DecodeRounds++
		n.Overlong = n.Overlong || overlong
		cur = next
	}
	if n.DecodeRounds > 0 && strings.IndexByte(s, '+') >= 0 && !strings.ContainsAny(s, " \t\n") {
		// Percent-encoded with '+' and no white space: a form-encoded value
		// (application/x-www-form-urlencoded), where '+' is a space ("%27%3B+waitfor+delay+%27").
		cur = strings.ReplaceAll(cur, "+", " ")
	}
	if strings.IndexByte(cur, '&') >= 0 {
		if u := html.UnescapeString(cur); u != cur {
			n.Entities = true
			cur = u
		}
	}
	if !utf8.ValidString(cur) {
		cur = strings.ToValidUTF8(cur, "\uFFFD")
	}
	if !isASCII(cur) {
		if nf := norm.NFKC.String(cur); nf != cur {
			n.NFKC = true
			cur = nf
		}
	}
	b := make([]byte, 0, len(cur))
	space, newline := false, false
	var prev rune // the rune before r in cur
	for i, r := range cur {
		if i > 0 {
			prev, _ = utf8.DecodeLastRuneInString(cur[:i])
		}
		if r >= 0x20 && r < 0x7F {
			// printable ASCII: the common case, no table lookups
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			if r == ' ' {
				if !space {
					b = append(b, ' ')
				}
				space = true
				continue
			}
			space, newline = false, false
			b = append(b, byte(r))
			continue
		}
		switch {
		case r == 0:
			n.NUL = true
			continue
		case r >= 0xE0020 && r <= 0xE007E:
			n.TagChars++
			r = r - 0xE0000
		case r >= 0xE0000 && r <= 0xE007F:
			n.TagChars++
			continue
		case r == 0x3002 || r == 0xFF61 || r == 0xFE52:
			// ideographic and small full stops: NFKC keeps them, URL parsers may not
			n.NFKC = true
			r = '.'
		case r == 0x2215 || r == 0x2044 || r == 0x29F8:
			// division and fraction slashes: IIS %u2215 traversal
			n.NFKC = true
			r = '/'
		case r == 0x2216 || r == 0x29F9 || r == 0xFE68:
			n.NFKC = true
			r = '\\'
		case r == 0x2018 || r == 0x2019 || r == 0x201B || r == 0x2032 || r == 0xFF07:
			// curly and prime quotes: some databases and shells treat them as quotes
			n.NFKC = true
			r = '\''
		case r == 0x201C || r == 0x201D || r == 0x2033 || r == 0xFF02:
			n.NFKC = true
			r = '"'
		case isInvisible(r):
			if r >= 0xFE00 && r <= 0xFE0F && prev != 0 && !isInvisible(prev) && !unicode.IsSpace(prev) {
				// One variation selector after a visible character picks its presentation
				// ("✔️" is U+2714 U+FE0F, in READMEs everywhere): not hidden text. A run of
				// selectors (data smuggled in them) still counts from its second.
				continue
			}
			n.Invisible++
			continue
		case r == '\n' || r == '\r':
			// A newline is a command separator: keep one per run of white space.
			if space && !newline {
				b = b[:len(b)-1] // the run's space becomes its newline
				space = false
			}
			if !space {
				b = append(b, '\n')
			}
			space, newline = true, true
			continue
		case unicode.IsSpace(r) || unicode.IsControl(r):
			if !space {
				b = append(b, ' ')
			}
			space = true
			continue
		}
		space, newline = false, false
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	n.Text = string(b)
	return n
}

// normalizePlainASCII is Normalize's fast path, one pass for the common case: printable
// ASCII, tabs and newlines only, with nothing to decode ('%', '&') and no NUL or other control
// character. It reports false, having done nothing useful, for any other text.
func normalizePlainASCII(s string) (string, bool) {
	if len(s) == 0 {
		return "", true
	}
	if len(s) <= 64 {
		// A short text is written on the stack: unchanged (already lower case, single
		// spaces) it is returned as it is, without allocating.
		var small [64]byte
		j, ok := plainASCIIInto(small[:len(s)], s)
		switch {
		case !ok:
			return "", false
		case j == 0:
			return "", true
		case string(small[:j]) == s:
			return s, true
		}
		return string(small[:j]), true
	}
	b := make([]byte, len(s))
	j, ok := plainASCIIInto(b, s)
	if !ok {
		return "", false
	}
	if j == 0 {
		return "", true
	}
	return unsafe.String(&b[0], j), true // b is never written again
}

// plainASCIIInto is normalizePlainASCII's pass, written into b (len(s) bytes): the length
// written, false for text the fast path does not take.
func plainASCIIInto(b []byte, s string) (int, bool) {
	j := 0
	space, newline := false, false
	for i := 0; i < len(s); i++ {
		c := plainASCII[s[i]]
		if c > ' ' {
			b[j] = c
			j++
			space, newline = false, false
			continue
		}
		switch c {
		case ' ':
			if !space {
				b[j] = ' '
				j++
			}
			space = true
		case '\n':
			if space && !newline {
				j-- // the run's space becomes its newline
				space = false
			}
			if !space {
				b[j] = '\n'
				j++
			}
			space, newline = true, true
		default:
			return 0, false
		}
	}
	return j, true
}

// plainASCII maps each byte for normalizePlainASCII: printable ASCII to itself lower-cased,
// tab, vertical tab and form feed to ' ', '\r' to '\n', and everything that needs the full
// path (controls, DEL, non-ASCII, '%', '&') to 0.
var plainASCII = func() (m [256]byte) {
	for c := 0x21; c < 0x7F; c++ {
		m[c] = byte(c)
		if c >= 'A' && c <= 'Z' {
			m[c] = byte(c) + 'a' - 'A'
		}
	}
	m['%'], m['&'] = 0, 0
	m[' '], m['\t'], m['\v'], m['\f'] = ' ', ' ', ' ', ' '
	m['\n'], m['\r'] = '\n', '\n'
	return m
}()

// isInvisible reports characters that render as nothing: zero-width, joiners, bidi controls,
// soft hyphen, word joiner, BOM, Mongolian vowel separator and variation selectors.
func isInvisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r == 0x180E, r == 0x3164, r == 0xFEFF, r == 0xFFA0:
		return true
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F:
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return false
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// urlDecode decodes %XX and %uXXXX escapes leniently (invalid escapes are kept), then folds
// overlong UTF-8 sequences to the characters they encode. '+' is left alone: it is a literal
// in paths and most payloads.
func urlDecode(s string) (out string, overlong, changed bool) {
	if strings.IndexByte(s, '%') < 0 {
		return s, false, false
	}
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			buf = append(buf, c)
			continue
		}
		if i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			h1, ok1 := unhex(s[i+2])
			h2, ok2 := unhex(s[i+3])
			h3, ok3 := unhex(s[i+4])
			h4, ok4 := unhex(s[i+5])
			if ok1 && ok2 && ok3 && ok4 {
				r := rune(h1)<<12 | rune(h2)<<8 | rune(h3)<<4 | rune(h4)
				buf = utf8.AppendRune(buf, r)
				i += 5
				changed = true
				continue
			}
		}
		if i+2 < len(s) {
			h1, ok1 := unhex(s[i+1])
			h2, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				buf = append(buf, h1<<4|h2)
				i += 2
				changed = true
				continue
			}
		}
		buf = append(buf, c)
	}
	if !changed {
		return s, false, false
	}
	buf, overlong = foldOverlong(buf)
	return string(buf), overlong, true
}

// foldOverlong rewrites overlong 2- and 3-byte UTF-8 encodings of ASCII (C0 AE = '.', C0 AF =
// '/', C1 9C = '\', E0 80 AE = '.') to the ASCII byte. Other bytes are kept.
func foldOverlong(b []byte) ([]byte, bool) {
	found := false
	out := b[:0:0]
	for i := 0; i < len(b); i++ {
		c := b[i]
		if (c == 0xC0 || c == 0xC1) && i+1 < len(b) && b[i+1]&0xC0 == 0x80 {
			out = append(out, (c&0x1F)<<6|b[i+1]&0x3F)
			i++
			found = true
			continue
		}
		if c == 0xE0 && i+2 < len(b) && b[i+1]&0xE0 == 0x80 && b[i+2]&0xC0 == 0x80 {
			r := rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
			if r < 0x80 {
				out = append(out, byte(r))
			} else {
				out = utf8.AppendRune(out, r)
			}
			i += 2
			found = true
			continue
		}
		out = append(out, c)
	}
	if !found {
		return b, false
	}
	return out, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
