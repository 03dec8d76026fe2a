package shell

import (
	"regexp"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Spellings of a one-liner that hide the call code() looks for by name (issue 26, probing
// the hook, 2026-12-01): a module imported under another name (`import subprocess as s;
// s.run([...])`, `from os import system as x; x(...)`), a call looked up by name
// (`getattr(__import__('os'), 'system')(...)`), a name built from pieces (`'sys'+'tem'`), and a
// delete whose path comes from a directory walk (`for r,d,fs in os.walk('/home/u') …
// os.remove(os.path.join(r,f))`). normalizeCode rewrites the first three into the plain
// spelling before code() reads the text; walkRoots finds the fourth.

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

// deletedModules are the modules whose calls code() judges by their dotted names.
var deletedModules = set("os", "subprocess", "shutil", "pty", "commands", "pathlib")

// normalizeCode returns src with string concatenations folded, `__import__('m')` and
// `getattr(m, 'f')` written as `m` and `m.f`, and aliases of os, subprocess, shutil, pty and
// pathlib written as the modules' own names. Text that holds none of these is returned as is.
func normalizeCode(src string) string {
	if !containsAny(src, "+", ".", "__import__", "getattr", "import") {
		return src
	}
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
