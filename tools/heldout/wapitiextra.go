package main

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// The wapiti attack set (issue 26): a second calib-only attack source for tuning the SQL
// injection, command injection, XSS, path traversal and SSRF rules, written by `-wapiti-extra`.
// It has no test split. Its lines are the payload files Debian bookworm's wapiti package ships
// (usr/lib/python3/dist-packages/wapitiCore/data/attacks), each placed where the main set places
// its class (attack.go's placeAttack): blind SQL in a search box, command and code injection in
// a hostname field, XSS in a comment body, local file disclosure and traversal in a file tool's
// path, file:// and remote-inclusion URLs in a fetch tool's url. A line that normalizes (normKey)
// to a record of any other set (wapitiOthers: the main calib and test, wide, every *-extra) is
// dropped by the tool without being written anywhere (dropped.jsonl gives no text for it,
// COUNTS.md its count), so the set neither counts a payload twice nor shows what a test split
// holds.
//
// wapiti fills markers in its payloads when it sends them (wapitiCore/attack/attack.py
// PayloadReader.process_line and Mutator, net/xss_utils.py); wapitiFill fills them with fixed
// values, so the set is the same on every run:
//
//	[TIME] → 5 (seconds; wapiti: its timeout + 1)    [TIMEOUT] → nothing (a flag: time-based)
//	[LF] → a newline   [TAB] → a tab   [FF] → a form feed   \0 (two characters) → a NUL byte
//	[EXTERNAL_ENDPOINT] → http://wapiti3.ovh/ (wapiti's default outside endpoint)
//	__XSS__ → w4p1t1 (wapiti: a random taint; w4p1t1 is the marker its exec payloads use)
//	[ATTR_SEP] and [VALUE_SEP] → " (wapiti's separators for a double-quoted attribute)
//	[VALUE] → an ordinary value of the field the class is placed in (wapitiValue): laptop in a
//	search box, example.com in a hostname, docs/index.html in a path; [DIRVALUE] → its folder
//	(docs), [EXTVALUE] → its extension (html)
//
// The attack modules' own payloads (attack/mod_*.py: ssrf, crlf, shellshock, xxe, sql) are not
// read: they are built at run time (format strings, quote(), a random string), not plain
// literals, and xxePayloads.ini needs an XML parser, which none of the placements is.

// wapitiPackage is fetched with `apt-get download wapiti=3.0.4+dfsg-2` (fetchDeb); License is
// its debian/copyright's "Files: *" licence.
var wapitiPackage = debPackage{"wapiti", "3.0.4+dfsg-2", "GPL-2+"}

// wapitiDir is the folder of wapiti's payload files in the package.
const wapitiDir = "usr/lib/python3/dist-packages/wapitiCore/data/attacks/"

// wapitiFiles are the payload files read, with the class their lines are placed as: a list of
// lines, or an ini file whose sections' `payload` keys are read (fileHandlingPayloads.ini's
// lines are classed one by one, wapitiFileLabel). The others (backup, buster, password and
// user lists, message lists, xxePayloads.ini) are not attacks in a tool argument or need XML.
var wapitiFiles = []struct{ Name, Label string }{
	{"blindSQLPayloads.txt", "sql_injection"},
	{"execPayloads.txt", "command_injection"},
	{"fileHandlingPayloads.ini", ""},
	{"xssPayloads.ini", "xss"},
}

// wapitiValue is the ordinary value [VALUE] stands for, per class (the field's value before
// wapiti replaced it).
var wapitiValue = map[string]string{
	"sql_injection":     "laptop",
	"command_injection": "example.com",
	"path_traversal":    "docs/index.html",
	"ssrf":              "docs/index.html",
	"xss":               "Nice post",
}

// wapitiOthers lists the JSONL files whose records a line of the set must not repeat: the main
// set's calib and test, the wide set's, and every *-extra set's calib.
func wapitiOthers(root string) []string {
	out := []string{filepath.Join(root, "calib.jsonl"), filepath.Join(root, "test.jsonl"),
		filepath.Join(root, "wide", "calib.jsonl"), filepath.Join(root, "wide", "test.jsonl")}
	for _, s := range []string{"attacks-extra", "debian-extra", "hardneg-extra", "paths-extra", "prose-extra", "query-extra", "shell-extra", "sqli-extra"} {
		out = append(out, filepath.Join(root, s, "calib.jsonl"))
	}
	return out
}

// inAnyOtherSet is the drop reason of a line another set already has.
const inAnyOtherSet = "in data/heldout/calib.jsonl, test.jsonl, wide or another *-extra set (normalized; not written here)"

// generateWapitiExtra writes out/calib.jsonl, out/dropped.jsonl and out/COUNTS.md from
// wapiti's payload files, less the lines the records of others hold (normalized; a missing
// file is an error), the lines wapitiExtraDrop drops and those `keep` drops.
func generateWapitiExtra(out, cache string, others []string, stdout io.Writer) error {
	names := make([]string, len(wapitiFiles))
	for i, f := range wapitiFiles {
		names[i] = f.Name
	}
	attacks, err := debFileAttacks(cache, wapitiPackage, wapitiDir, names, func(path, source string, i int) ([]attack, error) {
		label := wapitiFiles[i].Label
		if strings.HasSuffix(path, ".ini") {
			return iniPayloads(path, source, label)
		}
		return wordlistAttacks(path, source, label, func(l string) string { return wapitiFill(l, label) })
	})
	if err != nil {
		return err
	}
	return writeUnseenAttackSet(out, "# Wapiti attack set (calib only): counts\n\nWritten by `make heldout-wapiti-extra`",
		attacks, others, inAnyOtherSet, wapitiExtraDrop, stdout)
}

// iniPayloads reads the `payload = ...` lines of a wapiti ini file at path (one per section, on
// one line in the files read), filled by wapitiFill for label, or, when label is "", for the
// class wapitiFileLabel gives the line. Its source names the line number.
func iniPayloads(path, source, label string) ([]attack, error) {
	var out []attack
	err := scanLines(path, func(n int, line string) {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "payload" {
			return
		}
		v = strings.TrimSpace(v)
		l := label
		if l == "" {
			l = wapitiFileLabel(v)
		}
		t := wapitiFill(v, l)
		// An absolute path leaves a file tool's root as a parent-directory step does: wapiti
		// lists it as a file disclosure, so keep's parent-directory check does not judge it.
		out = append(out, attack{label: l, text: t, source: fmt.Sprintf("%s:%d", source, n),
			listed: l == "path_traversal" && pathFromRoot.MatchString(t)})
	})
	return out, err
}

// wapitiFileLabel classes a fileHandlingPayloads.ini line: a URL (remote inclusion through
// [EXTERNAL_ENDPOINT], a file:// URL) is placed as the main set places SSRF, the rest (local
// file disclosure, traversal, wrappers of a path) as path traversal.
func wapitiFileLabel(v string) string {
	if strings.HasPrefix(v, "[EXTERNAL_ENDPOINT]") || strings.HasPrefix(strings.ToLower(v), "file:") {
		return "ssrf"
	}
	return "path_traversal"
}

// wapitiFill fills a payload line's markers with the fixed values the file's doc lists, for a
// line of class label.
func wapitiFill(l, label string) string {
	v := wapitiValue[label]
	dirv, _, _ := strings.Cut(v, "/")
	ext := v[strings.LastIndex(v, ".")+1:]
	return strings.NewReplacer(
		"[TIME]", "5", "[TIMEOUT]", "", "[LF]", "\n", "[TAB]", "\t", "[FF]", "\f", `\0`, "\x00",
		"[EXTERNAL_ENDPOINT]", "http://wapiti3.ovh/", "__XSS__", "w4p1t1",
		"[ATTR_SEP]", `"`, "[VALUE_SEP]", `"`,
		"[VALUE]", v, "[DIRVALUE]", dirv, "[EXTVALUE]", ext,
	).Replace(strings.Trim(l, " "))
}

// The drop rules of the wapiti set, written before its lines were run through any detector.
var (
	// sqlDelayJoined: a delay call (sleep, pg_sleep, benchmark) joined to the query by OR or
	// AND — a blind probe whichever quote the value sits in.
	sqlDelayJoined = regexp.MustCompile(`(?i)\b(or|and)(\s|/\*[^*]*\*/)+(sleep|pg_sleep|benchmark)\s*\(`)
	// pathFromRoot: an absolute POSIX or Windows path, which leaves a file tool's root as a
	// parent-directory step does (iniPayloads marks such a path_traversal line listed).
	pathFromRoot = regexp.MustCompile(`(?i)^(/|[a-z]:[\\/])`)
)

// wapitiExtraDrop gives the reason a wapiti line is not an attack where it is placed, or "".
func wapitiExtraDrop(a attack) string {
	t := strings.TrimSpace(a.text)
	switch a.label {
	case "sql_injection":
		// A search box's text sits in a quoted string: a line is an attack there when it
		// changes the query as attacks-extra's rule reads it, or joins a delay to it.
		if !sqlChangesQuery(t) && !sqlDelayJoined.MatchString(t) {
			return noSQLChange
		}
	case "command_injection":
		if strings.HasPrefix(strings.ToLower(t), "data:") {
			return "a PHP data: stream (an include target): a hostname field includes no file and runs no PHP"
		}
	case "path_traversal":
		if strings.Contains(t, "[FILE_NAME]") {
			return "a template: wapiti fills [FILE_NAME] with the requested script's own name, which a file tool's call has none of"
		}
	case "ssrf":
		if u := strings.ToLower(t); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			return "an outside http URL (remote inclusion): fetching it is what a fetch tool's url field is for, not a forged request"
		}
	}
	return ""
}
