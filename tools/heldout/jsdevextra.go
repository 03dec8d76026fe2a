package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The extra benign JavaScript developer set (issue 26): a calib-only set of the commands and URLs
// of the JavaScript world, written by `-jsdev-extra`. The developer shell of every other set comes
// from Go projects and Debian manual pages and its URLs from Go modules' docs, yet coding agents
// mostly work in JavaScript projects, where `package.json` `scripts` are the developer's own
// commands (`rimraf dist && tsc -p .`, `cross-env NODE_ENV=production webpack`, `node --inspect`,
// `npx …`, `git push --follow-tags`) and READMEs link to URLs of every shape (query strings,
// anchors, badges, localhost examples, raw file links).
//
// Sources are jsdevPackages: 200 pinned npm packages picked by what they are, so that the
// commands and links of every kind of JavaScript project are in: bundlers and build tools
// (webpack, rollup, esbuild, babel, postcss, sass, gulp, …), test runners and testing libraries
// (jest, mocha, vitest, cypress, playwright, puppeteer, …), frameworks (react, vue, angular,
// svelte, nuxt, astro, gatsby, nest, …), React and Vue ecosystems (redux, react-router, zustand,
// pinia, storybook, react-native, …), TypeScript tooling (typescript, ts-node, tsx, typedoc, zod,
// …), linters, formatters and git hooks (eslint, prettier, stylelint, husky, commitlint, biome,
// …), CLIs and their libraries (commander, yargs, concurrently, cross-env, release-it, npm, node-gyp,
// …), database drivers and ORMs (mongodb, redis, sqlite3, typeorm, drizzle, prisma's peers, …),
// monorepo tools (lerna, nx, turbo, changesets, rush, pnpm, yarn), servers and HTTP (koa, hapi,
// socket.io, graphql, apollo, hono, …), utilities (lodash, dayjs, uuid, winston, pino, rxjs, …)
// and deployment and desktop tools (aws-sdk, firebase-tools, vercel, electron, sharp, …). The
// npm-extra set's packages are among them for their package.json only: their README texts are
// npm-extra's already. Each is fetched with `npm pack name@version` (fetchNPM).
//
// Kinds:
//   - shell: every command of package.json `scripts`, whole, as a Claude Code Bash call in
//     /home/dev/src/<package> (placeBenign). A script is one line that `npm run` hands to sh as
//     it is, and an agent that runs a project's script runs that line, `&&`, `;` and pipes
//     included; its steps are not split, since a rule must judge the line an agent runs.
//   - url: package.json `homepage`, `repository`, `bugs` and `funding` and every link of the
//     README (Markdown links, bare URLs, badge images; extractModule's url kind), as a fetch
//     tool's URL (placeBenign, as prose-extra places them). Only http(s) URLs that name a host:
//     a `git+https:`, `git:` or `github:` repository and a link the pattern cut short (`http://[`
//     of an IPv6 example) are left out (dropped.jsonl, with the reason), as is an empty script.
//
// A text any record of another held-out set holds (jsdevExtraOthers; calib, test or dropped;
// same text) is dropped without being written: COUNTS.md gives only the count. The rest is capped
// per kind by the salted hash (sample, jsdevExtraCap).
//
// Hard negatives, by a rule fixed before the set met the chain: a command that deletes, fetches,
// raises privileges, changes modes, evaluates strings, reaches other hosts, runs containers,
// kills processes or publishes (jsdevHardShell); a URL to localhost or an IP address, with an
// explicit port, or whose path or query names a sensitive word (jsdevHardURL); and every record
// whose text holds attack vocabulary (attackWords, as for every benign set).

// jsdevPackage is a pinned npm package with the group it was picked for.
type jsdevPackage struct {
	npmPackage
	Group string
}

var jsdevPackages = []jsdevPackage{
	{npmPackage{"webpack", "5.113.0", "MIT"}, "build"},
	{npmPackage{"webpack-cli", "7.3.1", "MIT"}, "build"},
	{npmPackage{"webpack-dev-server", "6.1.0", "MIT"}, "build"},
	{npmPackage{"rollup", "4.68.8", "MIT"}, "build"},
	{npmPackage{"esbuild", "0.28.2", "MIT"}, "build"},
	{npmPackage{"parcel", "2.16.4", "MIT"}, "build"},
	{npmPackage{"@babel/core", "8.1.3", "MIT"}, "build"},
	{npmPackage{"@babel/cli", "8.1.0", "MIT"}, "build"},
	{npmPackage{"babel-loader", "10.1.1", "MIT"}, "build"},
	{npmPackage{"terser", "5.51.4", "BSD-2-Clause"}, "build"},
	{npmPackage{"postcss", "8.5.33", "MIT"}, "build"},
	{npmPackage{"autoprefixer", "10.7.0", "MIT"}, "build"},
	{npmPackage{"tailwindcss", "4.3.5", "MIT"}, "build"},
	{npmPackage{"sass", "1.108.2", "MIT"}, "build"},
	{npmPackage{"less", "4.9.1", "Apache-2.0"}, "build"},
	{npmPackage{"tsup", "9.0.0", "MIT"}, "build"},
	{npmPackage{"gulp", "5.0.1", "MIT"}, "build"},
	{npmPackage{"grunt", "1.6.3", "MIT"}, "build"},
	{npmPackage{"browserify", "17.0.1", "MIT"}, "build"},
	{npmPackage{"html-webpack-plugin", "5.6.8", "MIT"}, "build"},
	{npmPackage{"css-loader", "7.1.5", "MIT"}, "build"},
	{npmPackage{"mini-css-extract-plugin", "2.10.2", "MIT"}, "build"},
	{npmPackage{"unbuild", "3.6.1", "MIT"}, "build"},
	{npmPackage{"jest", "30.5.2", "MIT"}, "test"},
	{npmPackage{"mocha", "12.0.3", "MIT"}, "test"},
	{npmPackage{"chai", "6.3.0", "MIT"}, "test"},
	{npmPackage{"sinon", "22.1.0", "BSD-3-Clause"}, "test"},
	{npmPackage{"vitest", "5.1.2", "MIT"}, "test"},
	{npmPackage{"ava", "8.1.2", "MIT"}, "test"},
	{npmPackage{"tap", "21.8.0", "BlueOak-1.0.0"}, "test"},
	{npmPackage{"jasmine", "7.0.0", "MIT"}, "test"},
	{npmPackage{"karma", "6.4.4", "MIT"}, "test"},
	{npmPackage{"cypress", "15.3.0", "MIT"}, "test"},
	{npmPackage{"@playwright/test", "1.65.1", "Apache-2.0"}, "test"},
	{npmPackage{"supertest", "7.3.2", "MIT"}, "test"},
	{npmPackage{"nock", "15.0.6", "MIT"}, "test"},
	{npmPackage{"c8", "12.0.0", "ISC"}, "test"},
	{npmPackage{"nyc", "18.0.0", "ISC"}, "test"},
	{npmPackage{"ts-jest", "29.4.15", "MIT"}, "test"},
	{npmPackage{"@testing-library/react", "16.3.3", "MIT"}, "test"},
	{npmPackage{"@testing-library/jest-dom", "8.0.0", "MIT"}, "test"},
	{npmPackage{"puppeteer", "25.16.0", "Apache-2.0"}, "test"},
	{npmPackage{"jsdom", "31.0.1", "MIT"}, "test"},
	{npmPackage{"msw", "3.0.5", "MIT"}, "test"},
	{npmPackage{"react", "19.3.1", "MIT"}, "framework"},
	{npmPackage{"react-dom", "19.3.1", "MIT"}, "framework"},
	{npmPackage{"vue", "3.5.45", "MIT"}, "framework"},
	{npmPackage{"@angular/core", "22.2.6", "MIT"}, "framework"},
	{npmPackage{"@angular/cli", "22.2.7", "MIT"}, "framework"},
	{npmPackage{"svelte", "5.57.3", "MIT"}, "framework"},
	{npmPackage{"preact", "11.2.0", "MIT"}, "framework"},
	{npmPackage{"lit", "3.3.3", "BSD-3-Clause"}, "framework"},
	{npmPackage{"solid-js", "1.9.20", "MIT"}, "framework"},
	{npmPackage{"nuxt", "4.5.2", "MIT"}, "framework"},
	{npmPackage{"astro", "7.3.5", "MIT"}, "framework"},
	{npmPackage{"gatsby", "5.16.1", "MIT"}, "framework"},
	{npmPackage{"@sveltejs/kit", "3.2.0", "MIT"}, "framework"},
	{npmPackage{"@nestjs/core", "12.5.1", "MIT"}, "framework"},
	{npmPackage{"@nestjs/cli", "12.0.8", "MIT"}, "framework"},
	{npmPackage{"redux", "5.0.1", "MIT"}, "reactvue"},
	{npmPackage{"@reduxjs/toolkit", "2.15.0", "MIT"}, "reactvue"},
	{npmPackage{"react-redux", "9.3.1", "MIT"}, "reactvue"},
	{npmPackage{"react-router", "8.5.3", "MIT"}, "reactvue"},
	{npmPackage{"zustand", "5.1.0", "MIT"}, "reactvue"},
	{npmPackage{"mobx", "7.1.3", "MIT"}, "reactvue"},
	{npmPackage{"styled-components", "6.6.0", "MIT"}, "reactvue"},
	{npmPackage{"@emotion/react", "11.14.0", "MIT"}, "reactvue"},
	{npmPackage{"@tanstack/react-query", "5.108.4", "MIT"}, "reactvue"},
	{npmPackage{"swr", "2.5.1", "MIT"}, "reactvue"},
	{npmPackage{"formik", "2.4.9", "Apache-2.0"}, "reactvue"},
	{npmPackage{"react-hook-form", "7.92.0", "MIT"}, "reactvue"},
	{npmPackage{"vuex", "4.1.0", "MIT"}, "reactvue"},
	{npmPackage{"pinia", "4.1.0", "MIT"}, "reactvue"},
	{npmPackage{"vue-router", "5.5.1", "MIT"}, "reactvue"},
	{npmPackage{"@vitejs/plugin-react", "6.3.0", "MIT"}, "reactvue"},
	{npmPackage{"@vitejs/plugin-vue", "6.0.11", "MIT"}, "reactvue"},
	{npmPackage{"storybook", "10.6.7", "MIT"}, "reactvue"},
	{npmPackage{"classnames", "2.5.1", "MIT"}, "reactvue"},
	{npmPackage{"react-native", "0.88.1", "MIT"}, "reactvue"},
	{npmPackage{"typescript", "7.0.2", "Apache-2.0"}, "typescript"},
	{npmPackage{"ts-node", "10.9.2", "MIT"}, "typescript"},
	{npmPackage{"tsx", "4.23.15", "MIT"}, "typescript"},
	{npmPackage{"@typescript-eslint/parser", "8.74.0", "MIT"}, "typescript"},
	{npmPackage{"typedoc", "0.28.20", "Apache-2.0"}, "typescript"},
	{npmPackage{"ts-morph", "28.0.0", "MIT"}, "typescript"},
	{npmPackage{"tslib", "2.9.1", "0BSD"}, "typescript"},
	{npmPackage{"@microsoft/api-extractor", "7.60.1", "MIT"}, "typescript"},
	{npmPackage{"type-fest", "6.0.3", "(MIT OR CC0-1.0)"}, "typescript"},
	{npmPackage{"zod", "4.6.7", "MIT"}, "typescript"},
	{npmPackage{"ajv", "8.20.0", "MIT"}, "typescript"},
	{npmPackage{"stylelint", "18.1.0", "MIT"}, "lint"},
	{npmPackage{"jshint", "2.13.6", "MIT"}, "lint"},
	{npmPackage{"standard", "17.1.2", "MIT"}, "lint"},
	{npmPackage{"eslint-plugin-react", "7.37.5", "MIT"}, "lint"},
	{npmPackage{"eslint-plugin-import", "2.32.0", "MIT"}, "lint"},
	{npmPackage{"husky", "9.1.7", "MIT"}, "lint"},
	{npmPackage{"lint-staged", "17.6.1", "MIT"}, "lint"},
	{npmPackage{"@commitlint/cli", "21.2.4", "MIT"}, "lint"},
	{npmPackage{"markdownlint-cli", "0.50.0", "MIT"}, "lint"},
	{npmPackage{"@biomejs/biome", "2.6.8", "MIT OR Apache-2.0"}, "lint"},
	{npmPackage{"eslint-config-prettier", "10.1.8", "MIT"}, "lint"},
	{npmPackage{"eslint", "10.15.0", "MIT"}, "lint"},
	{npmPackage{"prettier", "3.10.1", "MIT"}, "lint"},
	{npmPackage{"commander", "15.1.0", "MIT"}, "cli"},
	{npmPackage{"yargs", "18.2.0", "MIT"}, "cli"},
	{npmPackage{"chalk", "6.0.1", "MIT"}, "cli"},
	{npmPackage{"inquirer", "14.2.5", "MIT"}, "cli"},
	{npmPackage{"ora", "9.4.1", "MIT"}, "cli"},
	{npmPackage{"meow", "14.1.0", "MIT"}, "cli"},
	{npmPackage{"minimist", "1.2.8", "MIT"}, "cli"},
	{npmPackage{"listr2", "11.4.0", "MIT"}, "cli"},
	{npmPackage{"npm-run-all", "4.1.5", "MIT"}, "cli"},
	{npmPackage{"concurrently", "10.0.7", "MIT"}, "cli"},
	{npmPackage{"cross-env", "10.1.0", "MIT"}, "cli"},
	{npmPackage{"dotenv-cli", "11.0.0", "MIT"}, "cli"},
	{npmPackage{"http-server", "14.1.1", "MIT"}, "cli"},
	{npmPackage{"serve", "14.2.7", "MIT"}, "cli"},
	{npmPackage{"np", "12.1.1", "MIT"}, "cli"},
	{npmPackage{"release-it", "21.1.2", "MIT"}, "cli"},
	{npmPackage{"semantic-release", "25.0.9", "MIT"}, "cli"},
	{npmPackage{"standard-version", "9.5.0", "ISC"}, "cli"},
	{npmPackage{"node-gyp", "13.1.0", "MIT"}, "cli"},
	{npmPackage{"create-react-app", "5.1.0", "MIT"}, "cli"},
	{npmPackage{"npm", "12.2.2", "Artistic-2.0"}, "cli"},
	{npmPackage{"nodemon", "3.1.14", "MIT"}, "cli"},
	{npmPackage{"pm2", "7.0.4", "AGPL-3.0"}, "cli"},
	{npmPackage{"mongodb", "7.9.0", "Apache-2.0"}, "db"},
	{npmPackage{"redis", "6.3.1", "MIT"}, "db"},
	{npmPackage{"ioredis", "6.0.0", "MIT"}, "db"},
	{npmPackage{"sqlite3", "6.0.1", "BSD-3-Clause"}, "db"},
	{npmPackage{"better-sqlite3", "13.2.0", "MIT"}, "db"},
	{npmPackage{"typeorm", "1.1.1", "MIT"}, "db"},
	{npmPackage{"drizzle-orm", "0.45.4", "Apache-2.0"}, "db"},
	{npmPackage{"@mikro-orm/core", "7.2.5", "MIT"}, "db"},
	{npmPackage{"objection", "3.1.5", "MIT"}, "db"},
	{npmPackage{"cassandra-driver", "4.10.0", "Apache-2.0"}, "db"},
	{npmPackage{"neo4j-driver", "6.3.0", "Apache-2.0"}, "db"},
	{npmPackage{"@elastic/elasticsearch", "9.5.1", "Apache-2.0"}, "db"},
	{npmPackage{"pg", "8.23.1", "MIT"}, "db"},
	{npmPackage{"mysql2", "3.24.6", "MIT"}, "db"},
	{npmPackage{"knex", "3.3.0", "MIT"}, "db"},
	{npmPackage{"sequelize", "6.37.8", "MIT"}, "db"},
	{npmPackage{"mongoose", "9.12.1", "MIT"}, "db"},
	{npmPackage{"lerna", "10.1.1", "MIT"}, "monorepo"},
	{npmPackage{"nx", "24.0.6", "MIT"}, "monorepo"},
	{npmPackage{"turbo", "2.11.11", "MIT"}, "monorepo"},
	{npmPackage{"@changesets/cli", "3.0.3", "MIT"}, "monorepo"},
	{npmPackage{"@microsoft/rush", "5.179.0", "MIT"}, "monorepo"},
	{npmPackage{"pnpm", "12.21.0", "MIT"}, "monorepo"},
	{npmPackage{"yarn", "1.22.22", "BSD-2-Clause"}, "monorepo"},
	{npmPackage{"koa", "3.3.0", "MIT"}, "server"},
	{npmPackage{"@hapi/hapi", "21.4.10", "BSD-3-Clause"}, "server"},
	{npmPackage{"http-proxy", "1.18.1", "MIT"}, "server"},
	{npmPackage{"http-proxy-middleware", "4.2.2", "MIT"}, "server"},
	{npmPackage{"body-parser", "2.4.0", "MIT"}, "server"},
	{npmPackage{"morgan", "1.12.1", "MIT"}, "server"},
	{npmPackage{"compression", "1.8.2", "MIT"}, "server"},
	{npmPackage{"cookie-parser", "1.4.7", "MIT"}, "server"},
	{npmPackage{"express-session", "1.19.0", "MIT"}, "server"},
	{npmPackage{"multer", "2.5.0", "MIT"}, "server"},
	{npmPackage{"socket.io", "4.8.4", "MIT"}, "server"},
	{npmPackage{"ws", "8.23.0", "MIT"}, "server"},
	{npmPackage{"graphql", "17.1.0", "MIT"}, "server"},
	{npmPackage{"@apollo/server", "5.5.1", "MIT"}, "server"},
	{npmPackage{"graphql-yoga", "5.24.1", "MIT"}, "server"},
	{npmPackage{"json-server", "0.17.4", "MIT"}, "server"},
	{npmPackage{"hono", "4.13.19", "MIT"}, "server"},
	{npmPackage{"superagent", "10.4.2", "MIT"}, "server"},
	{npmPackage{"ky", "2.1.0", "MIT"}, "server"},
	{npmPackage{"express", "5.3.0", "MIT"}, "server"},
	{npmPackage{"fastify", "5.12.8", "MIT"}, "server"},
	{npmPackage{"axios", "1.21.1", "MIT"}, "server"},
	{npmPackage{"undici", "8.13.1", "MIT"}, "server"},
	{npmPackage{"lodash", "4.18.1", "MIT"}, "util"},
	{npmPackage{"moment", "2.31.0", "MIT"}, "util"},
	{npmPackage{"dayjs", "1.11.23", "MIT"}, "util"},
	{npmPackage{"date-fns", "4.4.0", "MIT"}, "util"},
	{npmPackage{"uuid", "14.0.3", "MIT"}, "util"},
	{npmPackage{"nanoid", "6.0.2", "MIT"}, "util"},
	{npmPackage{"debug", "4.4.3", "MIT"}, "util"},
	{npmPackage{"winston", "3.19.0", "MIT"}, "util"},
	{npmPackage{"pino", "10.4.0", "MIT"}, "util"},
	{npmPackage{"async", "3.2.6", "MIT"}, "util"},
	{npmPackage{"rxjs", "7.8.2", "Apache-2.0"}, "util"},
	{npmPackage{"immer", "11.2.13", "MIT"}, "util"},
	{npmPackage{"glob", "14.0.6", "BlueOak-1.0.0"}, "util"},
	{npmPackage{"fs-extra", "11.4.1", "MIT"}, "util"},
	{npmPackage{"semver", "7.8.6", "ISC"}, "util"},
	{npmPackage{"js-yaml", "5.5.0", "MIT"}, "util"},
	{npmPackage{"rimraf", "6.1.4", "BlueOak-1.0.0"}, "util"},
	{npmPackage{"execa", "10.2.1", "MIT"}, "util"},
	{npmPackage{"chokidar", "6.0.0", "MIT"}, "util"},
	{npmPackage{"aws-sdk", "2.1693.0", "Apache-2.0"}, "deploy"},
	{npmPackage{"firebase-tools", "15.34.2", "MIT"}, "deploy"},
	{npmPackage{"vercel", "64.0.2", "Apache-2.0"}, "deploy"},
	{npmPackage{"electron", "45.5.0", "MIT"}, "deploy"},
	{npmPackage{"electron-builder", "26.17.0", "MIT"}, "deploy"},
	{npmPackage{"sharp", "0.35.5", "Apache-2.0"}, "deploy"},
	{npmPackage{"@vercel/ncc", "0.45.0", "MIT"}, "deploy"},
	{npmPackage{"dotenv", "18.0.10", "BSD-2-Clause"}, "deploy"},
}

// jsdevExtraCap caps each kind by the lowest salted hash.
var jsdevExtraCap = map[string]int{"shell": 1500, "url": 1200}

// jsdevHardShell marks a command that deletes, downloads, raises privileges, changes modes,
// evaluates a string, reaches another host, runs a container, kills processes, rewrites or
// pushes git history, or publishes a package.
var jsdevHardShell = regexp.MustCompile(`(^|[\s;&|(` + "`" + `])(rm|rimraf|del|del-cli|trash|shx rm|curl|wget|sudo|su|chmod|chown|eval|ssh|scp|rsync|docker|docker-compose|podman|kubectl|kill|pkill|killall|node -e|node --eval|sh -c|bash -c)(\s|$)|\bgit (push|reset|clean|filter-branch)\b|\b(npm|yarn|pnpm) publish\b|\bnpx? (np|release-it|semantic-release|lerna publish|changeset publish)\b`)

// jsdevHardURLWord is a sensitive word in a URL's path or query.
var jsdevHardURLWord = regexp.MustCompile(`(?i)(admin|token|secret|passw|apikey|api_key|api-key|auth|login|credential|private|internal|\.env|\.git/|config|metadata|debug|\.ssh|\.aws)`)

// jsdevHardURL: a URL to localhost or an IP address, with an explicit port, or whose path or
// query names a sensitive word.
func jsdevHardURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return true
	}
	h := strings.ToLower(u.Hostname())
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || net.ParseIP(h) != nil || u.Port() != "" ||
		jsdevHardURLWord.MatchString(u.EscapedPath()+"?"+u.RawQuery)
}

// jsdevExtraOthers lists the JSONL files of every other held-out set under root.
func jsdevExtraOthers(root string) []string {
	out := npmExtraOthers(root)
	for _, d := range []string{"code-extra", "npm-extra"} {
		out = append(out, must(filepath.Glob(filepath.Join(root, d, "*.jsonl")))...)
	}
	return out
}

// packageJSON is what the set reads of a package.json.
type packageJSON struct {
	Scripts    map[string]string `json:"scripts"`
	Homepage   json.RawMessage   `json:"homepage"`
	Repository json.RawMessage   `json:"repository"`
	Bugs       json.RawMessage   `json:"bugs"`
	Funding    json.RawMessage   `json:"funding"`
}

// manifestURLs are the URLs of a homepage, repository, bugs or funding field: a string, an
// object with a url, or (funding) a list of either.
func manifestURLs(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var o struct{ URL string }
	if json.Unmarshal(raw, &o) == nil && o.URL != "" {
		return []string{o.URL}
	}
	var list []json.RawMessage
	var out []string
	if json.Unmarshal(raw, &list) == nil {
		for _, x := range list {
			out = append(out, manifestURLs(x)...)
		}
	}
	return out
}

// jsdevMod is the module a package's candidates carry: Path is the package's name (its records'
// group starts with it), Name its folder under /home/dev/src (the scope joined: babel-core).
func jsdevMod(p jsdevPackage) goModule {
	return goModule{Path: p.Name, Version: p.Version, License: p.License,
		Name: strings.ReplaceAll(strings.TrimPrefix(p.Name, "@"), "/", "-")}
}

// jsdevCandidates reads the package.json of the package unpacked at dir (scripts as shell, the
// http(s) URLs of its fields as url) and, when readme, its README's links; it returns the
// candidates and what it leaves out.
func jsdevCandidates(p jsdevPackage, dir string, readme bool) ([]candidate, []Dropped, error) {
	m := jsdevMod(p)
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, nil, err
	}
	var pj packageJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return nil, nil, fmt.Errorf("%s@%s/package.json: %w", p.Name, p.Version, err)
	}
	var out []candidate
	var left []Dropped
	at := func(field string) string { return fmt.Sprintf("%s@%s/package.json:%s", p.Name, p.Version, field) }
	names := make([]string, 0, len(pj.Scripts))
	for k := range pj.Scripts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		text := strings.TrimSpace(pj.Scripts[k])
		if text == "" {
			left = append(left, Dropped{Label: "benign", Reason: "empty script", Source: at("scripts." + k)})
			continue
		}
		out = append(out, candidate{kind: "shell", text: text, mod: m, rel: "package.json", source: at("scripts." + k), group: p.Name + "/package.json"})
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"homepage", pj.Homepage}, {"repository", pj.Repository}, {"bugs", pj.Bugs}, {"funding", pj.Funding}} {
		for _, u := range manifestURLs(f.raw) {
			u = strings.TrimSpace(u)
			if why := urlLeftOut(u); why != "" {
				left = append(left, Dropped{Label: "benign", Reason: why, Text: u, Source: at(f.name)})
				continue
			}
			out = append(out, candidate{kind: "url", text: u, mod: m, rel: "package.json", source: at(f.name), group: p.Name + "/package.json"})
		}
	}
	if !readme {
		return out, left, nil
	}
	cs, err := extractModule(m, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s@%s: %w", p.Name, p.Version, err)
	}
	for _, c := range cs {
		if c.kind != "url" || !strings.EqualFold(c.rel, "README.md") {
			continue
		}
		if why := urlLeftOut(c.text); why != "" {
			left = append(left, Dropped{Label: "benign", Reason: why, Text: c.text, Source: c.source})
			continue
		}
		out = append(out, c)
	}
	return out, left, nil
}

// urlLeftOut says why a link is not a URL a fetch tool would be given: not http(s), or cut
// short by the link pattern so that it names no host (`http://[` of an IPv6 example); "" keeps it.
func urlLeftOut(s string) string {
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		return "not an http(s) URL"
	}
	if u, err := url.Parse(s); err != nil || u.Hostname() == "" {
		return "no host (a link cut short)"
	}
	return ""
}

// generateJsdevExtra writes out/calib.jsonl, out/dropped.jsonl and out/COUNTS.md: the scripts
// and URLs of jsdevPackages, less the texts of the JSONL files in others (a missing one is an
// error), sampled and placed.
func generateJsdevExtra(out, cache string, others []string, stdout io.Writer) error {
	npmExtra := map[string]bool{}
	for _, p := range npmExtraPackages {
		npmExtra[p.Name] = true
	}
	var cands []candidate
	var left []Dropped
	for _, p := range jsdevPackages {
		dir, err := fetchNPM(cache, p.npmPackage)
		if err != nil {
			return err
		}
		cs, l, err := jsdevCandidates(p, dir, !npmExtra[p.Name])
		if err != nil {
			return err
		}
		cands, left = append(cands, cs...), append(left, l...)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "dropped.jsonl"), left); err != nil {
		return err
	}
	more := func(recs []Record) string { return jsdevLeftOut(left) + jsdevPerPackage(recs) }
	return writeTextSet(out, "# Extra benign JavaScript developer set (calib only): counts\n\nWritten by `make heldout-jsdev-extra`", cands, others, jsdevExtraRecords, more, stdout)
}

// jsdevExtraRecords drops the known texts, samples and places the rest as placeUnknown does and
// marks hard negatives (jsdevHardShell, jsdevHardURL); it returns the records, sorted, and how
// many distinct texts it dropped.
func jsdevExtraRecords(cands []candidate, known map[string]bool) ([]Record, int) {
	recs, dropped := placeUnknown(cands, known, jsdevExtraCap)
	for i := range recs {
		switch recs[i].Kind {
		case "shell":
			recs[i].HardNegative = recs[i].HardNegative || jsdevHardShell.MatchString(recs[i].Text)
		case "url":
			recs[i].HardNegative = recs[i].HardNegative || jsdevHardURL(recs[i].Text)
		}
	}
	sortRecords(recs)
	return recs, dropped
}

// jsdevPackageOf finds the package a record came from by its group (name/file).
func jsdevPackageOf(r Record) (jsdevPackage, bool) {
	for _, p := range jsdevPackages {
		if strings.HasPrefix(r.Group, p.Name+"/") && !strings.Contains(strings.TrimPrefix(r.Group, p.Name+"/"), "/") {
			return p, true
		}
	}
	return jsdevPackage{}, false
}

// jsdevLeftOut is COUNTS.md's table of dropped.jsonl's reasons.
func jsdevLeftOut(left []Dropped) string {
	n := map[string]int{}
	for _, d := range left {
		n[d.Reason]++
	}
	reasons := make([]string, 0, len(n))
	for r := range n {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var b strings.Builder
	b.WriteString("\n## Left out (dropped.jsonl)\n\n| reason | fields |\n|---|---:|\n")
	for _, r := range reasons {
		fmt.Fprintf(&b, "| %s | %d |\n", r, n[r])
	}
	return b.String()
}

// jsdevPerPackage is COUNTS.md's tables of records per group and per package, hard negatives
// apart.
func jsdevPerPackage(recs []Record) string {
	type count struct{ shell, shellHN, url, urlHN int }
	perPkg, perGroup := map[string]*count{}, map[string]*count{}
	var groups []string
	for _, p := range jsdevPackages {
		perPkg[p.Name] = &count{}
		if perGroup[p.Group] == nil {
			perGroup[p.Group] = &count{}
			groups = append(groups, p.Group)
		}
	}
	for _, r := range recs {
		p, ok := jsdevPackageOf(r)
		if !ok {
			continue
		}
		for _, c := range []*count{perPkg[p.Name], perGroup[p.Group]} {
			switch {
			case r.Kind == "shell" && r.HardNegative:
				c.shellHN++
			case r.Kind == "shell":
				c.shell++
			case r.HardNegative:
				c.urlHN++
			default:
				c.url++
			}
		}
	}
	var b strings.Builder
	b.WriteString("\n## Records per group (hard negatives apart)\n\n| group | shell | shell, hard | url | url, hard |\n|---|---:|---:|---:|---:|\n")
	for _, g := range groups {
		c := perGroup[g]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", g, c.shell, c.shellHN, c.url, c.urlHN)
	}
	b.WriteString("\n## Records per package\n\n| package | version | licence | group | shell | shell, hard | url | url, hard |\n|---|---|---|---|---:|---:|---:|---:|\n")
	for _, p := range jsdevPackages {
		c := perPkg[p.Name]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d |\n", p.Name, p.Version, p.License, p.Group, c.shell, c.shellHN, c.url, c.urlHN)
	}
	return b.String()
}
