package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// The extra benign npm set (issue 26): a calib-only set from the JavaScript world, written by
// `-npm-extra`. Every benign source of the other sets is a Go module or a Debian package, yet
// most coding agents work in JavaScript projects, whose packages' READMEs and docs are full of
// the shapes the rules look for: `curl … | sh` installers, `rm -rf node_modules`, `.env` files,
// SQL in ORM docs, `<script>` tags and `onclick` in HTML libraries' docs, `exec`/`spawn` in
// process libraries, JWT secrets and passwords in auth libraries' examples.
//
// Sources are npmExtraPackages, pinned npm packages picked by what they are (one group each):
// web frameworks (express, fastify), security middleware (helmet, cors, express-rate-limit),
// auth and crypto (passport, jsonwebtoken, bcrypt, node-forge), config (dotenv), databases and
// ORMs (pg, mysql2, knex, sequelize, prisma, mongoose), process and files (execa, shelljs,
// rimraf, cross-spawn, chokidar), HTML and sanitizing (dompurify, sanitize-html, cheerio,
// marked), HTTP clients (axios, got, node-fetch, undici), CLIs and tooling (eslint, prettier,
// vite, pm2, nodemon). Each is fetched with `npm pack name@version` (fetchNPM) and its
// README.md and the Markdown files under docs/ are read as the wide and prose-extra sets read a
// module's Markdown (extractModule): a paragraph of 12 words or more is a Slack message
// (prose), a page (up to 6 KB, cut at a line end) is a fetch tool's answer in the response
// phase (doc_output, its URL the package's npmjs.com page), and each command of a fenced
// sh/bash/shell/console block (console: the `$ ` lines) is a Claude Code Bash call (shell), as
// shell-extra places them (placeBenign). A text any record of another held-out set holds
// (npmExtraOthers; calib, test or dropped; same text) is dropped without being written:
// COUNTS.md gives only the count. The rest is capped per kind by the salted hash (sample).
//
// Hard negatives, by a rule fixed before the set met the chain: every record of a package in
// a security, auth, HTML-sanitizing or process group (npmHardGroups), and every record whose
// text holds attack vocabulary (attackWords, as for every benign set).

// npmExtraPackage is a pinned npm package with the group it was picked for.
type npmExtraPackage struct {
	npmPackage
	Group string
}

var npmExtraPackages = []npmExtraPackage{
	{npmPackage{"express", "5.3.0", "MIT"}, "web"},
	{npmPackage{"fastify", "5.12.8", "MIT"}, "web"},
	{npmPackage{"helmet", "8.3.0", "MIT"}, "security"},
	{npmPackage{"cors", "2.8.6", "MIT"}, "security"},
	{npmPackage{"express-rate-limit", "8.7.5", "MIT"}, "security"},
	{npmPackage{"passport", "0.7.0", "MIT"}, "auth"},
	{npmPackage{"jsonwebtoken", "9.0.3", "MIT"}, "auth"},
	{npmPackage{"bcrypt", "6.0.0", "MIT"}, "auth"},
	{npmPackage{"node-forge", "1.4.3", "(BSD-3-Clause OR GPL-2.0)"}, "auth"},
	{npmPackage{"dotenv", "18.0.10", "BSD-2-Clause"}, "config"},
	{npmPackage{"pg", "8.23.1", "MIT"}, "db"},
	{npmPackage{"mysql2", "3.24.6", "MIT"}, "db"},
	{npmPackage{"knex", "3.3.0", "MIT"}, "db"},
	{npmPackage{"sequelize", "6.37.8", "MIT"}, "db"},
	{npmPackage{"prisma", "7.10.1", "Apache-2.0"}, "db"},
	{npmPackage{"mongoose", "9.12.1", "MIT"}, "db"},
	{npmPackage{"execa", "10.2.1", "MIT"}, "process"},
	{npmPackage{"shelljs", "0.10.0", "BSD-3-Clause"}, "process"},
	{npmPackage{"rimraf", "6.1.4", "BlueOak-1.0.0"}, "process"},
	{npmPackage{"cross-spawn", "7.0.6", "MIT"}, "process"},
	{npmPackage{"chokidar", "6.0.0", "MIT"}, "process"},
	{npmPackage{"dompurify", "3.5.0", "(MPL-2.0 OR Apache-2.0)"}, "html"},
	{npmPackage{"sanitize-html", "2.18.1", "MIT"}, "html"},
	{npmPackage{"cheerio", "1.2.0", "MIT"}, "html"},
	{npmPackage{"marked", "18.2.1", "MIT"}, "html"},
	{npmPackage{"axios", "1.21.1", "MIT"}, "http"},
	{npmPackage{"got", "16.1.0", "MIT"}, "http"},
	{npmPackage{"node-fetch", "3.3.2", "MIT"}, "http"},
	{npmPackage{"undici", "8.13.1", "MIT"}, "http"},
	{npmPackage{"eslint", "10.15.0", "MIT"}, "tooling"},
	{npmPackage{"prettier", "3.10.1", "MIT"}, "tooling"},
	{npmPackage{"vite", "8.4.0", "MIT"}, "tooling"},
	{npmPackage{"pm2", "7.0.4", "AGPL-3.0"}, "tooling"},
	{npmPackage{"nodemon", "3.1.14", "MIT"}, "tooling"},
}

// npmHardGroups are the groups whose every record is a hard negative: their docs are about
// attacks, secrets and running programs.
var npmHardGroups = map[string]bool{"security": true, "auth": true, "html": true, "process": true}

// npmExtraCap caps each kind by the lowest salted hash; extractModule's other kinds (path, url,
// sql, code) are left out.
var npmExtraCap = map[string]int{"prose": 1200, "doc_output": 400, "shell": 800}

// npmExtraOthers lists the JSONL files of every other held-out set under root.
func npmExtraOthers(root string) []string {
	out := debianOthers(root)
	for _, d := range []string{"debian-extra", "hardneg-extra", "attacks-extra", "wapiti-extra"} {
		out = append(out, must(filepath.Glob(filepath.Join(root, d, "*.jsonl")))...)
	}
	return out
}

// isNpmDoc is a package's README or a Markdown file under its docs/ folder.
func isNpmDoc(rel string) bool {
	return strings.EqualFold(rel, "README.md") || strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md")
}

// npmDocCandidates fetches p and returns extractModule's candidates of its docs (isNpmDoc).
func npmDocCandidates(cache string, p npmExtraPackage) ([]candidate, error) {
	dir, err := fetchNPM(cache, p.npmPackage)
	if err != nil {
		return nil, err
	}
	cs, err := extractModule(goModule{Path: p.Name, Version: p.Version, License: p.License, Name: p.Name}, dir)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", p.Name, p.Version, err)
	}
	var out []candidate
	for _, c := range cs {
		if isNpmDoc(c.rel) {
			out = append(out, c)
		}
	}
	return out, nil
}

// generateNpmExtra writes out/calib.jsonl and out/COUNTS.md: the prose, pages and shell commands
// of npmExtraPackages' docs, less the texts of the JSONL files in others (a missing one is an
// error), sampled and placed.
func generateNpmExtra(out, cache string, others []string, stdout io.Writer) error {
	var cands []candidate
	for _, p := range npmExtraPackages {
		cs, err := npmDocCandidates(cache, p)
		if err != nil {
			return err
		}
		cands = append(cands, cs...)
	}
	return writeTextSet(out, "# Extra benign npm set (calib only): counts\n\nWritten by `make heldout-npm-extra`", cands, others, npmExtraRecords, npmExtraPerPackage, stdout)
}

// npmExtraRecords drops the known texts, samples and places the rest as placeUnknown does, then
// points each page at its package's npmjs.com page and marks the hard groups' records; it
// returns the records, sorted, and how many distinct texts it dropped.
func npmExtraRecords(cands []candidate, known map[string]bool) ([]Record, int) {
	recs, dropped := placeUnknown(cands, known, npmExtraCap)
	for i := range recs {
		p, ok := npmExtraPackageOf(recs[i])
		if !ok {
			continue
		}
		recs[i].HardNegative = recs[i].HardNegative || npmHardGroups[p.Group]
		if recs[i].Kind == "doc_output" {
			recs[i].Arguments = mustJSON(map[string]any{"url": "https://www.npmjs.com/package/" + p.Name + "/v/" + p.Version})
		}
	}
	sortRecords(recs)
	return recs, dropped
}

// npmExtraPackageOf finds the package a record came from by its group (name/file).
func npmExtraPackageOf(r Record) (npmExtraPackage, bool) {
	for _, p := range npmExtraPackages {
		if strings.HasPrefix(r.Group, p.Name+"/") {
			return p, true
		}
	}
	return npmExtraPackage{}, false
}

// npmExtraPerPackage is COUNTS.md's table of records per package and kind.
func npmExtraPerPackage(recs []Record) string {
	var b strings.Builder
	b.WriteString("\n## Records per package\n\n| package | version | licence | group | prose | doc_output | shell | hard negatives |\n|---|---|---|---|---:|---:|---:|---:|\n")
	for _, p := range npmExtraPackages {
		n := map[string]int{}
		for _, r := range recs {
			if q, ok := npmExtraPackageOf(r); ok && q.Name == p.Name {
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
