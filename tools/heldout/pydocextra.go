package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// The extra benign Python documentation set (issue 26): a calib-only set written by
// `-pydoc-extra`. Every other prose source is Go modules' docs, Debian manual pages or npm
// READMEs; the Python world's documentation is another community's prose, and full of the
// shapes the rules look for: Django's security pages (CSRF, XSS, SQL injection, clickjacking
// explained), the warnings of the standard library's subprocess, shlex, pickle, ssl and os
// pages, eval and shell=True, passwords and secret keys in settings, pip, venv and
// django-admin shell sessions.
//
// Sources are pydocPackages: the Debian bookworm packages that ship a Python project's built
// documentation, picked by what they are (one group each): the language and its standard
// library (python3.11-doc), web frameworks (Django, Flask, Werkzeug, Tornado, aiohttp, Django
// REST framework), security, auth and crypto (cryptography, bleach, django-allauth,
// Flask-Login, itsdangerous), databases (SQLAlchemy, psycopg2), HTTP (requests), tasks and
// processes (Celery, pexpect, psutil) and tooling (pytest, setuptools, Click). Each is fetched
// with `apt-get download Name=Version` and unpacked (fetchDeb). Where a package ships Sphinx's
// reStructuredText sources (`html/_sources/*.txt`) those are read (rstPage), else its HTML
// pages (htmlPage, golang.org/x/net/html: the main body's <p>, <li> and <pre>):
//   - prose: a paragraph or list item of 12 words or more, markup taken off as a person would
//     paste it in Slack (rstInline), placed as a Slack message;
//   - doc_output: a page (up to 6 KB, cut at a line end) as a fetch tool's answer in the
//     response phase, its URL the page on the project's documentation site (Site; for reST the
//     source the site serves under _sources/, for HTML the rendered page);
//   - shell: the commands of console, shell-session, bash, sh, shell and zsh blocks (console and
//     shell-session: the "$ " lines only; the others: every line, or the "$ " lines only when
//     some line has one) and the "$ " lines of any other literal block, prompt taken off,
//     output lines left out, backslash continuations joined; Python ">>> " sessions are not
//     shell. Placed as a Claude Code Bash call.
//
// Hard negatives, by a rule fixed before the set met the chain: every record of a package in
// the security group; every record from a security page (its file name matches
// pydocSecurityPage: security, CSRF, clickjacking, crypto, SSL, hashing, secrets, pickle,
// subprocess, shlex, auth, passwords, signing, sanitizing); every record whose text holds one of
// pydocAttackWords (password, secret, token, inject, eval, exec, shell=True, pickle, sudo,
// rm -rf, DROP, <script>, ../) or attackWords (as for every benign set). A text any record of
// another held-out set holds (pydocOthers; calib, test or dropped; same text) is dropped
// without being written: COUNTS.md gives only the count. The rest is capped per kind by the
// salted hash (sample).

// pydocPackage is a pinned Debian documentation package, the group it was picked for, the
// folder of its built documentation (Root, under the unpacked package) and the site that
// publishes those pages (Site; a page's URL is Site + its path; Pretty: the site serves
// dir/page/ for dir/page.html).
type pydocPackage struct {
	debPackage
	Group, Root, Site string
	Pretty            bool
}

var pydocPackages = []pydocPackage{
	{debPackage{"python3.11-doc", "3.11.2-6+deb12u9", "PSF-2.0"}, "language", "usr/share/doc/python3.11/html", "https://docs.python.org/3.11/", false},
	{debPackage{"python-django-doc", "3:3.2.25-0+deb12u7", "BSD-3-Clause"}, "web", "usr/share/doc/python-django-doc/html", "https://docs.djangoproject.com/en/3.2/", true},
	{debPackage{"python-flask-doc", "2.2.2-3", "BSD-3-clause"}, "web", "usr/share/doc/python-flask-doc/html", "https://flask.palletsprojects.com/en/2.2.x/", false},
	{debPackage{"python-werkzeug-doc", "2.2.2-3+deb12u1", "BSD-3-clause"}, "web", "usr/share/doc/python-werkzeug-doc/html", "https://werkzeug.palletsprojects.com/en/2.2.x/", false},
	{debPackage{"python-tornado-doc", "6.2.0-3+deb12u4", "Apache-2.0"}, "web", "usr/share/doc/python-tornado-doc/html", "https://www.tornadoweb.org/en/v6.2.0/", false},
	{debPackage{"python-aiohttp-doc", "3.8.4-1+deb12u2", "Apache-2"}, "web", "usr/share/doc/python-aiohttp-doc/html", "https://docs.aiohttp.org/en/v3.8.4/", false},
	{debPackage{"python-djangorestframework-doc", "3.14.0-2+deb12u1", "BSD-2-Clause"}, "web", "usr/share/doc/python3-djangorestframework/html", "https://www.django-rest-framework.org/", true},
	{debPackage{"python-cryptography-doc", "38.0.4-3+deb12u1", "Apache"}, "security", "usr/share/doc/python-cryptography-doc/html", "https://cryptography.io/en/38.0.4/", false},
	{debPackage{"python-bleach-doc", "5.0.1-2", "Apache-2.0"}, "security", "usr/share/doc/python-bleach-doc/html", "https://bleach.readthedocs.io/en/v5.0.1/", false},
	{debPackage{"python-django-allauth-doc", "0.51.0-1", "MIT"}, "security", "usr/share/doc/python-django-allauth/html", "https://django-allauth.readthedocs.io/en/0.51.0/", false},
	{debPackage{"python-flask-login-doc", "0.6.2-1", "Expat"}, "security", "usr/share/doc/python-flask-login-doc/html", "https://flask-login.readthedocs.io/en/0.6.2/", false},
	{debPackage{"python-itsdangerous-doc", "2.1.2-3", "BSD-3-clause"}, "security", "usr/share/doc/python-itsdangerous-doc/html", "https://itsdangerous.palletsprojects.com/en/2.1.x/", false},
	{debPackage{"python-sqlalchemy-doc", "1.4.46+ds1-1", "Expat"}, "db", "usr/share/doc/python-sqlalchemy-doc/html", "https://docs.sqlalchemy.org/en/14/", false},
	{debPackage{"python-psycopg2-doc", "2.9.5-1", "LGPL-3+ with exceptions"}, "db", "usr/share/doc/python-psycopg2-doc/html", "https://www.psycopg.org/docs/", false},
	{debPackage{"python-requests-doc", "2.28.1+dfsg-1", "Apache"}, "http", "usr/share/doc/python-requests-doc/html", "https://requests.readthedocs.io/en/v2.28.1/", false},
	{debPackage{"python-celery-doc", "5.2.6-5", "BSD-2-clause"}, "process", "usr/share/doc/python-celery-doc/html", "https://docs.celeryq.dev/en/v5.2.6/", false},
	{debPackage{"python-pexpect-doc", "4.8.0-4", "ISC"}, "process", "usr/share/doc/python-pexpect-doc/html", "https://pexpect.readthedocs.io/en/4.8/", false},
	{debPackage{"python-psutil-doc", "5.9.4-1", "BSD-3-clause"}, "process", "usr/share/doc/python-psutil-doc/html", "https://psutil.readthedocs.io/en/release-5.9.4/", false},
	{debPackage{"python-pytest-doc", "7.2.1-2", "Expat"}, "tooling", "usr/share/doc/python-pytest-doc/html", "https://docs.pytest.org/en/7.2.x/", false},
	{debPackage{"python-setuptools-doc", "66.1.1-1+deb12u2", "MIT"}, "tooling", "usr/share/doc/python-setuptools-doc/html", "https://setuptools.pypa.io/en/v66.1.1/", false},
	{debPackage{"python-click-doc", "8.1.3-2", "BSD-3-clause"}, "tooling", "usr/share/doc/python-click-doc/html", "https://click.palletsprojects.com/en/8.1.x/", false},
}

// pydocExtraCap caps each kind by the lowest salted hash (sample, as kindCap does).
var pydocExtraCap = map[string]int{"prose": 1500, "doc_output": 400, "shell": 800}

// pydocSecurityPage matches the file name of a page about security: its every record is a
// hard negative.
var pydocSecurityPage = regexp.MustCompile(`(?i)secur|csrf|xss|clickjack|crypt|hazmat|ssl|hashlib|secrets|hmac|pickle|marshal|subprocess|shlex|auth|passw|signing|sanitiz`)

// pydocAttackWords are the words that make a record a hard negative (with attackWords).
var pydocAttackWords = regexp.MustCompile(`(?i:password|secret|token|inject|\beval\b|\bexec\b|shell=True|pickle|\bsudo\b|rm -rf|<script|\.\./)|\bDROP\b`)

// pydocOthers lists the JSONL files of every other held-out set under root: npm-extra's others,
// npm-extra and code-extra.
func pydocOthers(root string) []string {
	out := npmExtraOthers(root)
	for _, d := range []string{"npm-extra", "code-extra"} {
		out = append(out, must(filepath.Glob(filepath.Join(root, d, "*.jsonl")))...)
	}
	sort.Strings(out)
	return out
}

// generatePydocExtra writes out/calib.jsonl and out/COUNTS.md: the prose, pages and shell
// commands of pydocPackages, less the texts of the JSONL files in others (a missing one is an
// error), sampled and placed.
func generatePydocExtra(out, cache string, others []string, stdout io.Writer) error {
	var cands []candidate
	for _, p := range pydocPackages {
		dir, err := fetchDeb(cache, p.debPackage)
		if err != nil {
			return err
		}
		cs, err := pydocCandidates(p, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		cands = append(cands, cs...)
	}
	return writeTextSet(out, "# Extra benign Python documentation set (calib only): counts\n\nWritten by `make heldout-pydoc-extra`", cands, others, pydocExtraRecords, pydocPerPackage, stdout)
}

// pydocSkipPage matches the generated HTML pages that are not documentation: indexes, search,
// module source listings, static files.
var pydocSkipPage = regexp.MustCompile(`^(_modules|_static|_images|_downloads)/|(^|/)(genindex|search|py-modindex|modindex|404)\.html$|^genindex-`)

// pydocCandidates are the prose, doc_output and shell candidates of one unpacked package: its
// reST sources when it ships them, else its HTML pages.
func pydocCandidates(p pydocPackage, dir string) ([]candidate, error) {
	root := filepath.Join(dir, filepath.FromSlash(p.Root))
	files, err := regularFiles(root)
	if err != nil {
		return nil, err
	}
	hasSources := false
	for _, f := range files {
		if strings.HasPrefix(filepath.ToSlash(must(filepath.Rel(root, f))), "_sources/") {
			hasSources = true
			break
		}
	}
	mod := goModule{Path: "debian:" + p.Name, Version: p.Version, License: p.License, Name: p.Name}
	var out []candidate
	for _, f := range files {
		page := filepath.ToSlash(must(filepath.Rel(root, f)))
		rel := p.Root + "/" + page
		add := func(kind, text string, line int) {
			text = strings.TrimSpace(text)
			if text == "" || kind == "shell" && !commandStart.MatchString(strings.Fields(text)[0]) {
				return
			}
			out = append(out, candidate{kind: kind, text: text, mod: mod, rel: page,
				source: fmt.Sprintf("debian:%s@%s/%s:%d", p.Name, p.Version, rel, line),
				group:  "debian:" + p.Name + "/" + rel})
		}
		isSource := hasSources && strings.HasPrefix(page, "_sources/") && strings.HasSuffix(page, ".txt")
		isHTML := !hasSources && strings.HasSuffix(page, ".html") && !pydocSkipPage.MatchString(page)
		if !isSource && !isHTML {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			continue
		}
		switch {
		case isSource && strings.HasSuffix(page, ".md.txt"):
			markdown(string(b), page, func(kind, text, _ string, line int) {
				if kind == "prose" || kind == "shell" {
					add(kind, text, line)
				}
			})
			add("doc_output", truncateLines(string(b), maxOutputBytes), 1)
		case isSource:
			rstPage(string(b), 0, add)
			add("doc_output", truncateLines(string(b), maxOutputBytes), 1)
		default:
			text, err := htmlPage(b, add)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", page, err)
			}
			add("doc_output", truncateLines(text, maxOutputBytes), 1)
		}
	}
	return out, nil
}

// pydocPageURL is the URL the site serves page (a path under the package's Root) at.
func pydocPageURL(p pydocPackage, page string) string {
	if p.Pretty {
		page = strings.TrimSuffix(strings.TrimSuffix(page, ".html"), "index")
		if page != "" && !strings.HasSuffix(page, "/") {
			page += "/"
		}
	}
	return p.Site + page
}

// pydocExtraRecords drops the known texts, samples and places the rest as placeUnknown does, then
// points each page at its documentation site and marks the hard negatives; it returns the
// records, sorted, and how many distinct texts it dropped.
func pydocExtraRecords(cands []candidate, known map[string]bool) ([]Record, int) {
	recs, dropped := placeUnknown(cands, known, pydocExtraCap)
	for i, r := range recs {
		p, page, ok := pydocPackageOf(r)
		if !ok {
			continue
		}
		recs[i].HardNegative = r.HardNegative || p.Group == "security" ||
			pydocSecurityPage.MatchString(filepath.Base(page)) || pydocAttackWords.MatchString(r.Text)
		if r.Kind == "doc_output" {
			recs[i].Arguments = mustJSON(map[string]any{"url": pydocPageURL(p, page)})
		}
	}
	sortRecords(recs)
	return recs, dropped
}

// pydocPackageOf finds the package a record came from by its group (debian:name/root/page) and
// the page's path under the package's Root.
func pydocPackageOf(r Record) (pydocPackage, string, bool) {
	for _, p := range pydocPackages {
		if page, ok := strings.CutPrefix(r.Group, "debian:"+p.Name+"/"+p.Root+"/"); ok {
			return p, page, true
		}
	}
	return pydocPackage{}, "", false
}

// pydocPerPackage is COUNTS.md's table of records per package and kind.
func pydocPerPackage(recs []Record) string {
	var b strings.Builder
	b.WriteString("\n## Records per package\n\n| package | version | licence | group | prose | doc_output | shell | hard negatives |\n|---|---|---|---|---:|---:|---:|---:|\n")
	for _, p := range pydocPackages {
		n := map[string]int{}
		for _, r := range recs {
			if q, _, ok := pydocPackageOf(r); ok && q.Name == p.Name {
				n[r.Kind]++
				if r.HardNegative {
					n["hard"]++
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d |\n", p.Name, p.Version, p.License, p.Group, n["prose"], n["doc_output"], n["shell"], n["hard"])
	}
	return b.String()
}

var (
	// rstDirective matches a directive line: its indentation, name and argument.
	rstDirective = regexp.MustCompile(`^(\s*)\.\.\s+([\w:.-]+)::\s*(.*)$`)
	// rstComment matches a comment, a footnote, a target or a substitution definition.
	rstComment = regexp.MustCompile(`^\s*\.\.(\s|$)`)
	// rstBullet matches the marker of a list item.
	rstBullet = regexp.MustCompile(`^\s*([-*+\x{2022}]|#\.|\d+\.|\(?[a-z0-9]\))\s+`)
	// rstField matches a field list item (":param x:") and a directive's option.
	rstField = regexp.MustCompile(`^\s*:[^:\s][^:]*:(\s|$)`)
	// rstShellLangs are the languages of code blocks whose every line is a command unless some
	// line has a "$ " prompt.
	rstShellLangs = map[string]bool{"bash": true, "sh": true, "shell": true, "zsh": true}
	// rstSessionLangs are the languages of code blocks whose "$ " lines are the commands.
	rstSessionLangs = map[string]bool{"console": true, "shell-session": true}
	// rstCodeDirectives are directives whose body is code, data or markup, not prose.
	rstCodeDirectives = map[string]bool{"code-block": true, "sourcecode": true, "code": true, "literalinclude": true,
		"include": true, "raw": true, "toctree": true, "image": true, "figure": true, "csv-table": true,
		"list-table": true, "table": true, "testsetup": true, "testcode": true, "testoutput": true,
		"testcleanup": true, "doctest": true, "productionlist": true, "highlight": true, "math": true,
		"graphviz": true, "index": true, "tabularcolumns": true, "literal": true, "parsed-literal": true,
		"autosummary": true, "automodule": true, "autoclass": true, "autofunction": true, "only": true,
		"program-output": true, "command-output": true, "prompt": true, "tab": true, "tabs": true}
	// rstPrompt matches a shell prompt: "$ ", after a virtual environment's "(venv) ".
	rstPrompt = regexp.MustCompile(`^(\([\w.-]+\)\s+)?\$ `)
)

// rstPage adds a reStructuredText page's prose paragraphs (directive bodies that are text,
// admonitions and descriptions, read too; code, tables, field lists, titles and doctest
// blocks left out) and the commands of its shell blocks and prompted literal lines. Line
// numbers are offset by base (a directive body's first line).
func rstPage(src string, base int, add func(kind, text string, line int)) {
	lines := strings.Split(strings.ReplaceAll(src, "\t", "        "), "\n")
	var para []string
	paraStart, paraIndent, bad := 0, 0, false
	flush := func() {
		if len(para) > 0 && !bad {
			if t := rstInline(strings.Join(para, " ")); len(strings.Fields(t)) >= 12 {
				add("prose", t, base+paraStart)
			}
		}
		para, bad = nil, false
	}
	// body returns the lines after i indented deeper than indent (blank lines inside kept) and
	// the index of the last one.
	body := func(i, indent int) ([]string, int) {
		j := i + 1
		last := i
		for ; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if indentOf(lines[j]) <= indent {
				break
			}
			last = j
		}
		return lines[i+1 : last+1], last
	}
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		t := strings.TrimSpace(ln)
		switch {
		case t == "":
			flush()
			continue
		case rstUnderline(t):
			para, bad = nil, false // a title (or a table) is not a paragraph
			continue
		}
		if m := rstDirective.FindStringSubmatch(ln); m != nil {
			flush()
			b, last := body(i, len(m[1]))
			start := i + 1
			i = last
			name := m[2]
			if name == "code-block" || name == "sourcecode" || name == "code" {
				shellBlock(dedent(b), strings.ToLower(strings.TrimSpace(m[3])), base+start, add)
				continue
			}
			if rstCodeDirectives[name] || strings.HasPrefix(name, "auto") {
				continue
			}
			// an admonition, a description (function, class, versionchanged): its body is text
			// after its options
			b = dedent(b)
			k := 0
			for k < len(b) && rstField.MatchString(b[k]) {
				k++
			}
			rstPage(strings.Join(b[k:], "\n"), base+start+k, add)
			continue
		}
		if rstComment.MatchString(ln) {
			flush()
			_, i = body(i, indentOf(ln))
			continue
		}
		if len(para) == 0 && (strings.HasPrefix(t, ">>>") || strings.HasPrefix(t, "+-") || strings.HasPrefix(t, "|")) {
			bad = true // a doctest block, a grid table, a line block
		}
		if rstField.MatchString(ln) {
			flush()
			bad = true
		}
		bullet := rstBullet.FindString(ln)
		if bullet != "" || len(para) == 1 && indentOf(ln) > paraIndent && !bad {
			// a list item starts a paragraph (its lines go on at its text's indentation); a
			// deeper line after a one-line term is its definition
			flush()
			if bullet != "" {
				t = strings.TrimSpace(ln[len(bullet):])
			}
		}
		if len(para) == 0 {
			paraStart, paraIndent = i+1, indentOf(ln)
			if bullet != "" {
				paraIndent = len(bullet)
			}
		}
		para = append(para, t)
		if strings.HasSuffix(t, "::") {
			// a literal block follows: its prompted lines are commands
			flush()
			indent := indentOf(ln)
			if rstBullet.MatchString(ln) {
				indent = len(rstBullet.FindString(ln)) - 1
			}
			b, last := body(i, indent)
			shellBlock(dedent(b), "", base+i+2, add)
			i = last
		}
	}
	flush()
}

// rstUnderline reports whether a trimmed line is a section title's underline or overline (one
// punctuation character, three times or more) or a simple table's rule ("===  ====").
func rstUnderline(t string) bool {
	if len(t) < 3 || !strings.ContainsRune("=-~^\"'`#*+<>_:.", rune(t[0])) {
		return false
	}
	if strings.Trim(t, t[:1]) == "" {
		return true
	}
	return strings.Trim(t, "= ") == "" || strings.Trim(t, "- ") == ""
}

// indentOf is the number of leading spaces of a line.
func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// dedent takes the common indentation off lines.
func dedent(lines []string) []string {
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := indentOf(l); least < 0 || n < least {
			least = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if least > 0 && len(l) >= least {
			l = l[least:]
		}
		out[i] = strings.TrimRight(l, " ")
	}
	return out
}

// shellBlock adds the commands of a code block of language lang (see rstShellLangs and
// rstSessionLangs; any other language or a literal block: the "$ " lines only), first line at
// line.
func shellBlock(lines []string, lang string, line int, add func(kind, text string, line int)) {
	prompted := !rstShellLangs[lang]
	for _, l := range lines {
		if rstPrompt.MatchString(l) {
			prompted = true
		}
	}
	if !rstShellLangs[lang] && !rstSessionLangs[lang] && !prompted {
		return
	}
	for i := 0; i < len(lines); i++ {
		start := i
		cmd := lines[i]
		if prompted {
			m := rstPrompt.FindString(cmd)
			if m == "" {
				continue
			}
			cmd = cmd[len(m):]
		}
		cmd = strings.TrimSpace(cmd)
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd += "\n" + strings.TrimRight(lines[i], " ")
		}
		if cmd != "" && !strings.HasPrefix(cmd, "#") && !placeholder.MatchString(cmd) {
			add("shell", cmd, line+start)
		}
	}
}

var (
	rstRoleRe     = regexp.MustCompile("(?::[\\w:.+-]+:)?`([^`]+)`_{0,2}")
	rstLiteralRe  = regexp.MustCompile("``([^`]+)``")
	rstStrongRe   = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	rstEmphRe     = regexp.MustCompile(`(^|[\s("'])\*([^*\s][^*]*?)\*`)
	rstFootRefRe  = regexp.MustCompile(`\s*\[(#[\w-]*|\d+|\*)\]_`)
	rstTargetRe   = regexp.MustCompile(`^(.*?)\s*<[^<>]+>$`)
	rstEscapeRe   = regexp.MustCompile(`\\(.)`)
	rstLiteralEnd = regexp.MustCompile(`\s*::$`)
)

// rstInline takes reStructuredText's inline markup off a paragraph: roles and references become
// their text (a title without its <target>, "~a.b.c" its last name), literals, strong and
// emphasis their words, footnote references go, a closing "::" becomes ":".
func rstInline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = rstLiteralRe.ReplaceAllString(s, "\x00$1\x01")
	s = rstRoleRe.ReplaceAllStringFunc(s, func(m string) string {
		inner := rstRoleRe.FindStringSubmatch(m)[1]
		if t := rstTargetRe.FindStringSubmatch(inner); t != nil && t[1] != "" {
			inner = t[1]
		}
		inner = strings.TrimPrefix(inner, "!")
		if strings.HasPrefix(inner, "~") {
			inner = inner[strings.LastIndexByte(inner, '.')+1:]
		}
		return inner
	})
	s = strings.NewReplacer("\x00", "", "\x01", "").Replace(s)
	s = rstStrongRe.ReplaceAllString(s, "$1")
	s = rstEmphRe.ReplaceAllString(s, "$1$2")
	s = rstFootRefRe.ReplaceAllString(s, "")
	s = rstEscapeRe.ReplaceAllString(s, "$1")
	if strings.HasSuffix(s, "::") {
		if strings.HasSuffix(s, " ::") {
			s = rstLiteralEnd.ReplaceAllString(s, "")
		} else {
			s = strings.TrimSuffix(s, ":")
		}
	}
	return strings.TrimSpace(s)
}

// htmlMain reports whether n is a page's main body: role="main", or the id Django's
// (yui-main), MkDocs' (main-content) and SQLAlchemy's (docs-body) themes give it.
func htmlMain(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "role" && a.Val == "main" || a.Key == "id" && (a.Val == "yui-main" || a.Val == "main-content" || a.Val == "docs-body") {
			return true
		}
	}
	return false
}

// htmlBlocks are the elements inside a list item that hold its text as paragraphs of their own.
var htmlBlocks = map[string]bool{"p": true, "ul": true, "ol": true, "pre": true, "div": true, "dl": true, "table": true}

// htmlPage adds the main body's paragraphs and list items (prose) and the commands of its <pre>
// blocks (shell: console, bash, sh and shell blocks as shellBlock reads them, by the class of
// the block around; any other, its "$ " lines) and returns the body's text: headings, paragraphs,
// list items and blocks, one after another.
func htmlPage(b []byte, add func(kind, text string, line int)) (string, error) {
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	var main *html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		if main != nil {
			return
		}
		if n.Type == html.ElementNode && htmlMain(n) {
			main = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if main == nil {
		return "", nil
	}
	var page []string
	var walk func(n *html.Node, lang string)
	walk = func(n *html.Node, lang string) {
		if n.Type != html.ElementNode {
			return
		}
		line := len(page) + 1 // the block's index in the page's text
		switch n.Data {
		case "script", "style", "nav", "form":
			return
		case "h1", "h2", "h3", "h4":
			if t := htmlText(n, false); t != "" {
				page = append(page, strings.Repeat("#", int(n.Data[1]-'0'))+" "+t)
			}
			return
		case "p":
			t := htmlText(n, false)
			page = append(page, t)
			if len(strings.Fields(t)) >= 12 {
				add("prose", t, line)
			}
			return
		case "li":
			leaf := true
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && htmlBlocks[c.Data] {
					leaf = false
				}
			}
			if leaf {
				t := htmlText(n, false)
				page = append(page, "- "+t)
				if len(strings.Fields(t)) >= 12 {
					add("prose", t, line)
				}
				return
			}
		case "pre":
			if c := n.FirstChild; c != nil && c.Type == html.ElementNode && c.Data == "code" {
				for _, a := range c.Attr {
					if l, ok := strings.CutPrefix(a.Val, "language-"); ok && a.Key == "class" {
						lang = l
					}
				}
			}
			t := htmlText(n, true)
			page = append(page, t)
			shellBlock(strings.Split(t, "\n"), lang, line, add)
			return
		case "div":
			for _, a := range n.Attr {
				if a.Key != "class" {
					continue
				}
				for _, c := range strings.Fields(a.Val) {
					if l, ok := strings.CutPrefix(c, "highlight-"); ok {
						lang = l
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, lang)
		}
	}
	walk(main, "")
	return strings.Join(page, "\n\n") + "\n", nil
}

// htmlText is the text of n (a headerlink's ¶ left out); with pre, as written, else its
// words joined by single spaces.
func htmlText(n *html.Node, pre bool) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "class" && strings.Contains(a.Val, "headerlink") {
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	if pre {
		return strings.Trim(b.String(), "\n")
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(b.String(), "¶", "")), " ")
}
