package shell

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Spellings of a one-liner that hide the call code() looks for by name (issue 26, probing
// the hook, 2026-12-01): a module imported under another name (`import subprocess as s;
// s.run([...])`, `from os import system as x; x(...)`), a call looked up by name
// (`getattr(__import__('os'), 'system')(...)`), a name built from pieces (`'sys'+'tem'`), and a
// delete whose path comes from a directory walk (`for r,d,fs in os.walk('/home/u') …
// os.remove(os.path.join(r,f))`). normalizeCode rewrites the first three into the plain
// spelling before code() reads the text; walkRoots finds the fourth. Text built from
// character codes (`chr(114)+chr(109)`, `String.fromCharCode(…)`) or reversed (`reverse
// "~ fr- mr"`, `'…'[::-1]`) is folded into the literal it makes (foldLiterals), and a literal
// decoded in place (`bytes.fromhex('…').decode()`, `Buffer.from('…','base64')`) is read again
// decoded (decodeLiterals; the same code handed to eval or exec is still refused as decoded).

var (
	// concat matches two adjacent string literals joined by + (Python, JavaScript, Ruby) or
	// . (Perl, PHP), neither with an escape.
	concat = lazyre.New(`(?:'([^'\\\n]*)'|"([^"\\\n]*)")\s*[+.]\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")`)
	// dunderImport matches `__import__('os')` (the name a literal).
	dunderImport = lazyre.New(`__import__\(\s*(?:'(\w+)'|"(\w+)")\s*\)`)
	// getattrCall matches `getattr(os, 'system')` (the object a dotted name, the attribute a
	// literal).
	getattrCall = lazyre.New(`\bgetattr\(\s*([A-Za-z_][\w.]*)\s*,\s*(?:'(\w+)'|"(\w+)")\s*\)`)
	// importAs matches `import subprocess as s` (also within `import os, subprocess as s`).
	importAs = lazyre.New(`\bimport\s+(?:[\w.]+\s*(?:as\s+\w+)?\s*,\s*)*([\w.]+)\s+as\s+(\w+)`)
	// fromImport matches `from os import system as x, remove` (the names and their aliases).
	fromImport = lazyre.New(`\bfrom\s+([\w.]+)\s+import\s+([\w\s,]+)`)
	// walker matches a call that lists a directory tree or its entries, whose first argument
	// is the root: os.walk, os.listdir, os.scandir, glob, pathlib's rglob/glob/iterdir, Node's
	// readdirSync, Ruby's Dir.glob/Dir.children/Find.find, Perl's File::Find find().
	walker = lazyre.New(`\b(?:os\.(?:walk|listdir|scandir)|glob\.i?glob|readdirSync|readdir|Dir\.(?:glob|children|entries|each_child)|Find\.find|find)\s*\(|Path\(([^)]*)\)\.(?:rglob|glob|iterdir)\(`)
)

var (
	// charCode matches a character written as its code: chr(114) (Python, Perl, PHP),
	// 114.chr (Ruby), String.fromCharCode(114, 109) (JavaScript).
	charCode = lazyre.New(`\bchr\(\s*(\d{1,3})\s*\)|\b(\d{1,3})\.chr\b|\bString\.fromCharCode\(\s*(\d{1,3}(?:\s*,\s*\d{1,3})*)\s*\)`)
	// reversed matches a string literal reversed: Perl's `reverse "…"` (with scalar),
	// Python's '…'[::-1], Ruby's "…".reverse, JavaScript's '…'.split('').reverse().join('').
	reversed = lazyre.New(`\breverse\s*\(?\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")\s*\)?|(?:'([^'\\\n]*)'|"([^"\\\n]*)")(?:\[::-1\]|\.reverse\b|\.split\(\s*(?:''|"")\s*\)\.reverse\(\)\.join\(\s*(?:''|"")\s*\))`)
	// encodedLiteral matches a literal decoded in place: Python's bytes.fromhex('…') and
	// base64.b64decode('…') (with .decode()), JavaScript's Buffer.from('…', 'base64' or
	// 'hex') (with .toString()) and atob('…').
	encodedLiteral = lazyre.New(`\bbytes\.fromhex\(\s*['"]([0-9a-fA-F]+)['"]\s*\)(?:\.decode\(\s*\))?|\b(?:base64\.)?b64decode\(\s*b?['"]([A-Za-z0-9+/=]+)['"]\s*\)(?:\.decode\(\s*\))?|\bBuffer\.from\(\s*['"]([^'"]+)['"]\s*,\s*['"](base64|hex)['"]\s*\)(?:\.toString\(\s*\))?|\batob\(\s*['"]([A-Za-z0-9+/=]+)['"]\s*\)`)
)

// foldLiterals writes characters given by their codes and reversed literals as the plain
// literals they make (`chr(114)+chr(109)` → 'r'+'m', which normalizeCode then joins).
func foldLiterals(src string) string {
	if containsAny(src, "chr", "fromCharCode") {
		src = charCode.Compiled().ReplaceAllStringFunc(src, func(m string) string {
			p := charCode.FindStringSubmatch(m)
			var b strings.Builder
			for _, n := range strings.Split(p[1]+p[2]+p[3], ",") {
				c, err := strconv.Atoi(strings.TrimSpace(n))
				if err != nil || c < 32 || c > 126 || c == '\\' {
					return m
				}
				b.WriteByte(byte(c))
			}
			return quoteLiteral(b.String())
		})
	}
	if strings.Contains(src, "reverse") || strings.Contains(src, "[::-1]") {
		src = reversed.Compiled().ReplaceAllStringFunc(src, func(m string) string {
			p := reversed.FindStringSubmatch(m)
			r := []rune(p[1] + p[2] + p[3] + p[4])
			slices.Reverse(r)
			return quoteLiteral(string(r))
		})
	}
	return src
}

// decodeLiterals returns src with its encoded literals (encodedLiteral) decoded in place, and
// whether any was: `os.system(bytes.fromhex('726d…').decode())` runs the text it decodes.
func decodeLiterals(src string) (string, bool) {
	if !containsAny(src, "fromhex", "b64decode", "Buffer.from", "atob") {
		return src, false
	}
	changed := false
	out := encodedLiteral.Compiled().ReplaceAllStringFunc(src, func(m string) string {
		p := encodedLiteral.FindStringSubmatch(m)
		var b []byte
		var err error
		switch {
		case p[1] != "":
			b, err = hex.DecodeString(p[1])
		case p[2] != "":
			b, err = base64.StdEncoding.DecodeString(p[2])
		case p[3] != "" && p[4] == "hex":
			b, err = hex.DecodeString(p[3])
		case p[3] != "":
			b, err = base64.StdEncoding.DecodeString(p[3])
		default:
			b, err = base64.StdEncoding.DecodeString(p[5])
		}
		if err != nil || !utf8.Valid(b) || strings.ContainsAny(string(b), "\\\n") && strings.ContainsAny(string(b), `'"`) ||
			strings.Contains(string(b), "'") && strings.Contains(string(b), `"`) {
			return m
		}
		changed = true
		return quoteLiteral(string(b))
	})
	return out, changed
}

// quoteLiteral quotes s as a string literal code() reads: in single quotes unless it holds one.
func quoteLiteral(s string) string {
	if strings.Contains(s, "'") {
		return `"` + s + `"`
	}
	return "'" + s + "'"
}

// deletedModules are the modules whose calls code() judges by their dotted names.
var deletedModules = set("os", "subprocess", "shutil", "pty", "commands", "pathlib")

// normalizeCode returns src with string concatenations folded, `__import__('m')` and
// `getattr(m, 'f')` written as `m` and `m.f`, and aliases of os, subprocess, shutil, pty and
// pathlib written as the modules' own names. Text that holds none of these is returned as is.
func normalizeCode(src string) string {
	if !containsAny(src, "+", ".", "__import__", "getattr", "import", "reverse", "chr", "fromCharCode") {
		return src
	}
	src = foldLiterals(src)
	for range 8 {
		next := concat.Compiled().ReplaceAllStringFunc(src, func(m string) string {
			p := concat.FindStringSubmatch(m)
			v := p[1] + p[2] + p[3] + p[4]
			if strings.Contains(v, "'") {
				return `"` + v + `"`
			}
			return "'" + v + "'"
		})
		if next == src {
			break
		}
		src = next
	}
	if strings.Contains(src, "__import__") {
		src = dunderImport.ReplaceAllString(src, "$1$2")
	}
	if strings.Contains(src, "getattr") {
		src = getattrCall.ReplaceAllString(src, "$1.$2$3")
	}
	if !strings.Contains(src, "import") {
		return src
	}
	for _, m := range importAs.FindAllStringSubmatch(src, 8) {
		mod, alias := m[1], m[2]
		if deletedModules[mod] && alias != mod {
			src = wordDot(alias).ReplaceAllString(src, "${1}"+mod+".")
		}
	}
	for _, m := range fromImport.FindAllStringSubmatch(src, 8) {
		mod := m[1]
		if !deletedModules[mod] {
			continue
		}
		for _, item := range strings.Split(m[2], ",") {
			f := strings.Fields(item)
			name, alias := "", ""
			switch {
			case len(f) == 1:
				name, alias = f[0], f[0]
			case len(f) == 3 && f[1] == "as":
				name, alias = f[0], f[2]
			default:
				continue
			}
			src = wordCall(alias).ReplaceAllString(src, "${1}"+mod+"."+name+"(")
		}
	}
	return src
}

// wordDot matches name followed by a dot, not itself after a dot or a word character. Made
// per alias (not a lazyre: those are kept for the package's life).
func wordDot(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(name) + `\.`)
}

// wordCall matches a call of name, not itself after a dot or a word character.
func wordCall(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(name) + `\s*\(`)
}

// walkRoots returns the roots of the directory walks in src (walker): the first literal of
// each call's arguments, or "~" when they name the home directory.
func walkRoots(src string) []string {
	var roots []string
	for _, loc := range walker.Compiled().FindAllStringSubmatchIndex(src, 8) {
		var args string
		if loc[2] >= 0 {
			args = src[loc[2]:loc[3]] // Path(ROOT).rglob(
		} else {
			args = balanced(src[loc[1]-1:])
		}
		if homeExpr.MatchString(args) {
			roots = append(roots, "~")
			continue
		}
		if l := literals(args); len(l) > 0 {
			roots = append(roots, l[0])
		}
	}
	return roots
}
