package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// candidate is one piece of benign text before it is placed in a tool call.
type candidate struct {
	kind, text, source, group string
	mod                       goModule
	rel                       string // file path inside the module (path and code kinds)
}

// Caps per kind: a deterministic sample (lowest salted hash of the text) when a kind has more.
var kindCap = map[string]int{"shell": 4000, "path": 3000, "sql": 3000, "url": 2000, "prose": 2500, "code": 800}

// wideCap is kindCap for the wide set, which also carries tool output (response phase): a
// documentation page a fetch tool returned (doc_output) and a source file a read tool returned
// (code_output). The main set has none (kindCap has no such kind: sample drops it), so its
// records and baseline stay as they were.
var wideCap = func() map[string]int {
	m := map[string]int{"doc_output": 500, "code_output": 300}
	for k, n := range kindCap {
		m[k] = n
	}
	return m
}()

// maxOutputBytes cuts a tool output (a whole documentation page) at a line end.
const maxOutputBytes = 6000

const maxCodeBytes = 6000

var (
	urlRe     = regexp.MustCompile(`https?://[^\s)>\]"'\x60<|{}\\]+`)
	codeNames = regexp.MustCompile(`(?i)(auth|jwt|csrf|login|session|token|password|secur|sanitiz|policy|sql|query|builder|select|insert|where|migrat|template|escape|middleware/)`)
	// attackWords marks benign text that looks like an attack: hard negatives.
	attackWords = regexp.MustCompile(`(?i)(xss|inject|<script|javascript:|onerror|sanitiz|escap|exploit|attack|malicious|traversal|\.\./|/etc/(passwd|shadow|hosts)|password|secret|token|credential|private key|sudo |rm -rf|curl [^|]*\|\s*(ba)?sh|wget |chmod |base64|eval|exec\(|drop (table|database)|delete from|truncate|union select|or 1=1|--\s|169\.254\.169\.254|localhost|127\.0\.0\.1|ignore (all|previous)|system prompt)`)
)

// extractModule walks one module and returns its benign candidates.
func extractModule(m goModule, dir string) ([]candidate, error) {
	files, err := regularFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []candidate
	add := func(kind, text, rel string, line int) {
		text = strings.TrimSpace(text)
		if text == "" || len(text) > 64<<10 {
			return
		}
		if kind == "shell" && !commandStart.MatchString(strings.Fields(text)[0]) {
			return // command output or a heading inside a shell block, not a command
		}
		out = append(out, candidate{kind: kind, text: text, mod: m, rel: rel,
			source: fmt.Sprintf("%s@%s/%s:%d", m.Path, m.Version, rel, line),
			group:  m.Path + "/" + rel})
	}
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if m.Name == "coreruleset" && !strings.HasSuffix(rel, ".md") {
			continue // its tests and data are attacks (attack.go); only its docs are benign
		}
		add("path", rel, rel, 0)
		base := filepath.Base(rel)
		ext := filepath.Ext(rel)
		switch {
		case ext == ".md":
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			markdown(string(b), rel, add)
			add("doc_output", truncateLines(string(b), maxOutputBytes), rel, 1)
		case base == "Makefile" || ext == ".mk":
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			makefile(string(b), rel, add)
		case strings.HasPrefix(rel, ".github/workflows/") && (ext == ".yml" || ext == ".yaml"):
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			workflow(string(b), rel, add)
		case ext == ".sql":
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			sqlStatements(string(b), rel, add)
		}
		if isCode(rel) {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			add("code", truncateLines(string(b), maxCodeBytes), rel, 1)
			add("code_output", truncateLines(string(b), maxOutputBytes), rel, 1)
		}
	}
	return out, nil
}

// isCode picks source files that matter for the issue: auth handlers, SQL builders, HTML
// templates, shell scripts.
func isCode(rel string) bool {
	ext := filepath.Ext(rel)
	switch ext {
	case ".sh", ".bash", ".tmpl", ".gohtml", ".html":
		return true
	case ".go":
		return codeNames.MatchString(rel)
	}
	return false
}

func truncateLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		s = s[:i+1]
	}
	return s
}

// markdown takes shell commands from sh/bash/shell/console blocks (console: the lines after a
// "$ " prompt), SQL from sql blocks, prose paragraphs and link URLs from the text outside blocks.
func markdown(src, rel string, add func(kind, text, rel string, line int)) {
	lines := strings.Split(src, "\n")
	inBlock, lang := false, ""
	var para []string
	paraStart := 0
	var sqlBuf strings.Builder
	sqlStart := 0
	flush := func() {
		if len(para) > 0 {
			p := strings.Join(para, " ")
			if len(strings.Fields(p)) >= 12 {
				add("prose", p, rel, paraStart)
			}
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		t := strings.TrimSpace(ln)
		if strings.HasPrefix(t, "```") {
			if !inBlock {
				flush()
				inBlock, lang = true, strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "`")))
				if j := strings.IndexAny(lang, " {,"); j >= 0 {
					lang = lang[:j]
				}
				sqlBuf.Reset()
				sqlStart = i + 2
			} else {
				if lang == "sql" {
					sqlStatements(sqlBuf.String(), rel, func(k, text, r string, l int) { add(k, text, r, sqlStart+l-1) })
				}
				inBlock = false
			}
			continue
		}
		if inBlock {
			switch lang {
			case "sh", "bash", "shell", "console", "shell-session", "zsh":
				cmd := t
				if lang == "console" || lang == "shell-session" || strings.HasPrefix(cmd, "$ ") {
					var ok bool
					if cmd, ok = strings.CutPrefix(t, "$ "); !ok {
						continue
					}
				}
				for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
					i++
					cmd = strings.TrimSuffix(cmd, "\\") + "\\\n" + lines[i]
					cmd = strings.TrimRight(cmd, " ")
				}
				if cmd != "" && !strings.HasPrefix(cmd, "#") {
					add("shell", cmd, rel, i+1)
				}
			case "sql":
				sqlBuf.WriteString(ln + "\n")
			}
			continue
		}
		for _, u := range urlRe.FindAllString(ln, -1) {
			add("url", strings.TrimRight(u, ".,;:!?*_"), rel, i+1)
		}
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "#"), strings.HasPrefix(t, "|"), strings.HasPrefix(t, "<"), strings.HasPrefix(t, "!["),
			strings.HasPrefix(t, "---"), strings.HasPrefix(t, "    "):
			flush()
		default:
			if len(para) == 0 {
				paraStart = i + 1
			}
			para = append(para, t)
		}
	}
	flush()
}

// makefile takes recipe lines (tab-indented), joined across backslash continuations, without
// make's @, - and + prefixes.
func makefile(src, rel string, add func(kind, text, rel string, line int)) {
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		if !strings.HasPrefix(ln, "\t") {
			continue
		}
		start := i + 1
		cmd := strings.TrimSpace(ln)
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = cmd + "\n" + strings.TrimRight(lines[i], " ")
		}
		cmd = strings.TrimLeft(cmd, "@-+")
		// What the shell runs is the recipe after make's expansion: $$ is $, and a line that
		// still names a make variable ($(GO), ${MAKE}) is left out, its value unknown here.
		if makeVarRef.MatchString(cmd) {
			continue
		}
		cmd = strings.ReplaceAll(cmd, "$$", "$")
		if cmd != "" && !strings.HasPrefix(cmd, "#") {
			add("shell", cmd, rel, start)
		}
	}
}

// workflow takes GitHub Actions `run:` steps: a one-line value, or each line of a block scalar.
func workflow(src, rel string, add func(kind, text, rel string, line int)) {
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ln), "- "))
		v, ok := strings.CutPrefix(t, "run:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if v != "|" && v != ">" && v != "|-" && v != ">-" {
			if !strings.Contains(v, "${{") {
				add("shell", strings.Trim(v, `"'`), rel, i+1)
			}
			continue
		}
		indent := len(ln) - len(strings.TrimLeft(ln, " "))
		for i+1 < len(lines) {
			nx := lines[i+1]
			if strings.TrimSpace(nx) != "" && len(nx)-len(strings.TrimLeft(nx, " ")) <= indent {
				break
			}
			i++
			c := strings.TrimSpace(nx)
			// ${{ }} is expanded by Actions before the shell runs; its value is unknown here.
			if c != "" && !strings.HasPrefix(c, "#") && !strings.Contains(c, "${{") {
				add("shell", c, rel, i+1)
			}
		}
	}
}

// sqlStatements splits SQL at a semicolon that ends a line, keeping comments, and leaves out
// dollar-quoted bodies whole (a statement with $$ runs to the line where the quote closes).
func sqlStatements(src, rel string, add func(kind, text, rel string, line int)) {
	sc := bufio.NewScanner(bytes.NewReader([]byte(src)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur strings.Builder
	start, n, dollars := 0, 0, 0
	for sc.Scan() {
		n++
		ln := sc.Text()
		if strings.TrimSpace(ln) == "" && cur.Len() == 0 {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		cur.WriteString(ln + "\n")
		dollars += strings.Count(ln, "$$")
		if dollars%2 == 0 && strings.HasSuffix(strings.TrimSpace(ln), ";") {
			st := strings.TrimSpace(cur.String())
			if hasSQL(st) {
				add("sql", st, rel, start)
			}
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); hasSQL(st) {
		add("sql", st, rel, start)
	}
}

// commandStart matches the first word of a command line: an environment assignment or a word
// starting the way program names, paths and shell syntax do (output lines such as "Pending" or
// "=====" do not).
var commandStart = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*=\S*|[a-z0-9_./~$(\[{"'][^\s]*)$`)

// destructiveSQL marks statements that destroy data or schema: a SQL tool may rightly ask
// before running them, so the report counts them apart.
var destructiveSQL = regexp.MustCompile(`(?is)\b(drop\s+(table|database|schema|index|view|function|type|trigger|column)|truncate\b|delete\s+from\s+[^;]*$)`)

// makeVarRef matches a make variable or function reference in a recipe: $( or ${ not escaped
// as $$.
var makeVarRef = regexp.MustCompile(`(^|[^$])\$[({]`)

var sqlWord = regexp.MustCompile(`(?i)\b(select|insert|update|delete|create|alter|drop|with|grant|begin|commit|truncate|explain|set|copy|comment)\b`)

func hasSQL(st string) bool {
	for _, l := range strings.Split(st, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--") {
			continue
		}
		return sqlWord.MatchString(l)
	}
	return false
}

// regularFiles lists the regular files under dir, sorted.
func regularFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}
