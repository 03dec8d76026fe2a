package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The fresh attack set (issue 26): attack lines from public sources none of the other sets
// uses, split by source, so no source feeds both tuning (calib) and test. Written by
// `-fresh-attacks`. Four kinds of source:
//
//   - Go modules whose tests hold tables of attack input (an SSRF guard's internal addresses, an
//     HTML sanitizer's script vectors, a secure path join's escaping paths): every string
//     literal of the module's _test.go files (goTestLiterals), classed by what it is
//     (freshLiteralClass): an address or a URL → ssrf, markup or a script URL → xss, a path
//     with a parent-directory step → path_traversal; a literal of no class (names, messages,
//     wanted outputs without markup) is not a candidate and is not listed.
//   - Debian web-content scanners' word lists (dirb, dirsearch; det58: wfuzz's and wapiti's,
//     calib only): each line a path a scanner
//     asks a web server for, placed as the main set places a sensitive path (a Claude Code
//     Read); only a line keep's sensitive-path vocabulary (sensitiveRe) matches is a
//     candidate, the others (directory and page names) are not listed.
//   - Scanners' probes and a prompt corpus (det49): the string literals of nmap's and
//     wafw00f's scripts that are SQL or command probes (scannerLiteralClass), placed as the
//     main set places them (a search box, a hostname field), and the attack prompts of a
//     security scanner's benchmark corpus (vulnBlockAttacks), placed in a fetched page and
//     a ticket's free text.
//   - Files of public repositories the registries do not serve (det49), vendored under the
//     set's src/ folder, each pinned by commit (vendoredAttacks): FuzzDB's lists, promptmap's
//     rules, GoTestWAF's test cases.
//
// Each source feeds one split, fixed in freshAttackSources before any line met the chain.
// A line whose normalized text (normKey) a record of another held-out set holds is dropped
// without being written (freshAttackOthers), a repeat of an earlier line as a duplicate (the
// calib sources come first, so a line both sides have stays in calib only; a late calib
// source's line a test word list holds is dropped from calib instead, dropLateOnTest), and
// the rest go through freshAttackDrop and keep.

// freshAttackSource is one source of the fresh attack set, wholly in Split.
type freshAttackSource struct {
	// ID names the source in COUNTS.md and begins every source string of its lines.
	ID, Split, License string
	mod                *goModule   // a Go module: its _test.go literals
	deb                *debPackage // a Debian package: files Lists under Dir
	npm                *npmPackage // an npm package: files Lists under Dir
	// vendored: files of a public repository, each pinned by commit, copied under the set's
	// src/ folder (vendoredFile.Local) with the text the repository holds.
	vendored []vendoredFile
	Dir      string
	Lists    []string
	// read reads one file of a package (deb or npm) into attack lines; nil: a scanner's
	// word list of sensitive paths (sensitivePathList).
	read func(path, source string) ([]attack, error)
	// late: a calib source that joined after the test split was first measured (det58). A
	// line of it that a test source's word list holds (normKey: case, digits and spaces
	// folded) is dropped from it unwritten and stays in the test split, so the test split
	// is the one measured before, and no value is on both sides.
	late bool
}

// vendoredFile is one file of a vendored source (the fresh attack set's, the prompt set's):
// where it lies under src/, the commit and path it was read from, how it is read (the set's
// readers: vendoredReaders, promptReaders), the class Label of an attack list's lines, and
// Chars, the stored copy's length in characters where the set checks it (readPinned).
type vendoredFile struct {
	Local, Commit, Path, Read, Label string
	Chars                            int
}

// readPinned reads the vendored file local under src and checks its length against the
// stored copy's (chars, read at commit).
func readPinned(src, local, commit string, chars int) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(local)))
	if err != nil {
		return nil, err
	}
	if n := utf8.RuneCount(b); n != chars {
		return nil, fmt.Errorf("%s: %d characters, the stored copy at %s has %d", local, n, commit[:12], chars)
	}
	return b, nil
}

// freshAttackSources: calib first. The assignment was fixed from the categories each source
// covers (every category with a source on each side) and its record count only (about half
// the records each side), before any line was run through the chain.
var freshAttackSources = []freshAttackSource{
	{ID: "github.com/doyensec/safeurl", Split: "calib", License: "Apache-2.0",
		mod: &goModule{"github.com/doyensec/safeurl", "v0.2.2", "Apache-2.0", "safeurl"}},
	{ID: "github.com/kennygrant/sanitize", Split: "calib", License: "BSD-3-Clause",
		mod: &goModule{"github.com/kennygrant/sanitize", "v1.2.4", "BSD-3-Clause", "sanitize"}},
	{ID: "deb:dirsearch", Split: "calib", License: "GPL-2+",
		deb: &debPackage{"dirsearch", "0.4.2+ds-3", "GPL-2+"}, Dir: "usr/lib/python3/dist-packages/dirsearch/db/", Lists: []string{"dicc.txt"}},
	// det58: wfuzz's file and folder lists (calib only; the attacks-extra set, calib only
	// too, reads its injection payload lists). Its lists and dirb's share ancestry: a line a
	// dirb list holds is dropped here (late).
	{ID: "deb:wfuzz", Split: "calib", License: "GPL-2", deb: &wfuzzPackage, Dir: "usr/share/wfuzz/wordlist/",
		Lists: wfuzzPathLists, late: true},
	// det58: wapiti's buster list, the paths its buster module asks for (calib only; the
	// wapiti-extra set, calib only too, reads its payload files). late as wfuzz.
	{ID: "deb:wapiti", Split: "calib", License: "GPL-2+", deb: &wapitiPackage, Dir: wapitiDir,
		Lists: []string{"busterPayloads.txt"}, late: true},
	// det49: SQL, command and prompt injection, each split fixed here before any of its lines
	// met the chain. First step, from the registries: nmap's scripts to calib (the nmap
	// package's man page feeds hardneg-extra, a calib set, so its upstream stays on the calib
	// side), wafw00f and the scanner's prompt corpus to test. Second step, the registries
	// holding no more, vendored repository files: FuzzDB's SQL and command lists and
	// promptmap's prompts to calib, GoTestWAF's SQL, shell and RCE payloads to test.
	{ID: "deb:nmap-common", Split: "calib", License: "nmap-GPL-2",
		deb: &debPackage{"nmap-common", "7.93+dfsg1-1", "nmap-GPL-2"}, Dir: "usr/share/nmap/scripts/",
		Lists: []string{"http-waf-detect.nse", "http-sql-injection.nse"}, read: scannerLiteralAttacks},
	{ID: "fuzzdb-project/fuzzdb", Split: "calib", License: "BSD-3-Clause OR CC-BY-3.0", vendored: fuzzdbFiles},
	{ID: "utkusen/promptmap", Split: "calib", License: "MIT", vendored: promptmapFiles},
	{ID: "code.dny.dev/ssrf", Split: "test", License: "MIT",
		mod: &goModule{"code.dny.dev/ssrf", "v0.3.0", "MIT", "ssrf"}},
	{ID: "github.com/google/safehtml", Split: "test", License: "BSD-3-Clause",
		mod: &goModule{"github.com/google/safehtml", "v0.1.0", "BSD-3-Clause", "safehtml"}},
	{ID: "github.com/cyphar/filepath-securejoin", Split: "test", License: "BSD-3-Clause AND MPL-2.0",
		mod: &goModule{"github.com/cyphar/filepath-securejoin", "v0.7.0", "BSD-3-Clause AND MPL-2.0", "filepath-securejoin"}},
	{ID: "deb:dirb", Split: "test", License: "GPL-2+",
		deb: &debPackage{"dirb", "2.22+dfsg-5", "GPL-2+"}, Dir: "usr/share/dirb/wordlists/", Lists: dirbLists},
	{ID: "deb:wafw00f", Split: "test", License: "BSD-3-clause",
		deb: &debPackage{"wafw00f", "2.2.0-1", "BSD-3-clause"}, Dir: "usr/lib/python3/dist-packages/wafw00f/",
		Lists: []string{"main.py"}, read: scannerLiteralAttacks},
	{ID: "npm:agent-security-scanner-mcp", Split: "test", License: "MIT",
		npm: &npmPackage{"agent-security-scanner-mcp", "4.5.9", "MIT"}, Dir: "benchmarks/corpus/",
		Lists: []string{"prompt_injection.txt"}, read: vulnBlockAttacks},
	{ID: "wallarm/gotestwaf", Split: "test", License: "MIT", vendored: gotestwafFiles},
}

// fuzzdbFiles: FuzzDB's SQL injection detection lists and its Unix command execution list.
var fuzzdbFiles = vendorFiles("fuzzdb", "list",
	"0e2033f7262126779c8e04bc2d36cc064e577d4c attack/sql-injection/detect/xplatform.txt sql_injection",
	"c738693f78038e457186802890cd663311c50deb attack/sql-injection/detect/GenericBlind.txt sql_injection",
	"0e2033f7262126779c8e04bc2d36cc064e577d4c attack/sql-injection/detect/generic-blind.txt sql_injection",
	"f1ef0a17bd8d5d4120aeb380f3bd074210781067 attack/sql-injection/detect/MySQL.txt sql_injection",
	"199993fb41bedfdf7be1e08756bebe9ea5214f80 attack/sql-injection/detect/MSSQL.txt sql_injection",
	"2863f7a5880b1efca7960d90ec828f4e7837f125 attack/sql-injection/detect/MySQL_MSSQL.txt sql_injection",
	"2863f7a5880b1efca7960d90ec828f4e7837f125 attack/sql-injection/detect/oracle.txt sql_injection",
	"a9e417d045ccd4f8f5c8e3cbc28cd1cce58fe293 attack/os-cmd-execution/command-execution-unix.txt command_injection")

// gotestwafFiles: GoTestWAF's SQL injection, shell injection and RCE test cases (the OWASP
// and community sets; the padded 8–128 KB community variants are not read).
var gotestwafFiles = vendorFiles("gotestwaf", "payloads",
	"1c79bcb05a7ae7df809d8f47479895609aac09a2 testcases/owasp/sql-injection.yml sql_injection",
	"4393951212702232e7d1eb3d1284ebce19e172b4 testcases/owasp/sqli.yml sql_injection",
	"21a18dac1e919052ef80614fae244f04eb4c7024 testcases/community/community-sqli.yml sql_injection",
	"231ef17fa82884973eabf59919f48ba56c9a1dba testcases/owasp/shell-injection.yml command_injection",
	"0c345b247faa71635e8ef5df54e373d8f0aaf900 testcases/owasp/rce.yml command_injection",
	"21a18dac1e919052ef80614fae244f04eb4c7024 testcases/owasp/rce-urlparam.yml command_injection",
	"21a18dac1e919052ef80614fae244f04eb4c7024 testcases/community/community-rce.yml command_injection")

// promptmapFiles: promptmap's rules of the two types aimed at the application's own
// instructions (distraction: make it drop its task; prompt_stealing: make it reveal its
// system prompt), all at one commit. Its jailbreak, harmful, hate and social_bias rules test
// the model's content policy, not an application's instructions, and are not read.
var promptmapFiles = func() []vendoredFile {
	var rows []string
	for _, n := range []string{"distraction/distraction_basic", "distraction/distraction_basic2", "distraction/distraction_question",
		"distraction/distraction_question2", "distraction/distraction_translate", "distraction/distraction_translate2",
		"distraction/distraction_typoglycemia", "prompt_stealing/prompt_stealer", "prompt_stealing/prompt_stealer_basic2",
		"prompt_stealing/prompt_stealer_basic3", "prompt_stealing/prompt_stealer_basic4", "prompt_stealing/prompt_stealer_basic5",
		"prompt_stealing/prompt_stealer_basic6", "prompt_stealing/prompt_stealer_basic7", "prompt_stealing/prompt_stealer_basic8",
		"prompt_stealing/prompt_stealer_china", "prompt_stealing/prompt_stealer_smartgpt", "prompt_stealing/prompt_stealer_smartgpt2"} {
		rows = append(rows, "e1ab109e968bbd97b1718162617777d711fca566 rules/"+n+".yaml prompt_injection")
	}
	return vendorFiles("promptmap", "prompt", rows...)
}()

// vendorFiles makes the files of a vendored source from rows "commit path class", each read
// with read and lying at dir/path under src/.
func vendorFiles(dir, read string, rows ...string) []vendoredFile {
	var out []vendoredFile
	for _, r := range rows {
		f := strings.Fields(r)
		out = append(out, vendoredFile{Local: dir + "/" + f[1], Commit: f[0], Path: f[1], Read: read, Label: f[2]})
	}
	return out
}

// dirbLists are dirb's path lists: the general ones and the product-specific vulns/ lists
// (stress/ holds encodings of single characters, others/ names and subsets of common.txt).
var dirbLists = []string{"common.txt", "big.txt", "small.txt", "vulns/apache.txt", "vulns/axis.txt", "vulns/cgis.txt",
	"vulns/coldfusion.txt", "vulns/domino.txt", "vulns/fatwire.txt", "vulns/fatwire_pagenames.txt", "vulns/frontpage.txt",
	"vulns/hpsmh.txt", "vulns/hyperion.txt", "vulns/iis.txt", "vulns/iplanet.txt", "vulns/jboss.txt", "vulns/jersey.txt",
	"vulns/jrun.txt", "vulns/netware.txt", "vulns/oracle.txt", "vulns/ror.txt", "vulns/sap.txt", "vulns/sharepoint.txt",
	"vulns/sunas.txt", "vulns/tests.txt", "vulns/tomcat.txt", "vulns/vignette.txt", "vulns/weblogic.txt", "vulns/websphere.txt"}

// wfuzzPathLists are wfuzz's lists of paths a scanner asks a web server for: the general
// ones (English, Spanish, Catalan and Basque words, admin panels) and the product-specific
// vulns/ and webservices/ lists. Not read: the injection and traversal payloads (the
// attacks-extra set's), stress/ (encodings of single characters, generated extensions),
// others/ (names, passwords), and the suffix-only lists (extensions, mutations, HTTP
// methods), which name no file.
var wfuzzPathLists = []string{"general/common.txt", "general/big.txt", "general/medium.txt", "general/megabeast.txt",
	"general/test.txt", "general/admin-panels.txt", "general/spanish.txt", "general/catala.txt", "general/euskera.txt",
	"vulns/apache.txt", "vulns/cgis.txt", "vulns/coldfusion.txt", "vulns/domino.txt", "vulns/fatwire.txt",
	"vulns/fatwire_pagenames.txt", "vulns/frontpage.txt", "vulns/iis.txt", "vulns/iplanet.txt", "vulns/jrun.txt",
	"vulns/netware.txt", "vulns/oracle9i.txt", "vulns/sharepoint.txt", "vulns/sunas.txt", "vulns/tests.txt",
	"vulns/tomcat.txt", "vulns/vignette.txt", "vulns/weblogic.txt", "vulns/websphere.txt",
	"webservices/ws-dirs.txt", "webservices/ws-files.txt"}

// freshAttackOthers lists the JSONL files whose records a line of the set must not repeat:
// every other held-out set (the main calib and test, wide, fresh, every *-extra calib).
func freshAttackOthers(root string) []string {
	out := []string{filepath.Join(root, "calib.jsonl"), filepath.Join(root, "test.jsonl"),
		filepath.Join(root, "wide", "calib.jsonl"), filepath.Join(root, "wide", "test.jsonl"),
		filepath.Join(root, "fresh", "calib.jsonl"), filepath.Join(root, "fresh", "test.jsonl")}
	for _, s := range []string{"attacks-extra", "code-extra", "debian-extra", "hardneg-extra", "jsdev-extra", "npm-extra",
		"paths-extra", "prose-extra", "pydoc-extra", "query-extra", "revshell-extra", "shell-extra", "sqli-extra", "wapiti-extra"} {
		out = append(out, filepath.Join(root, s, "calib.jsonl"))
	}
	return out
}

// inAnyHeldoutSet is the drop reason of a line another set already has.
const inAnyHeldoutSet = "in another held-out set (main, wide, fresh or an *-extra set; normalized; not written here)"

// freshAttackSourceOf is the source (freshAttackSources' ID) a record's or a dropped line's
// source string names, or "".
func freshAttackSourceOf(source string) string {
	for _, s := range freshAttackSources {
		if strings.HasPrefix(source, s.ID+"@") {
			return s.ID
		}
	}
	return ""
}

// freshAttackSplit puts a record in the split of its source.
func freshAttackSplit(r Record) string {
	id := freshAttackSourceOf(r.Source)
	for _, s := range freshAttackSources {
		if s.ID == id {
			return s.Split
		}
	}
	return "test"
}

// generateFreshAttacks writes out/{calib,test}.jsonl, out/dropped.jsonl and out/COUNTS.md.
func generateFreshAttacks(out, cache, src string, others []string, stdout io.Writer) error {
	var attacks []attack
	for _, s := range freshAttackSources {
		var a []attack
		var err error
		read := s.read
		if read == nil {
			read = sensitivePathList
		}
		switch {
		case s.vendored != nil:
			a, err = vendoredAttacks(src, s.ID, s.vendored)
		case s.mod != nil:
			a, err = goTestAttacks(*s.mod)
		case s.npm != nil:
			a, err = npmFileAttacks(cache, *s.npm, s.Dir, s.Lists, read)
		default:
			a, err = debFileAttacks(cache, *s.deb, s.Dir, s.Lists, func(path, source string, _ int) ([]attack, error) {
				return read(path, source)
			})
		}
		if err != nil {
			return err
		}
		for i := range a {
			// det51: each prompt is placed with a goal appended and alone, so a rule that
			// needs the goal's words shows apart (kinds *_bare).
			a[i].bare = a[i].label == "prompt_injection"
		}
		attacks = append(attacks, a...)
	}
	known, err := filesKeys(others, normTextKey)
	if err != nil {
		return err
	}
	onTest, err := testWordLines(cache)
	if err != nil {
		return err
	}
	recs, dropped := placeAttacks(attacks, dropLateOnTest(onTest, dropRepeats(known, inAnyHeldoutSet, freshAttackDrop)))
	for i := range dropped {
		if r := dropped[i].Reason; r == inAnyHeldoutSet || r == onTestWordList {
			dropped[i].Text, dropped[i].Source = "", "" // other sets' and the test split's lines stay unseen
		}
	}
	head := "# Fresh attack set, split by source: counts\n\nWritten by `make heldout-fresh-attacks`"
	var counts strings.Builder
	if err := writeSplits(out, recs, freshAttackSplit, head, dropped, &counts); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "dropped.jsonl"), dropped); err != nil {
		return err
	}
	text := counts.String() + freshAttackSourceCounts(recs)
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, text)
	return nil
}

// onTestWordList is the drop reason of a late calib source's line a test source's word list
// holds.
const onTestWordList = "on a test source's word list (dirb; normalized): stays in the test split, dropped from calib (not written here)"

// testWordLines returns the normalized lines (normKey) of every word list of the test
// sources read as sensitive paths (read nil: dirb's), each line as wordlistAttacks reads it
// and whether or not sensitiveRe matches it. They are never printed.
func testWordLines(cache string) (map[string]bool, error) {
	keys := map[string]bool{}
	for _, s := range freshAttackSources {
		if s.Split != "test" || s.deb == nil || s.read != nil {
			continue
		}
		a, err := debFileAttacks(cache, *s.deb, s.Dir, s.Lists, func(path, source string, _ int) ([]attack, error) {
			return wordlistAttacks(path, source, "sensitive_paths", strings.TrimSpace)
		})
		if err != nil {
			return nil, err
		}
		for _, x := range a {
			keys[normKey(x.text)] = true
		}
	}
	return keys, nil
}

// dropLateOnTest is a placeAttacks drop rule: a line of a late source whose normalized text
// (normKey) is in onTest is dropped with onTestWordList before rest sees it (so the test
// split's copy is not taken for its repeat), and any other line goes to rest.
func dropLateOnTest(onTest map[string]bool, rest func(attack) string) func(attack) string {
	late := map[string]bool{}
	for _, s := range freshAttackSources {
		late[s.ID] = s.late
	}
	return func(a attack) string {
		if late[freshAttackSourceOf(a.source)] && onTest[normKey(strings.TrimSpace(a.text))] {
			return onTestWordList
		}
		return rest(a)
	}
}

// sensitivePathList reads a scanner's word list: only a line keep's vocabulary names a
// secret with is a candidate (the lists are mostly directory and page names, tens of
// thousands, which are not listed).
func sensitivePathList(path, source string) ([]attack, error) {
	a, err := wordlistAttacks(path, source, "sensitive_paths", strings.TrimSpace)
	return slices.DeleteFunc(a, func(x attack) bool { return !sensitiveRe.MatchString(x.text) }), err
}

// npmFileAttacks packs p and reads each file rels names under under with read; the source
// is npm:name@version/path.
func npmFileAttacks(cache string, p npmPackage, under string, rels []string, read func(path, source string) ([]attack, error)) ([]attack, error) {
	dir, err := fetchNPM(cache, p)
	if err != nil {
		return nil, err
	}
	var out []attack
	for _, rel := range rels {
		a, err := read(filepath.Join(dir, filepath.FromSlash(under+rel)), "npm:"+p.Name+"@"+p.Version+"/"+under+rel)
		if err != nil {
			return nil, err
		}
		out = append(out, a...)
	}
	return out, nil
}

// scriptLiteral: a one-line string literal of a Lua or Python script, double- or
// single-quoted.
var scriptLiteral = regexp.MustCompile(`"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'`)

// scannerLiteralAttacks reads the string literals of a web scanner's script (nmap's NSE
// scripts, wafw00f) and keeps those scannerLiteralClass classes; the source is path:line.
func scannerLiteralAttacks(path, source string) ([]attack, error) {
	var out []attack
	err := scanLines(path, func(n int, l string) {
		for _, m := range scriptLiteral.FindAllStringSubmatch(l, -1) {
			label, text := scannerLiteralClass(m[1] + m[2])
			if label != "" {
				out = append(out, attack{label: label, text: text, source: fmt.Sprintf("%s:%d", source, n)})
			}
		}
	})
	return out, err
}

// The probes a scanner sends: nmap's http-waf-detect writes each as a query string
// (?p4yl04d=VALUE, percent-encoded); a SQL probe has UNION and SELECT or a quote then OR; a
// command probe starts with a command name or a path under /bin.
var (
	scannerQuery   = regexp.MustCompile(`^\?p4yl04d\d*=(.*)$`)
	scannerSQL     = regexp.MustCompile(`(?i)\bunion\b.*\bselect\b|'\s*or\s`)
	scannerCommand = regexp.MustCompile(`^(cat|id|ping|wget|curl|uname|hostname|/bin/[a-z]+)\b`)
)

// scannerLiteralClass classes a scanner script's literal: sql_injection, command_injection,
// or "" (markup, paths, URLs and everything else: not a candidate here); the text is the
// value the scanner sends, decoded once.
func scannerLiteralClass(lit string) (label, text string) {
	t := strings.TrimSpace(lit)
	if m := scannerQuery.FindStringSubmatch(t); m != nil {
		t = decodeOnce(m[1])
	}
	switch {
	case scannerSQL.MatchString(t):
		return "sql_injection", t
	case scannerCommand.MatchString(t):
		return "command_injection", t
	}
	return "", ""
}

// vulnBlockAttacks reads a benchmark corpus of prompts: each block after a "# VULN: rule"
// line, up to the next comment line, is a prompt injection ("# SAFE:" blocks, the corpus's
// benign prompts, are not read); the source is path:line of the VULN line.
func vulnBlockAttacks(path, source string) ([]attack, error) {
	var out []attack
	var block []string
	start := 0
	flush := func() {
		if t := strings.TrimSpace(strings.Join(block, "\n")); start > 0 && t != "" {
			out = append(out, attack{label: "prompt_injection", text: t, source: fmt.Sprintf("%s:%d", source, start)})
		}
		block, start = nil, 0
	}
	err := scanLines(path, func(n int, l string) {
		if strings.HasPrefix(l, "#") {
			flush()
			if strings.HasPrefix(l, "# VULN:") {
				start = n
			}
			return
		}
		if start > 0 {
			block = append(block, l)
		}
	})
	flush()
	return out, err
}

// vendoredAttacks reads each file of a vendored source under src; the source of a line is
// repo@commit[:12]/path:line.
func vendoredAttacks(src, repo string, files []vendoredFile) ([]attack, error) {
	var out []attack
	for _, f := range files {
		read, ok := vendoredReaders[f.Read]
		if !ok {
			return nil, fmt.Errorf("%s: no reader %q", f.Local, f.Read)
		}
		a, err := read(filepath.Join(src, filepath.FromSlash(f.Local)), repo+"@"+f.Commit[:12]+"/"+f.Path, f.Label)
		if err != nil {
			return nil, err
		}
		out = append(out, a...)
	}
	return out, nil
}

// vendoredReaders: list, a fuzzing list (a line each, percent escapes decoded once, the
// fuzzer's __TIME__ delay marker given a fixed 5 seconds); payloads, a GoTestWAF test case
// (each string of its payload list, as written: GoTestWAF encodes it itself); prompt, a
// promptmap rule (its prompt).
var vendoredReaders = map[string]func(path, source, label string) ([]attack, error){
	"list": func(path, source, label string) ([]attack, error) {
		return wordlistAttacks(path, source, label, func(l string) string {
			return strings.ReplaceAll(decodeOnce(l), "__TIME__", "5")
		})
	},
	"payloads": func(path, source, label string) ([]attack, error) {
		return yamlStrings(path, source, label, "payload")
	},
	"prompt": func(path, source, label string) ([]attack, error) {
		return yamlStrings(path, source, label, "prompt")
	},
}

// yamlStrings reads the YAML document at path and returns the string under key, or each
// string of the list under key, with its line.
func yamlStrings(path, source, label, key string) ([]attack, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a YAML mapping", path)
	}
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value != key {
			continue
		}
		vals := []*yaml.Node{m[i+1]}
		if m[i+1].Kind == yaml.SequenceNode {
			vals = m[i+1].Content
		}
		var out []attack
		for _, v := range vals {
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s:%d: %s: not a string", path, v.Line, key)
			}
			out = append(out, attack{label: label, text: v.Value, source: fmt.Sprintf("%s:%d", source, v.Line)})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: no %s", path, key)
}

// freshAttackSourceCounts is COUNTS.md's table of records per source and label.
func freshAttackSourceCounts(recs []Record) string {
	n := map[string]map[string]int{}
	labels := map[string]bool{}
	for _, r := range recs {
		id := freshAttackSourceOf(r.Source)
		if n[id] == nil {
			n[id] = map[string]int{}
		}
		n[id][r.Label]++
		n[id][""]++
		labels[r.Label] = true
	}
	var ls []string
	for l := range labels {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	var b strings.Builder
	b.WriteString("\n## Records per source (each source wholly in one split)\n\n| source | version | licence | split | " +
		strings.Join(ls, " | ") + " | records |\n|---|---|---|---|" + strings.Repeat("---:|", len(ls)+1) + "\n")
	for _, s := range freshAttackSources {
		v := ""
		switch {
		case s.vendored != nil:
			v = "files pinned by commit"
		case s.mod != nil:
			v = s.mod.Version
		case s.npm != nil:
			v = s.npm.Version
		default:
			v = s.deb.Version
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", s.ID, v, s.License, s.Split)
		for _, l := range ls {
			fmt.Fprintf(&b, " %d |", n[s.ID][l])
		}
		fmt.Fprintf(&b, " %d |\n", n[s.ID][""])
	}
	return b.String()
}

// goTestAttacks fetches m and returns the classed string literals of its _test.go files, in
// path order; the source is module@version/file:line.
func goTestAttacks(m goModule) ([]attack, error) {
	dir, err := fetchGo(m)
	if err != nil {
		return nil, err
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []attack
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		lits, err := goTestLiterals(f)
		if err != nil {
			return nil, err
		}
		for _, l := range lits {
			label, text := freshLiteralClass(l.text)
			if label == "" {
				continue
			}
			out = append(out, attack{label: label, text: text,
				source: fmt.Sprintf("%s@%s/%s:%d", m.Path, m.Version, filepath.ToSlash(rel), l.line)})
		}
	}
	return out, nil
}

type goLiteral struct {
	text string
	line int
}

// goTestLiterals returns every string literal of the Go file at path, unquoted, in order.
func goTestLiterals(path string) ([]goLiteral, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []goLiteral
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil {
					out = append(out, goLiteral{s, fset.Position(x.Pos()).Line})
				}
			}
		}
		return true
	})
	return out, nil
}

// Classes of a Go test literal.
var (
	// urlScheme: a URL with a scheme and an authority.
	urlScheme = regexp.MustCompile(`^(?i)[a-z][a-z0-9+.-]*://`)
	// addrLike: an address as an SSRF guard's test writes it, before parsing: digits, hex
	// digits, dots, colons and brackets, an optional port and path.
	addrLike = regexp.MustCompile(`^(?i)(\[[0-9a-f:.]+\]|[0-9a-fx.:]+)(:\d+)?/?$`)
)

// freshLiteralClass classes a Go test literal: ssrf (a URL or a bare address, given http://
// as the guard's test does before fetching it), xss (xssSignal: markup, a handler, a script
// URL), path_traversal (dotdot), or "" (no class: not a candidate).
func freshLiteralClass(s string) (label, text string) {
	t := strings.TrimSpace(s)
	switch {
	case t == "" || strings.ContainsAny(t, "\n"):
		if xssSignal.MatchString(t) {
			return "xss", t
		}
		return "", ""
	case urlScheme.MatchString(t) && !strings.ContainsAny(t, " <>\"'"):
		return "ssrf", t
	case isBareAddr(t):
		return "ssrf", "http://" + t
	case xssSignal.MatchString(t):
		return "xss", t
	case dotdot.MatchString(strings.ToLower(t)):
		return "path_traversal", t
	}
	return "", ""
}

// isBareAddr reports whether t is an address written without a scheme: addrLike, with a digit,
// and a dot, colon, bracket or trailing slash, a 0x prefix, or eight digits or more (a 32-bit
// integer address); a short bare number (a count, a port) is not.
func isBareAddr(t string) bool {
	if !addrLike.MatchString(t) || !strings.ContainsAny(t, "0123456789") {
		return false
	}
	return strings.ContainsAny(t, ".:[/") || strings.HasPrefix(strings.ToLower(t), "0x") || len(t) >= 8
}

// The drop rules of the fresh attack set, written before any of its lines met the chain.
var (
	// xssScript: markup that runs script in a page: a script-capable element, an event
	// handler, a script URL, a CSS expression, an HTML data URL.
	xssScript = regexp.MustCompile(`(?i)<\s*/?\s*(script|iframe|frame|object|embed|svg|math|base|applet|meta|link|form|isindex)\b|\bon[a-z]+\s*=|(java|vb|live)script\s*:|expression\s*\(|data:text/html|srcdoc\s*=`)
	// goTemplate: a Go template action; the test renders it, the literal is not input.
	goTemplate = regexp.MustCompile(`\{\{.*\}\}`)
)

// freshAttackDrop gives the reason a line is not an attack where it is placed, or "".
func freshAttackDrop(a attack) string {
	t := strings.TrimSpace(a.text)
	switch a.label {
	case "ssrf":
		return ssrfDrop(t)
	case "xss":
		if goTemplate.MatchString(t) {
			return "a Go template the test renders, not input a user sends"
		}
		if !xssScript.MatchString(t) {
			return "markup that runs no script (no script element, handler, script URL or expression): inert in a comment body"
		}
	case "path_traversal":
		if !escapesRoot(t) {
			return "its parent-directory steps stay inside the tool's root (a/../b)"
		}
	case "sensitive_paths":
		if strings.Contains(t, "%") {
			return "a template: the scanner fills %EXT% and its other markers, so it names no file"
		}
	}
	return ""
}

// ssrfDrop gives the reason a URL is not a forged request to an internal address, or "".
func ssrfDrop(u string) string {
	if strings.HasPrefix(strings.ToLower(u), "file://") {
		return "" // a local file: the fetch tool reads the host it runs on
	}
	rest := u[strings.Index(u, "://")+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	host := rest
	if strings.HasPrefix(host, "[") {
		if i := strings.Index(host, "]"); i >= 0 {
			host = host[1:i]
		}
	} else if i := strings.LastIndex(host, ":"); i >= 0 && strings.Count(host, ":") == 1 {
		host = host[:i]
	}
	h := strings.ToLower(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "metadata.google.internal" {
		return ""
	}
	ip, ok := parseInetAton(h)
	if !ok {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "no internal host: a name or a malformed address, which a fetch tool resolves as any site"
		}
		ip = a.Unmap()
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return ""
	}
	return "a public address: fetching it is what a fetch tool is for"
}

// parseInetAton parses an IPv4 address as inet_aton does (and so as most URL parsers and
// resolvers do): one to four parts, each decimal, 0x hex or 0 octal, the last filling the
// remaining bytes.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || s == "" {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		base := 10
		q := p
		switch {
		case strings.HasPrefix(q, "0x") || strings.HasPrefix(q, "0X"):
			base, q = 16, q[2:]
		case len(q) > 1 && q[0] == '0':
			base, q = 8, q[1:]
		}
		if q == "" && base == 16 {
			q = "0"
		}
		v, err := strconv.ParseUint(q, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		ip |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// escapesRoot reports whether path p, resolved step by step from a tool's root ("/" or "\" as
// separators, a leading one starting at the root), climbs above it.
func escapesRoot(p string) bool {
	depth := 0
	for _, seg := range strings.FieldsFunc(decodeOnce(p), func(r rune) bool { return r == '/' || r == '\\' }) {
		switch seg {
		case ".", "":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}
