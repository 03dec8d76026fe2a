package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The extra benign search-query set (issue 26): a calib-only source for measuring what the SQL
// injection rules cost on real search-box input, written by `-query-extra`. It has no test
// split. Queries are the string literals that search-engine clients, query-string parsers and
// full-text search libraries pass to their search or parse calls in their own tests and docs
// (querySources: the call or field, per file), placed exactly where the SQL injection sets place
// their attacks: MCP `shop/search_products {query, limit: 20}`, label benign, kind "query".
// A query that is already in the held-out sets (main, wide or sqli-extra; any label, calib,
// test or dropped, normalized by normKey) is dropped without being written anywhere: COUNTS.md
// gives only the count. A literal that is itself an attack payload (a parser's test of
// malicious input) is dropped by queryPayload, and COUNTS.md counts those too.

// querySource is one pinned input: a Go module or an npm package, and the calls whose string
// argument is a search query, per file.
type querySource struct {
	mod   *goModule
	npm   *npmPackage
	rules []queryRule
}

// queryRule takes the string literal that follows prefix (a regexp) in files whose path, relative
// to the source's root, matches files.
type queryRule struct {
	files  *regexp.Regexp
	prefix *regexp.Regexp
}

// strLit is a Go or JavaScript string literal on one line: double-quoted, single-quoted or
// backquoted (group 1, 2 or 3 is its body).
const strLit = `(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|` + "`([^`\\n]*)`" + `)`

func rule(files, prefix string) queryRule { return ruleThen(files, prefix, "") }

// ruleThen is rule with a suffix (a regexp without groups) that must follow the literal.
func ruleThen(files, prefix, suffix string) queryRule {
	return queryRule{regexp.MustCompile(files), regexp.MustCompile(prefix + strLit + suffix)}
}

// esJSON takes the "query" of an Elasticsearch or OpenSearch query (match, match_phrase,
// multi_match, query_string, simple_query_string...) written as JSON in code or docs.
const esJSON = `"query"\s*:\s*`

var (
	bleveModule      = goModule{"github.com/blevesearch/bleve/v2", "v2.6.3", "Apache-2.0", "bleve"}
	meiliModule      = goModule{"github.com/meilisearch/meilisearch-go", "v0.37.0", "MIT", "meilisearch-go"}
	typesenseModule  = goModule{"github.com/typesense/typesense-go/v2", "v2.0.0", "Apache-2.0", "typesense-go"}
	olivereModule    = goModule{"github.com/olivere/elastic/v7", "v7.0.32", "MIT", "elastic"}
	goESModule       = goModule{"github.com/elastic/go-elasticsearch/v8", "v8.19.7", "Apache-2.0", "go-elasticsearch"}
	openSearchModule = goModule{"github.com/opensearch-project/opensearch-go/v4", "v4.8.1", "Apache-2.0", "opensearch-go"}
	goGitHubModule   = goModule{"github.com/google/go-github/v75", "v75.0.0", "BSD-3-Clause", "go-github"}
	goRedisModule    = goModule{"github.com/redis/go-redis/v9", "v9.23.0", "BSD-2-Clause", "go-redis"}

	lunrPackage         = npmPackage{"lunr", "2.3.9", "MIT"}
	elasticlunrPackage  = npmPackage{"elasticlunr", "0.9.5", "MIT"}
	liqePackage         = npmPackage{"liqe", "3.8.7", "BSD-3-Clause"}
	luceneQPPackage     = npmPackage{"lucene-query-parser", "1.2.0", "Apache-2.0"}
	searchQPPackage     = npmPackage{"search-query-parser", "1.6.0", "MIT"}
	minisearchPackage   = npmPackage{"minisearch", "7.2.0", "MIT"}
	logicQueryPackage   = npmPackage{"logic-query-parser", "0.0.5", "MIT"}
	queryExtraGoModules = []goModule{bleveModule, meiliModule, typesenseModule, olivereModule, goESModule, openSearchModule, goGitHubModule, goRedisModule}
)

// querySources lists every input and where its queries are. Go modules first, then npm
// packages, each in this order; files in sorted order within each.
var querySources = []querySource{
	{mod: &bleveModule, rules: []queryRule{
		rule(`^search/query/query_string_(parser|lex)_test\.go$`, `\binput:\s*`),
		rule(`\.(go|md)$`, `\bNewQueryStringQuery\(`),
		rule(`^test/tests/.*\.json$`, `"(query|match|match_phrase|prefix|wildcard)"\s*:\s*`),
	}},
	{mod: &meiliModule, rules: []queryRule{
		rule(`\.(go|md)$`, `\.Search(WithContext)?\(`),
		rule(`\.(go|md)$`, `\bQuery:\s*(pointer\.String\()?`),
	}},
	{mod: &typesenseModule, rules: []queryRule{
		rule(`\.(go|md)$`, `\bQ:\s*(pointer\.String\()?`),
	}},
	{mod: &olivereModule, rules: []queryRule{
		rule(`\.(go|md)$`, `\bNew(QueryString|SimpleQueryString|MultiMatch)Query\(`),
		rule(`\.(go|md)$`, `\bNew(Match|MatchPhrase|MatchPhrasePrefix|MatchBoolPrefix|CommonTerms)Query\("[^"]*",\s*`),
		rule(`\.(go|md|json)$`, esJSON),
	}},
	{mod: &goESModule, rules: []queryRule{rule(`\.(go|md|json)$`, esJSON)}},
	{mod: &openSearchModule, rules: []queryRule{rule(`\.(go|md|json)$`, esJSON)}},
	{mod: &goGitHubModule, rules: []queryRule{rule(`\.(go|md)$`, `\.Search\.\w+\(ctx,\s*`)}},
	{mod: &goRedisModule, rules: []queryRule{
		rule(`\.(go|md)$`, `\bFT(Search|SearchWithArgs|Aggregate|AggregateWithArgs|Explain|ExplainWithArgs|SpellCheck|SpellCheckWithArgs)\(ctx,\s*"[^"]*",\s*`),
	}},
	{npm: &lunrPackage, rules: []queryRule{rule(`^test/.*\.js$`, `\.(search|parse)\(`)}},
	{npm: &elasticlunrPackage, rules: []queryRule{rule(`^test/.*\.js$`, `\.search\(`)}},
	{npm: &liqePackage, rules: []queryRule{
		// ava test titles that testQuery parses (filter, parse, serialize); highlight's
		// testQuery takes the query as its first argument.
		ruleThen(`^dist/test/liqe/(filter|parse|serialize)\.js$`, `\.default\)\(`, `,\s*testQuery\b`),
		rule(`^dist/test/liqe/highlight\.js$`, `\btestQuery,\s*`),
	}},
	{npm: &luceneQPPackage, rules: []queryRule{rule(`^spec/.*\.spec\.js$`, `\.parse\(`)}},
	{npm: &searchQPPackage, rules: []queryRule{rule(`^test/test\.js$`, `\bsearchQuery\s*=\s*`)}},
	{npm: &minisearchPackage, rules: []queryRule{rule(`^src/MiniSearch\.test\.js$`, `\.(search|autoSuggest)\(`)}},
	{npm: &logicQueryPackage, rules: []queryRule{rule(`^config/tests\.js$`, `\bstring:\s*`)}},
}

// queryPayload matches a literal that is an attack payload rather than a search query: a
// parser's or engine's test of malicious input (markup, script URLs, SQL comments and
// statements, shell substitution, template and prototype-pollution keys, path traversal).
// Quotes, apostrophes, colons, dashes, parentheses, wildcards and AND/OR/NOT are search syntax
// and are kept.
var queryPayload = regexp.MustCompile(`(?i)(<\s*/?\s*[a-z][a-z0-9]*(\s[^<>]*)?/?>|<\s*(script|img|svg|iframe|body|object|embed)\b|javascript:|\bon[a-z]+\s*=|--(\s|$)|/\*.*\*/|/\*!|;\s*(select|drop|delete|insert|update|shutdown|exec)\b|\bunion(\s+all)?\s+select\b|\bselect\b.+\bfrom\b|\b(sleep|benchmark|waitfor|pg_sleep)\s*\(|'\s*(or|and)\s+['\d]|\$\(|\$\{|\{\{|__proto__|\bconstructor\b|prototype|\.\./|\\x[0-9a-f]{2}|\\u[0-9a-f]{4})`)

// payloadFile names test files about unsafe input; no query is taken from them.
var payloadFile = regexp.MustCompile(`(?i)(safe|inject|xss|secur|malicious|sanitiz|fuzz)`)

// queryCap caps the set (the lowest salted hash, as kindCap does).
var queryExtraCap = map[string]int{"query": 4000}

// Reasons a query is left out; COUNTS.md counts each.
const (
	queryInOtherSet = "in data/heldout, wide or sqli-extra: calib, test or dropped (normalized; not written here)"
	queryIsPayload  = "an attack payload in its source's tests (queryPayload)"
)

// generateQueryExtra writes out/calib.jsonl and out/COUNTS.md: the search queries of
// querySources, less those in the JSONL files of others (any label; normKey) and attack
// payloads, deduplicated and placed as the SQL injection sets place theirs.
func generateQueryExtra(out, cache string, others []string, stdout io.Writer) error {
	var cands []candidate
	for _, s := range querySources {
		var dir, src string
		var m goModule
		var err error
		if s.mod != nil {
			m = *s.mod
			dir, err = fetchGo(m)
			src = m.Path + "@" + m.Version
		} else {
			m = goModule{Path: s.npm.Name, Version: s.npm.Version, License: s.npm.License, Name: s.npm.Name}
			dir, err = fetchNPM(cache, *s.npm)
			src = s.npm.Name + "@" + s.npm.Version
		}
		if err != nil {
			return err
		}
		cs, err := queryCandidates(m, src, dir, s.rules)
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		cands = append(cands, cs...)
	}
	known, err := filesKeys(others, normTextKey)
	if err != nil {
		return err
	}
	drops := map[string]map[string]bool{queryInOtherSet: {}, queryIsPayload: {}}
	var kept []candidate
	for _, c := range cands {
		switch {
		case queryPayload.MatchString(c.text):
			drops[queryIsPayload][c.text] = true
		case known[normKey(c.text)]:
			drops[queryInOtherSet][c.text] = true
		default:
			kept = append(kept, c)
		}
	}
	recs := placeQueries(sample(kept, queryExtraCap))
	sortRecords(recs)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "calib.jsonl"), recs); err != nil {
		return err
	}
	counts := countsMarkdown("# Extra benign search-query set (calib only): counts\n\nWritten by `make heldout-query-extra`",
		map[string][]Record{"calib": recs}, nil)
	counts += "\n## Per source\n\n| source | queries |\n|---|---:|\n"
	for _, s := range querySources {
		name := ""
		if s.mod != nil {
			name = s.mod.Path + "@" + s.mod.Version
		} else {
			name = s.npm.Name + "@" + s.npm.Version
		}
		n := 0
		for _, r := range recs {
			if strings.HasPrefix(r.Source, name+"/") {
				n++
			}
		}
		counts += fmt.Sprintf("| %s | %d |\n", name, n)
	}
	counts += "\n## Left out\n\n| reason | queries |\n|---|---:|\n"
	counts += fmt.Sprintf("| %s | %d |\n| %s | %d |\n", queryIsPayload, len(drops[queryIsPayload]), queryInOtherSet, len(drops[queryInOtherSet]))
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(counts), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, counts)
	return nil
}

// queryCandidates applies rules to the files under dir (sorted); src is the source's
// name@version for the records' source.
func queryCandidates(m goModule, src, dir string, rules []queryRule) ([]candidate, error) {
	files, err := regularFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if payloadFile.MatchString(rel) {
			continue
		}
		var b []byte
		for _, r := range rules {
			if !r.files.MatchString(rel) {
				continue
			}
			if b == nil {
				if b, err = os.ReadFile(p); err != nil {
					return nil, err
				}
			}
			for _, q := range queryLiterals(string(b), r.prefix) {
				out = append(out, candidate{kind: "query", text: q.text, mod: m, rel: rel,
					source: fmt.Sprintf("%s/%s:%d", src, rel, q.line), group: m.Path + "/" + rel})
			}
		}
	}
	return out, nil
}

type queryLit struct {
	text string
	line int
}

// queryLiterals returns, in order, the literal after each match of re in src (unescaped and
// trimmed) that reads as a search query (isQuery), with its line.
func queryLiterals(src string, re *regexp.Regexp) []queryLit {
	var out []queryLit
	for _, ix := range re.FindAllStringSubmatchIndex(src, -1) {
		n := len(ix)
		var body string
		raw := false
		switch {
		case ix[n-6] >= 0:
			body = src[ix[n-6]:ix[n-5]]
		case ix[n-4] >= 0:
			body = src[ix[n-4]:ix[n-3]]
		case ix[n-2] >= 0:
			body, raw = src[ix[n-2]:ix[n-1]], true
		}
		if !raw {
			body = unescape(body)
		}
		body = strings.TrimSpace(body)
		if isQuery(body) {
			out = append(out, queryLit{body, 1 + strings.Count(src[:ix[0]], "\n")})
		}
	}
	return out
}

// unescape reads the escapes of a Go or JavaScript string literal body: \n, \t, \r as the
// control characters (isQuery then leaves the literal out), any other escaped character as
// itself.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// isQuery: 2 to 200 characters of valid UTF-8 on one line, with a letter or digit, and not a
// JSON body or a placeholder of the docs ("...").
func isQuery(s string) bool {
	if n := utf8.RuneCountInString(s); n < 2 || n > 200 || !utf8.ValidString(s) {
		return false
	}
	alnum := false
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			alnum = true
		}
	}
	return alnum && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[")
}

// placeQueries puts each query in the search box the SQL injection sets attack:
// MCP shop/search_products {query, limit: 20}.
func placeQueries(cs []candidate) []Record {
	var out []Record
	for _, c := range cs {
		r := Record{Label: "benign", Kind: "query", Transport: "mcp", Server: "shop", Tool: "search_products",
			Phase: "request", Text: c.text, Source: c.source, Group: c.group,
			Arguments:    mustJSON(map[string]any{"query": c.text, "limit": 20}),
			HardNegative: attackWords.MatchString(c.text)}
		r.ID = fmt.Sprintf("b-query-%016x", hash64("query\x00"+c.text))
		out = append(out, r)
	}
	return out
}

// queryExtraOthers lists the held-out files under root that the set is deduplicated against:
// every JSONL of the main set (calib, test, dropped), of wide/ and of sqli-extra/, sorted.
func queryExtraOthers(root string) []string {
	var out []string
	for _, d := range []string{"", "wide", "sqli-extra"} {
		fs, _ := filepath.Glob(filepath.Join(root, d, "*.jsonl"))
		out = append(out, fs...)
	}
	sort.Strings(out)
	return out
}
