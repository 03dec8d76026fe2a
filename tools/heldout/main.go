package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("heldout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "data/heldout", "output folder (calib.jsonl, test.jsonl, dropped.jsonl, COUNTS.md)")
	cache := fs.String("cache", "build/_heldout-src", "where npm packages are packed and unpacked (a leading _ keeps go's ./... patterns out of it)")
	wide := fs.Bool("wide", false, "write the wide benign set (wideModules: benign records only) to -out instead")
	fresh := fs.Bool("fresh", false, "write the fresh benign set (freshModules: benign records only, split by module as freshCalib says) to -out instead")
	sqliExtra := fs.Bool("sqli-extra", false, "write the calib-only extra SQL injection set (libinjection-go tests, vendored PayloadsAllTheThings lists) to -out instead")
	sqliSrc := fs.String("sqli-src", "data/heldout/sqli-extra/src", "with -sqli-extra: the folder holding the vendored PayloadsAllTheThings lists")
	revshellExtra := fs.Bool("revshell-extra", false, "write the calib-only reverse and bind shell set (vendored PayloadsAllTheThings cheat sheets, as Bash calls) to -out instead")
	revshellSrc := fs.String("revshell-src", "data/heldout/revshell-extra/src", "with -revshell-extra: the folder holding the vendored cheat sheets")
	pathsExtra := fs.Bool("paths-extra", false, "write the calib-only extra sensitive-path set (npm ban-sensitive-files, cc-safety-net) to -out instead")
	shellExtra := fs.Bool("shell-extra", false, "write the calib-only extra benign shell set (shellExtraModules' docs, Makefiles, workflows and scripts) to -out instead")
	queryExtra := fs.Bool("query-extra", false, "write the calib-only extra benign search-query set (querySources: search clients', query parsers' and search libraries' tests and docs) to -out instead")
	proseExtra := fs.Bool("prose-extra", false, "write the calib-only extra benign prose set (proseExtraModules' prose, documentation pages and links) to -out instead")
	debianExtra := fs.Bool("debian-extra", false, "write the calib-only extra benign Debian set (debianPackages' manual pages and documents: example commands, description paragraphs, pages) to -out instead")
	hardNegExtra := fs.Bool("hardneg-extra", false, "write the calib-only extra hard-negative set (hardNegPackages: Debian security tools' manual pages and documents, every record a hard negative) to -out instead")
	attacksExtra := fs.Bool("attacks-extra", false, "write the calib-only extra attack set (Debian wfuzz's SQL, XSS and traversal payload lists) to -out instead")
	freshAttacks := fs.Bool("fresh-attacks", false, "write the fresh attack set (freshAttackSources: Go modules' test tables, Debian scanners' word lists and probes, an npm prompt corpus, vendored FuzzDB, promptmap and GoTestWAF files; split by source as freshAttackSources says) to -out instead")
	wapitiExtra := fs.Bool("wapiti-extra", false, "write the calib-only wapiti attack set (Debian wapiti's blind SQL, exec, file handling and XSS payloads) to -out instead")
	codeExtra := fs.Bool("code-extra", false, "write the calib-only extra benign code set (codeExtraPackages: Python, JavaScript, PHP, HTML templates, SQL, shell, Perl and Ruby files of Debian packages, as code and code_output) to -out instead")
	npmExtra := fs.Bool("npm-extra", false, "write the calib-only extra benign npm set (npmExtraPackages' READMEs and docs: prose, pages, shell commands) to -out instead")
	jsdevExtra := fs.Bool("jsdev-extra", false, "write the calib-only extra benign JavaScript developer set (jsdevPackages' package.json scripts and URLs, README links) to -out instead")
	pydocExtra := fs.Bool("pydoc-extra", false, "write the calib-only extra benign Python documentation set (pydocPackages: Debian's Python documentation packages' prose, pages and shell commands) to -out instead")
	prompts := fs.Bool("prompts", false, "write the benign prompt set (promptSources: vendored system prompts and a prompting guide's prompts, as chat messages and fetched pages; split by corpus as promptSources says) to -out instead")
	promptsSrc := fs.String("prompts-src", "data/heldout/prompts/src", "with -prompts: the folder holding the vendored corpora")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *prompts {
		if err := generatePrompts(*out, *promptsSrc, stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *codeExtra {
		if err := generateCodeExtra(*out, *cache, codeOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *jsdevExtra {
		if err := generateJsdevExtra(*out, *cache, jsdevExtraOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *pydocExtra {
		if err := generatePydocExtra(*out, *cache, pydocOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *npmExtra {
		if err := generateNpmExtra(*out, *cache, npmExtraOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *freshAttacks {
		if err := generateFreshAttacks(*out, *cache, filepath.Join("data", "heldout", "fresh-attacks", "src"), freshAttackOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *wapitiExtra {
		if err := generateWapitiExtra(*out, *cache, wapitiOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *attacksExtra {
		if err := generateAttacksExtra(*out, *cache, attacksExtraOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *revshellExtra {
		if err := generateRevshellExtra(*out, *revshellSrc, stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *sqliExtra {
		if err := generateSQLiExtra(*out, *sqliSrc, "data/heldout/calib.jsonl", stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *pathsExtra {
		mains := []string{"data/heldout/calib.jsonl", "data/heldout/test.jsonl"}
		if err := generatePathsExtra(*out, *cache, mains, stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *queryExtra {
		if err := generateQueryExtra(*out, *cache, queryExtraOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *hardNegExtra {
		if err := generateHardNegExtra(*out, *cache, hardNegOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *debianExtra {
		if err := generateDebianExtra(*out, *cache, debianOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *proseExtra {
		if err := generateProseExtra(*out, proseExtraOthers("data/heldout"), stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *shellExtra {
		others := []string{"data/heldout/calib.jsonl", "data/heldout/test.jsonl", "data/heldout/wide/calib.jsonl", "data/heldout/wide/test.jsonl"}
		if err := generateShellExtra(*out, others, stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *fresh {
		if err := generateFresh(*out, stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if *wide {
		if err := generateWide(*out, stdout); err != nil {
			fmt.Fprintln(stderr, "heldout:", err)
			return 1
		}
		return 0
	}
	if err := generate(*out, *cache, stdout); err != nil {
		fmt.Fprintln(stderr, "heldout:", err)
		return 1
	}
	return 0
}

func generate(out, cache string, stdout io.Writer) error {
	var cands []candidate
	var attacks []attack
	for _, m := range goModules {
		dir, cs, err := moduleCandidates(m)
		if err != nil {
			return err
		}
		cands = append(cands, cs...)
		if m.Name == "coreruleset" {
			a, err := crsAttacks(m, dir)
			if err != nil {
				return err
			}
			attacks = append(attacks, a...)
			a, err = crsDataFiles(m, dir)
			if err != nil {
				return err
			}
			attacks = append(attacks, a...)
		}
	}
	var templates []string
	var pfSource string
	for _, p := range npmPackages {
		dir, err := fetchNPM(cache, p)
		if err != nil {
			return err
		}
		switch p.Name {
		case "blns":
			a, err := blnsAttacks(p, dir)
			if err != nil {
				return err
			}
			attacks = append(attacks, a...)
		case "promptfoo":
			templates, pfSource, err = promptfooInjections(p, dir)
			if err != nil {
				return err
			}
		}
	}
	for i, t := range templates {
		attacks = append(attacks, attack{label: "prompt_injection", text: t,
			source: fmt.Sprintf("%s[%d]", pfSource, i), group: fmt.Sprintf("promptfoo/%d", i)})
	}

	seen := map[string]bool{}
	placed, dropped := placeAttacks(attacks, func(a attack) string {
		key := a.label + "\x00" + strings.TrimSpace(a.text)
		if seen[key] {
			return "duplicate of an earlier line"
		}
		seen[key] = true
		return ""
	})
	recs := append(placeBenign(sample(cands, kindCap)), placed...)
	if err := writeJSONL(filepath.Join(out, "dropped.jsonl"), dropped); err != nil {
		return err
	}
	return writeSplits(out, recs, byGroup, "# Held-out set: counts\n\nWritten by `make heldout`", dropped, stdout)
}

// placeAttacks places, in order, each attack that skip gives no reason to leave out and keep
// keeps; the rest are dropped with their reason (skip's first).
func placeAttacks(attacks []attack, skip func(attack) string) ([]Record, []Dropped) {
	var recs []Record
	var dropped []Dropped
	for _, a := range attacks {
		why := skip(a)
		if why == "" && !a.listed {
			if ok, w := keep(a); !ok {
				why = w
			}
		}
		if why != "" {
			dropped = append(dropped, Dropped{a.label, why, a.text, a.source})
			continue
		}
		recs = append(recs, placeAttack(a)...)
	}
	return recs, dropped
}

// moduleCandidates fetches m and extracts its benign candidates; it returns the module's folder
// too, for the attack sources some modules also are.
func moduleCandidates(m goModule) (string, []candidate, error) {
	dir, err := fetchGo(m)
	if err != nil {
		return "", nil, err
	}
	cs, err := extractModule(m, dir)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", m.Path, err)
	}
	return dir, cs, nil
}

// byGroup is the split of the main and wide sets: whole groups (files, normalized attack
// lines) by a salted hash.
func byGroup(r Record) string { return splitOf(r.Group) }

// writeSplits splits recs by split into calib and test, writes them sorted under out, and
// writes and prints COUNTS.md, headed by head (a title and what writes it).
func writeSplits(out string, recs []Record, split func(Record) string, head string, dropped []Dropped, stdout io.Writer) error {
	splits := map[string][]Record{}
	for _, r := range recs {
		s := split(r)
		splits[s] = append(splits[s], r)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, s := range []string{"calib", "test"} {
		sortRecords(splits[s])
		if err := writeJSONL(filepath.Join(out, s+".jsonl"), splits[s]); err != nil {
			return err
		}
	}
	counts := countsMarkdown(head, splits, dropped)
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(counts), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, counts)
	return nil
}

// generateWide writes the wide benign set: wideModules' records, sampled, placed and split as
// the main set's benign records are.
func generateWide(out string, stdout io.Writer) error {
	cands, err := benignCandidates(wideModules)
	if err != nil {
		return err
	}
	return writeSplits(out, placeBenign(sample(cands, wideCap)), byGroup, "# Held-out set, wide benign sources: counts\n\nWritten by `make heldout-wide`", nil, stdout)
}

// benignCandidates is every candidate record of mods, in their order (the wide and fresh sets).
func benignCandidates(mods []goModule) ([]candidate, error) {
	var cands []candidate
	for _, m := range mods {
		_, cs, err := moduleCandidates(m)
		if err != nil {
			return nil, err
		}
		cands = append(cands, cs...)
	}
	return cands, nil
}

// sample dedupes candidates per kind (first kept) and caps each kind by the lowest salted hash;
// a kind caps does not name is left out.
func sample(cands []candidate, caps map[string]int) []candidate {
	byKind := map[string][]candidate{}
	seen := map[string]bool{}
	for _, c := range cands {
		k := c.kind + "\x00" + c.text
		if seen[k] {
			continue
		}
		seen[k] = true
		byKind[c.kind] = append(byKind[c.kind], c)
	}
	var out []candidate
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		cs := byKind[k]
		if n := caps[k]; len(cs) > n {
			sort.SliceStable(cs, func(i, j int) bool {
				return hash64("sample/"+cs[i].text) < hash64("sample/"+cs[j].text)
			})
			cs = cs[:n]
			sort.SliceStable(cs, func(i, j int) bool { return cs[i].source < cs[j].source })
		}
		out = append(out, cs...)
	}
	return out
}

const home = "/home/dev"

// placeBenign puts each candidate in the tool call that would carry it.
func placeBenign(cs []candidate) []Record {
	var out []Record
	for _, c := range cs {
		cwd := home + "/src/" + c.mod.Name
		r := Record{Label: "benign", Kind: c.kind, Phase: "request", Text: c.text, Source: c.source, Group: c.group, Cwd: cwd}
		r.HardNegative = securityModules[c.mod.Path] || attackWords.MatchString(c.text)
		switch c.kind {
		case "shell":
			r.Transport, r.Tool = "hook", "Bash"
			r.Arguments = mustJSON(map[string]any{"command": c.text})
		case "path":
			r.Transport, r.Tool = "hook", "Read"
			r.Text = cwd + "/" + c.rel
			r.Arguments = mustJSON(map[string]any{"file_path": r.Text})
		case "code":
			r.Transport, r.Tool = "hook", "Write"
			r.Arguments = mustJSON(map[string]any{"file_path": cwd + "/" + c.rel, "content": c.text})
		case "sql":
			r.Transport, r.Server, r.Tool = "mcp", "postgres", "query"
			r.Arguments = mustJSON(map[string]any{"sql": c.text})
			r.Destructive = destructiveSQL.MatchString(c.text)
		case "url":
			r.Transport, r.Server, r.Tool = "mcp", "fetch", "fetch"
			r.Arguments = mustJSON(map[string]any{"url": c.text})
		case "prose":
			r.Transport, r.Server, r.Tool = "mcp", "slack", "post_message"
			r.Arguments = mustJSON(map[string]any{"channel": "eng", "text": c.text})
		case "doc_output":
			// The page a fetch tool returned: judged in the response phase, as tool output.
			r.Transport, r.Server, r.Tool, r.Phase, r.Result = "mcp", "fetch", "fetch", "response", c.text
			r.Arguments = mustJSON(map[string]any{"url": "https://pkg.go.dev/" + c.mod.Path + "@" + c.mod.Version})
		case "code_output":
			r.Transport, r.Server, r.Tool, r.Phase, r.Result = "mcp", "files", "read_file", "response", c.text
			r.Arguments = mustJSON(map[string]any{"path": c.rel})
		}
		r.ID = fmt.Sprintf("b-%s-%016x", c.kind, hash64(c.kind+"\x00"+c.text))
		out = append(out, r)
	}
	return out
}

// placeAttack puts an attack line in the field where it is an attack. Prompt injections go
// twice: in a fetched page (the tool's output) and in a free-text field.
func placeAttack(a attack) []Record {
	t := strings.TrimSpace(a.text)
	// Attack lines are grouped by a normalized key (case, digits, spaces), so near-copies share
	// a split; benign records are grouped by file.
	r := Record{Label: a.label, Phase: "request", Text: t, Source: a.source, Group: a.label + "/" + normKey(t)}
	id := func(kind string) string {
		return fmt.Sprintf("a-%s-%s-%016x", a.label, kind, hash64(a.label+"\x00"+kind+"\x00"+t))
	}
	switch a.label {
	case "command_injection":
		r.Kind, r.Transport, r.Server, r.Tool = "hostname_field", "mcp", "netops", "ping"
		r.Arguments = mustJSON(map[string]any{"host": t, "count": 3})
		if a.shell {
			// A command the agent runs itself: the Bash call of a Claude Code hook, in a project.
			r.Kind, r.Transport, r.Server, r.Tool, r.Cwd = "bash_command", "hook", "", "Bash", home+"/src/app"
			r.Arguments = mustJSON(map[string]any{"command": t})
		}
	case "sql_injection":
		r.Kind, r.Transport, r.Server, r.Tool = "search_box", "mcp", "shop", "search_products"
		r.Arguments = mustJSON(map[string]any{"query": t, "limit": 20})
	case "xss":
		r.Kind, r.Transport, r.Server, r.Tool = "comment_body", "mcp", "blog", "add_comment"
		r.Arguments = mustJSON(map[string]any{"post_id": "42", "body": t})
	case "ssrf":
		r.Kind, r.Transport, r.Server, r.Tool = "url_field", "mcp", "fetch", "fetch"
		r.Arguments = mustJSON(map[string]any{"url": t})
	case "path_traversal":
		r.Kind, r.Transport, r.Server, r.Tool = "path_field", "mcp", "files", "read_file"
		r.Arguments = mustJSON(map[string]any{"path": t})
	case "sensitive_paths":
		p := t
		if strings.HasPrefix(p, ".") {
			p = home + "/" + p
		} else if !strings.HasPrefix(p, "/") && !strings.Contains(p, ":") {
			p = "/" + p
		}
		r.Kind, r.Transport, r.Tool, r.Text = "read_path", "hook", "Read", p
		r.Arguments = mustJSON(map[string]any{"file_path": p})
	case "prompt_injection":
		i := int(hash64(t) % uint64(len(injectionGoals)))
		text := strings.ReplaceAll(t, "__PROMPT__", injectionGoals[i])
		if !strings.Contains(t, "__PROMPT__") {
			text = t + "\n\n" + injectionGoals[i]
		}
		recs := promptRecords(r, text, "", id)
		if a.bare {
			recs = append(recs, promptRecords(r, t, "_bare", id)...)
		}
		return recs
	}
	r.ID = id(r.Kind)
	return []Record{r}
}

// promptRecords places a prompt injection's text as the main set does: in a fetched page
// (kind tool_output, the response phase) and in a ticket's free text (kind free_text), each
// kind with suffix appended; r gives the label, source and group.
func promptRecords(r Record, text, suffix string, id func(kind string) string) []Record {
	out := Record{Label: r.Label, Kind: "tool_output" + suffix, Phase: "response", Transport: "mcp", Server: "fetch", Tool: "fetch",
		Arguments: mustJSON(map[string]any{"url": "https://docs.example.org/getting-started"}),
		Result:    text, Text: text, Source: r.Source, Group: r.Group, ID: id("tool_output" + suffix)}
	free := Record{Label: r.Label, Kind: "free_text" + suffix, Phase: "request", Transport: "mcp", Server: "tickets", Tool: "create_ticket",
		Arguments: mustJSON(map[string]any{"title": "Customer request", "description": text}),
		Text:      text, Source: r.Source, Group: r.Group, ID: id("free_text" + suffix)}
	return []Record{out, free}
}

func countsMarkdown(head string, splits map[string][]Record, dropped []Dropped) string {
	var b strings.Builder
	b.WriteString(head + " (tools/heldout); do not edit.\n\n")
	b.WriteString("| label | kind | calib | test | hard negatives (test) |\n|---|---|---:|---:|---:|\n")
	type key struct{ label, kind string }
	n := map[key][3]int{}
	var keys []key
	for s, rs := range splits {
		for _, r := range rs {
			k := key{r.Label, r.Kind}
			c, ok := n[k]
			if !ok {
				keys = append(keys, k)
			}
			if s == "calib" {
				c[0]++
			} else {
				c[1]++
				if r.HardNegative {
					c[2]++
				}
			}
			n[k] = c
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].label != keys[j].label {
			return keys[i].label < keys[j].label
		}
		return keys[i].kind < keys[j].kind
	})
	for _, k := range keys {
		c := n[k]
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", k.label, k.kind, c[0], c[1], c[2])
	}
	if dropped == nil {
		return b.String() // the wide set: benign only, nothing dropped
	}
	b.WriteString("\n## Dropped attack lines (dropped.jsonl), per reason\n\n| label | reason | lines |\n|---|---|---:|\n")
	type dk struct{ label, reason string }
	dn := map[dk]int{}
	var dks []dk
	for _, d := range dropped {
		k := dk{d.Label, d.Reason}
		if dn[k] == 0 {
			dks = append(dks, k)
		}
		dn[k]++
	}
	sort.Slice(dks, func(i, j int) bool {
		if dks[i].label != dks[j].label {
			return dks[i].label < dks[j].label
		}
		return dks[i].reason < dks[j].reason
	})
	for _, k := range dks {
		fmt.Fprintf(&b, "| %s | %s | %d |\n", k.label, k.reason, dn[k])
	}
	return b.String()
}

func normKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '0'
		}
		return r
	}, s)
}
