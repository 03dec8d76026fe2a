package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestQueryLiterals: the literal after each match of a rule's prefix, in Go and JavaScript
// quoting, unescaped and trimmed, with its line; literals that are not one-line queries (empty,
// one character, control characters, a JSON body) are left out.
func TestQueryLiterals(t *testing.T) {
	src := "q := index.Search(\"O'Reilly \\\"Go\\\" book\")\n" +
		"index.Search('title:(go OR rust) -draft')\n" +
		"index.Search(`C:\\path\\*`)\n" +
		"index.Search(\"x\")\n" +
		"index.Search(\"line\\nbreak\")\n" +
		"index.Search(\"{\\\"match\\\": 1}\")\n" +
		"other(\"not a query\")\n" +
		"index.Search(  \"  padded  \"  )\n"
	re := rule(`.`, `\.Search\(\s*`).prefix
	got := queryLiterals(src, re)
	want := []queryLit{
		{`O'Reilly "Go" book`, 1},
		{`title:(go OR rust) -draft`, 2},
		{`C:\path\*`, 3},
		{`padded`, 8},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// A suffix rule takes only literals the suffix follows.
	re = ruleThen(`.`, `\.default\)\(`, `,\s*testQuery\b`).prefix
	got = queryLiterals("(0, ava_1.default)('foo:bar', testQuery);\n(0, ava_1.default)('empty query', (t) => {\n", re)
	if want := []queryLit{{"foo:bar", 1}}; !slices.Equal(got, want) {
		t.Errorf("suffix rule: got %+v, want %+v", got, want)
	}
}

// TestQueryPayload: search syntax (quotes, apostrophes, colons, dashes, parentheses, boolean
// words, wildcards, ranges, regexps) is kept; attack payloads from a parser's tests of
// malicious input are left out.
func TestQueryPayload(t *testing.T) {
	for _, q := range []string{
		`O'Reilly`, `"jakarta apache" -"Apache Lucene"`, `title:(go OR rust) AND NOT draft`,
		`field:t<est`, `height:>=220`, `mod_date:[20020101 TO 20030101]`, `name:/mar.*/`,
		`email:/[^.:@\s](?:[^:@\s]*[^.:@\s])?@[^.@\s]+/`, `c++ -java`, `don't stop`,
		`foo:{bar TO baz}`, `@email:{test\@redis\.com}`, `select a laptop`, `union jack`,
	} {
		if queryPayload.MatchString(q) {
			t.Errorf("queryPayload matches the search query %q", q)
		}
	}
	for _, q := range []string{
		`__proto__`, `constructor`, `<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`,
		`' OR '1'='1`, `x' AND 1=1`, `1; DROP TABLE users`, `a UNION SELECT password FROM users`,
		`admin'-- `, `1/*comment*/`, `sleep(5)`, `$(id)`, `${7*7}`, `{{7*7}}`, `../../etc/passwd`,
		`javascript:alert(1)`,
	} {
		if !queryPayload.MatchString(q) {
			t.Errorf("queryPayload does not match the payload %q", q)
		}
	}
}

// TestPlaceQueries: a query goes where the SQL injection sets put their attacks: the same
// server, tool and arguments, label benign, kind query.
func TestPlaceQueries(t *testing.T) {
	m := goModule{Path: "example.com/m", Version: "v1.0.0", Name: "m"}
	got := placeQueries([]candidate{{kind: "query", text: `"foo bar" -baz`, mod: m, rel: "a_test.go", source: "s", group: "g"}})
	a := placeAttack(attack{label: "sql_injection", text: "x' OR 1=1"})
	if len(got) != 1 || len(a) != 1 {
		t.Fatalf("got %d records, attack %d", len(got), len(a))
	}
	r := got[0]
	if r.Label != "benign" || r.Kind != "query" || r.Transport != a[0].Transport || r.Server != a[0].Server ||
		r.Tool != a[0].Tool || r.Phase != "request" || r.Text != `"foo bar" -baz` {
		t.Errorf("record %+v, attack placed as %+v", r, a[0])
	}
	var args, attackArgs map[string]any
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(a[0].Arguments, &attackArgs); err != nil {
		t.Fatal(err)
	}
	if args["query"] != r.Text || args["limit"] != attackArgs["limit"] || len(args) != len(attackArgs) {
		t.Errorf("arguments %s, attack's %s", r.Arguments, a[0].Arguments)
	}
}

// The query-extra set's Go modules are in no other set, and each is pinned with its licence.
func TestQueryExtraModulesAreNew(t *testing.T) {
	used := map[string]bool{libinjectionModule.Path: true}
	for _, m := range append(append(slices.Clone(goModules), wideModules...), shellExtraModules...) {
		used[m.Path] = true
	}
	checkNewModules(t, queryExtraGoModules, used, "already a source of another held-out set")
	n := 0
	for _, s := range querySources {
		if (s.mod == nil) == (s.npm == nil) || len(s.rules) == 0 {
			t.Errorf("source %+v: want exactly one of a module and a package, and rules", s)
		}
		if s.npm != nil && (s.npm.Version == "" || s.npm.License == "") {
			t.Errorf("%s: version %q, licence %q", s.npm.Name, s.npm.Version, s.npm.License)
		}
		if s.mod != nil {
			n++
		}
	}
	if n != len(queryExtraGoModules) {
		t.Errorf("querySources has %d Go modules, queryExtraGoModules %d", n, len(queryExtraGoModules))
	}
}

// TestQueryExtraByteIdentical: the committed query-extra set is what the generator writes (it
// fetches 8 Go modules through the Go module proxy and packs 7 npm packages; skipped with
// -short).
func TestQueryExtraByteIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches 8 Go modules and 7 npm packages")
	}
	for _, c := range []string{"go", "npm"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skip("no " + c + " command")
		}
	}
	root := filepath.Join("..", "..")
	out := t.TempDir()
	var log bytes.Buffer
	cache := filepath.Join(root, "build", "_heldout-src")
	if err := generateQueryExtra(out, cache, queryExtraOthers(filepath.Join(root, "data", "heldout")), &log); err != nil {
		t.Fatal(err)
	}
	checkRegenerated(t, out, filepath.Join(root, "data", "heldout"), "query-extra", "heldout-query-extra")
}
