package main

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The extra attack set (issue 26): a calib-only source for tuning the SQL injection, XSS and
// path traversal rules on an attack family no other set uses, written by `-attacks-extra`. It
// has no test split. Its lines are the payload lists Debian bookworm's wfuzz package ships
// (/usr/share/wfuzz/wordlist), each placed where the main set places its class (attack.go's
// placeAttack): SQL in a search box, XSS in a comment body, traversal in a file tool's path.
// A line that normalizes (normKey) to any record of the main set (calib or test) or of the
// sqli-extra or paths-extra sets is dropped by the tool without being written anywhere
// (dropped.jsonl gives no text for it, COUNTS.md its count), so the set neither counts a
// payload twice nor shows what the test split holds.

// wfuzzPackage is fetched with `apt-get download wfuzz=3.1.0-2` (fetchDeb); License is its
// debian/copyright's "Files: *" licence.
var wfuzzPackage = debPackage{"wfuzz", "3.1.0-2", "GPL-2"}

// wfuzzLists are the payload lists read, under usr/share/wfuzz/wordlist, with the class their
// lines are placed as. The others (All_attack.txt, a mix with no class per line; bad_chars.txt;
// the product- and server-specific file lists of vulns/; general/ and stress/ word lists) are
// not read.
var wfuzzLists = []struct{ Rel, Label string }{
	{"Injections/SQL.txt", "sql_injection"},
	{"vulns/sql_inj.txt", "sql_injection"},
	{"Injections/XSS.txt", "xss"},
	{"Injections/XML.txt", "xss"},
	{"Injections/Traversal.txt", "path_traversal"},
	{"vulns/dirTraversal.txt", "path_traversal"},
	{"vulns/dirTraversal-nix.txt", "path_traversal"},
	{"vulns/dirTraversal-win.txt", "path_traversal"},
}

// attacksExtraOthers lists the JSONL files whose records a line of the set must not repeat:
// the main set's calib and test, sqli-extra and paths-extra.
func attacksExtraOthers(root string) []string {
	return []string{
		filepath.Join(root, "calib.jsonl"), filepath.Join(root, "test.jsonl"),
		filepath.Join(root, "sqli-extra", "calib.jsonl"), filepath.Join(root, "paths-extra", "calib.jsonl"),
	}
}

// inOtherAttackSet is the drop reason of a line another set already has.
const inOtherAttackSet = "in data/heldout/calib.jsonl, test.jsonl, sqli-extra or paths-extra (normalized; not written here)"

// generateAttacksExtra writes out/calib.jsonl, out/dropped.jsonl and out/COUNTS.md from the
// wfuzz lists, less the lines the records of others hold (normalized; a missing file is an
// error), the lines attacksExtraDrop drops and those `keep` drops.
func generateAttacksExtra(out, cache string, others []string, stdout io.Writer) error {
	rels := make([]string, len(wfuzzLists))
	for i, l := range wfuzzLists {
		rels[i] = l.Rel
	}
	attacks, err := debFileAttacks(cache, wfuzzPackage, "usr/share/wfuzz/wordlist/", rels, func(path, source string, i int) ([]attack, error) {
		return wordlistAttacks(path, source, wfuzzLists[i].Label, decodeOnce)
	})
	if err != nil {
		return err
	}
	return writeUnseenAttackSet(out, "# Extra attack set (calib only): counts\n\nWritten by `make heldout-attacks-extra`",
		attacks, others, inOtherAttackSet, attacksExtraDrop, stdout)
}

// debFileAttacks fetches p (fetchDeb) and reads the attacks of each file under/rels[i] of it
// with read, given the file's path, its source (deb:name@version/under+rel) and i.
func debFileAttacks(cache string, p debPackage, under string, rels []string, read func(path, source string, i int) ([]attack, error)) ([]attack, error) {
	dir, err := fetchDeb(cache, p)
	if err != nil {
		return nil, err
	}
	var attacks []attack
	for i, rel := range rels {
		a, err := read(filepath.Join(dir, filepath.FromSlash(under+rel)), "deb:"+p.Name+"@"+p.Version+"/"+under+rel, i)
		if err != nil {
			return nil, err
		}
		attacks = append(attacks, a...)
	}
	return attacks, nil
}

// writeUnseenAttackSet places attacks into a calib-only set in out (writeExtraSet, under
// heading): a line whose normalized text (normKey) a record of the JSONL files others holds
// is dropped with inOther and written with no text or source (the records of a test split stay
// unseen; a missing file is an error), a repeat as a duplicate, a line drop gives a reason for
// with that reason, and the rest go through `keep`.
func writeUnseenAttackSet(out, heading string, attacks []attack, others []string, inOther string, drop func(attack) string, stdout io.Writer) error {
	known, err := filesKeys(others, normTextKey)
	if err != nil {
		return err
	}
	recs, dropped := placeAttacks(attacks, dropRepeats(known, inOther, drop))
	for i := range dropped {
		if dropped[i].Reason == inOther {
			dropped[i].Text, dropped[i].Source = "", "" // test records stay unseen
		}
	}
	return writeExtraSet(out, heading, recs, dropped, stdout)
}

// wordlistAttacks reads one payload per line of a payload list at path, labelled label: CR line
// ends are cut, blank lines and "# " comment lines skipped, and each line rewritten by fix
// (wfuzz: decodeOnce; wapiti: wapitiFill). Its source names the line number.
func wordlistAttacks(path, source, label string, fix func(string) string) ([]attack, error) {
	var out []attack
	err := scanLines(path, func(n int, l string) {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "# ") {
			return
		}
		out = append(out, attack{label: label, text: fix(l), source: fmt.Sprintf("%s:%d", source, n)})
	})
	return out, err
}

// scanLines calls each with every line of the file at path (numbered from 1, a CR line end
// cut).
func scanLines(path string, each func(n int, line string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		each(n, strings.TrimRight(sc.Text(), "\r"))
	}
	return sc.Err()
}

// decodeOnce decodes a list line's percent escapes once, as the server of the URL wfuzz puts it
// in would (a `+` stays: it is not a query-string space in a path or a tool argument). A line
// with an invalid escape, or whose decoding is not UTF-8 (overlong `%c0%ae`), stays as written.
func decodeOnce(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	d, err := url.PathUnescape(s)
	if err != nil || !utf8.ValidString(d) {
		return s
	}
	return d
}

// The drop rules of the extra set, before `keep` (which all lines also pass through). wfuzz's
// lists are fuzzing inputs: many lines are single characters, keywords or numbers sent to see
// what errors, which a search box, a comment body or a path field reads as text.
var (
	// sqlQuoteThen: a quote closes the string the search text sits in, and SQL follows it: OR or
	// AND before a test or a parenthesis (not before a word: "O'Brien and sons"), a keyword, a
	// concatenation, a comment or a stacked statement.
	sqlQuoteThen = regexp.MustCompile(`(?i)['"].*?(\b(or|and)(\s|/\*[^*]*\*/)*(\(|[\w'"]*\s*(=|<|>|\blike\b))|\b(union|select|exec|execute|insert|update|delete|drop|having|waitfor)\b|order\s+by|group\s+by|sleep\s*\(|benchmark\s*\(|\|\||--|#|/\*|;\s*(select|insert|update|delete|drop|exec|declare|shutdown)\b)`)
	// sqlBoolean: a boolean test joined by OR or AND (`or 1=1`, `and user()=user()`), spaces
	// or inline comments between.
	sqlBoolean = regexp.MustCompile(`(?i)(^|[\s)'"]|\*/)(or|and)(\s|/\*[^*]*\*/)+\(?\s*[\w'"().@]+\s*(=|<>|!=|<|>|\blike\b)`)
	// sqlQuery: a stacked statement, a UNION SELECT, an EXEC of an extended procedure, or an
	// ORDER BY column number.
	sqlQuery = regexp.MustCompile(`(?i);\s*(select|insert|update|delete|drop|exec|declare|shutdown)\b|\bunion\s+(all\s+)?select\b|\bexec(ute)?\s+(master\.\.)?(xp|sp)_\w+|\border\s+by\s+\d`)
	// xmlScript: an XML line that carries script once CDATA sections and comments are taken
	// apart (a script element, a script URL, an HTC behaviour).
	xmlScript   = regexp.MustCompile(`(?i)script|\.htc\b`)
	xmlSplitter = regexp.MustCompile(`<!\[CDATA\[|\]\]>|<!--.*?-->`)
)

// noSQLChange is the drop reason of a search-box line sqlChangesQuery does not take.
const noSQLChange = "no quote followed by SQL, boolean test, stacked, UNION, EXEC or ORDER BY query: a lone quote, keyword, function, number or punctuation a search box reads as text"

// sqlChangesQuery reports whether search text t changes the query it is pasted into: a quote
// followed by SQL, a boolean test, or a stacked, UNION, EXEC or ORDER BY query.
func sqlChangesQuery(t string) bool {
	return sqlQuoteThen.MatchString(t) || sqlBoolean.MatchString(t) || sqlQuery.MatchString(t)
}

// attacksExtraDrop gives the reason a wfuzz line is not an attack where it is placed, or "".
func attacksExtraDrop(a attack) string {
	t := strings.TrimSpace(a.text)
	switch a.label {
	case "sql_injection":
		if !sqlChangesQuery(t) {
			return noSQLChange
		}
	case "xss":
		if strings.Contains(a.source, "/Injections/XML.txt:") && !xmlScript.MatchString(xmlSplitter.ReplaceAllString(t, "")) {
			return "XML without script (XXE, XPath, a data island): needs an XML parser, which a comment body is not"
		}
	case "path_traversal":
		if strings.Contains(t, "{FILE}") {
			return "a template: wfuzz fills its {FILE} placeholder, so it names no file"
		}
	}
	return ""
}
