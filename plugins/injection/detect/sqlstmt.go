package detect

import (
	"strings"
)

// SQLFinding is one reason a SQL tool's statement is judged an attack.
type SQLFinding struct {
	Rule   string // sql/tautology, sql/union, sql/stacked, sql/destroy, ...
	Reason string
	Match  string
	Score  float64
	// Uncertain marks a finding a careful reviewer would ask about rather than refuse: a
	// statement of its own that destroys data in one table (DROP TABLE, TRUNCATE, DELETE or
	// UPDATE without WHERE, ALTER TABLE ... DROP COLUMN) is what a migration or a cleanup
	// does. Dropping a database, schema or user, shutting the server down, and anything a
	// value broke out to run stay certain.
	Uncertain bool
}

type sqlTok struct {
	kind byte // 'w' word, 'n' number, 's' string, 'q' quoted identifier, 'c' comment, 'p' punctuation
	text string
	up   string // upper-case word
	// glued is true when no white space separates the token from the previous one.
	glued bool
}

// sqlLex splits a statement into tokens. unterminated is true when a string literal, quoted
// identifier or block comment runs to the end of the text.
func sqlLex(s string) (toks []sqlTok, unterminated bool) {
	i := 0
	glued := false
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
			glued = false
			continue
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '#':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			toks = append(toks, sqlTok{kind: 'c', text: s[i : i+j], glued: glued})
			i += j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				toks = append(toks, sqlTok{kind: 'c', text: s[i:], glued: glued})
				return toks, true
			}
			toks = append(toks, sqlTok{kind: 'c', text: s[i : i+2+j+2], glued: glued})
			i += j + 4
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '\\' && c == '\'' && j+1 < len(s) {
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				j++
			}
			k := byte('s')
			if c != '\'' {
				k = 'q'
			}
			toks = append(toks, sqlTok{kind: k, text: s[i:j], glued: glued})
			if !closed {
				return toks, true
			}
			i = j
		case c == '$' && dollarTag(s[i:]) != "":
			// PostgreSQL dollar quoting ($$ ... $$, $body$ ... $body$): a string, as a function
			// body is; its statements run when the function is called, not now.
			tag := dollarTag(s[i:])
			j := strings.Index(s[i+len(tag):], tag)
			if j < 0 {
				toks = append(toks, sqlTok{kind: 's', text: s[i:], glued: glued})
				return toks, true
			}
			end := i + len(tag) + j + len(tag)
			toks = append(toks, sqlTok{kind: 's', text: s[i:end], glued: glued})
			i = end
		case isWordByte(c):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.' || s[j] == '$') {
				j++
			}
			w := s[i:j]
			k := byte('w')
			if c >= '0' && c <= '9' {
				k = 'n'
			}
			toks = append(toks, sqlTok{kind: k, text: w, up: strings.ToUpper(w), glued: glued})
			i = j
		default:
			j := i + 1
			if j < len(s) && strings.Contains("<>!=|:", string(c)) && strings.Contains("=>|:", string(s[j])) {
				j++
			}
			toks = append(toks, sqlTok{kind: 'p', text: s[i:j], glued: glued})
			i = j
		}
		glued = true
	}
	return toks, false
}

// dollarTag returns the PostgreSQL dollar-quote opener at the start of s ("$$", "$body$"), or
// "" when s does not start with one ("$1" is a parameter).
func dollarTag(s string) string {
	if len(s) < 2 || s[0] != '$' {
		return ""
	}
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '$':
			return s[:j+1]
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || j > 1 && c >= '0' && c <= '9':
		default:
			return ""
		}
	}
	return ""
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '@' || c >= 0x80
}

var sqlDangerFuncs = map[string]string{
	"LOAD_FILE": "reads a server file", "XP_CMDSHELL": "runs an OS command", "PG_READ_FILE": "reads a server file",
	"PG_SLEEP": "time-based probing", "SLEEP": "time-based probing", "BENCHMARK": "time-based probing",
	"DBMS_PIPE.RECEIVE_MESSAGE": "time-based probing", "LO_IMPORT": "reads a server file", "PG_LS_DIR": "lists server files",
	"UTL_HTTP.REQUEST": "makes a network request", "SYS_EVAL": "runs an OS command", "SYS_EXEC": "runs an OS command",
}

// alterKeeps names what ALTER TABLE ... DROP removes without losing rows or values: a
// constraint, a default, an index, an identity or generated expression.
var alterKeeps = map[string]bool{"NOT": true, "CONSTRAINT": true, "DEFAULT": true, "INDEX": true, "KEY": true,
	"PRIMARY": true, "FOREIGN": true, "CHECK": true, "IDENTITY": true, "EXPRESSION": true, "TRIGGER": true,
	"UNIQUE": true, "RULE": true}

// alterDropsData reports whether an ALTER TABLE statement drops a column (or partition): data
// goes. ALTER COLUMN ... DROP NOT NULL, DROP CONSTRAINT, DROP DEFAULT and the like change the
// schema's rules only, as migrations do all day.
func alterDropsData(code []sqlTok) bool {
	for i, t := range code {
		if t.kind != 'w' || t.up != "DROP" || i+1 >= len(code) {
			continue
		}
		next := code[i+1]
		if next.up == "IF" && i+3 < len(code) {
			next = code[i+3] // DROP IF EXISTS <name>
		}
		if !alterKeeps[next.up] {
			return true // DROP COLUMN c, DROP c, DROP PARTITION p
		}
	}
	return false
}

// AnalyzeSQL judges a statement given to a SQL tool. A SQL tool runs SQL, so SQL syntax is not
// a finding; what is: signs that user data changed the statement's structure (a tautology in a
// condition, a UNION or stacked query after a literal, a quote left open or a comment that cuts
// a condition off right after a string), destroying data (DROP, TRUNCATE, DELETE or UPDATE
// without WHERE), and functions that reach the server's files, OS or clock. A trailing
// `-- comment` after an ordinary query is fine.
func AnalyzeSQL(stmt string) []SQLFinding {
	toks, open := sqlLex(stmt)
	var out []SQLFinding
	addFinding := func(f SQLFinding) {
		for i, g := range out {
			if g.Rule == f.Rule {
				out[i].Uncertain = g.Uncertain && f.Uncertain // one certain finding of a rule makes it certain
				return
			}
		}
		if len(f.Match) > 80 {
			f.Match = f.Match[:80]
		}
		out = append(out, f)
	}
	add := func(rule, reason, match string, score float64) {
		addFinding(SQLFinding{Rule: rule, Reason: reason, Match: match, Score: score})
	}
	ask := func(rule, reason, match string, score float64) {
		addFinding(SQLFinding{Rule: rule, Reason: reason, Match: match, Score: score, Uncertain: true})
	}
	if open {
		if c := codeOnly(toks); len(c) > 0 && (c[0].up == "CREATE" || c[0].up == "DO") {
			// A function or trigger body ('...' or $tag$...$tag$) left open: a definition cut
			// short, which the server refuses; no value was spliced into a condition.
			ask("sql/unbalanced_quote", "a quote is left open in a definition's body", stmt, 0.85)
		} else {
			add("sql/unbalanced_quote", "a quote or comment is left open: a value broke out of its literal", stmt, 0.85)
		}
	}
	// Split into statements on ';'.
	var stmts [][]sqlTok
	cur := []sqlTok{}
	for i, t := range toks {
		if t.kind == 'p' && t.text == ";" {
			if len(cur) > 0 {
				stmts = append(stmts, cur)
				// stacked after a literal: "... = 'x'; DROP ..." / "... id = 1; ..."
				if prev := lastCode(cur); prev != nil && (prev.kind == 's' || prev.kind == 'n') && hasCode(toks[i+1:]) && hasWord(cur, "WHERE") {
					add("sql/stacked", "a second statement follows a value in a condition", t.text+" "+joinToks(toks[i+1:]), 0.9)
				}
			}
			cur = []sqlTok{}
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		stmts = append(stmts, cur)
	}
	for _, st := range stmts {
		code := codeOnly(st)
		if len(code) == 0 {
			continue
		}
		text := joinToks(code)
		head := code[0].up
		switch head {
		case "DROP":
			switch {
			case len(code) > 1 && code[1].up == "TABLE":
				ask("sql/destroy", "drops a table", text, 0.9)
			case len(code) > 1 && (code[1].up == "DATABASE" || code[1].up == "SCHEMA" || code[1].up == "USER"):
				add("sql/destroy", "drops a database, schema or user", text, 0.9)
			}
		case "TRUNCATE":
			ask("sql/destroy", "empties a table", text, 0.9)
		case "DELETE", "UPDATE":
			if !hasWord(code, "WHERE") {
				ask("sql/destroy", head+" without WHERE changes every row", text, 0.9)
			}
		case "ALTER":
			if len(code) > 1 && code[1].up == "TABLE" && alterDropsData(code) {
				ask("sql/destroy", "drops a column", text, 0.8)
			}
		case "SHUTDOWN":
			add("sql/destroy", "shuts the server down", text, 0.9)
		}
		for i, t := range code {
			if t.kind == 'w' {
				if why, ok := sqlDangerFuncs[t.up]; ok && i+1 < len(code) && code[i+1].text == "(" {
					add("sql/dangerous_function", t.up+" "+why, text, 0.85)
				}
				if t.up == "INTO" && i+1 < len(code) && (code[i+1].up == "OUTFILE" || code[i+1].up == "DUMPFILE") {
					add("sql/dangerous_function", "writes a server file", text, 0.9)
				}
				if t.up == "WAITFOR" && i+1 < len(code) && code[i+1].up == "DELAY" {
					add("sql/dangerous_function", "time-based probing", text, 0.85)
				}
				if t.up == "PROGRAM" && i > 0 && (code[i-1].up == "TO" || code[i-1].up == "FROM") {
					add("sql/dangerous_function", "COPY runs an OS command", text, 0.9)
				}
			}
			// tautology: OR/AND <x> <op> <x>, OR 1, OR TRUE
			if t.kind == 'w' && (t.up == "OR" || t.up == "||") && i+1 < len(code) {
				if taut(code[i+1:]) {
					add("sql/tautology", "a condition that is always true", joinToks(code[i:min(i+5, len(code))]), 0.9)
				}
			}
			if t.kind == 'w' && t.up == "UNION" && i > 0 {
				prev := code[i-1]
				rest := code[i+1:]
				if len(rest) > 0 && rest[0].up == "ALL" {
					rest = rest[1:]
				}
				if (prev.kind == 's' || prev.kind == 'n') && hasWord(code[:i], "WHERE") && readsSecrets(rest) || unionProbe(rest) {
					add("sql/union", "a UNION query appended to a condition's value", joinToks(code[i:min(i+8, len(code))]), 0.9)
				}
			}
		}
		// A comment glued to a string literal ("name = 'admin'--") cuts the rest of a condition.
		for i, t := range st {
			if t.kind == 'c' && i > 0 && t.glued && st[i-1].kind == 's' {
				add("sql/comment_truncation", "a comment right after a string literal cuts the statement", st[i-1].text+t.text, 0.85)
			}
		}
	}
	return out
}

func taut(r []sqlTok) bool {
	r = codeOnly(r)
	if len(r) == 0 {
		return false
	}
	if len(r) == 1 || r[1].kind != 'p' {
		switch {
		case r[0].up == "TRUE", r[0].kind == 'n' && strings.Trim(r[0].text, "0.") != "":
			return true
		}
		if r[0].text == "(" {
			return taut(r[1:])
		}
	}
	if len(r) >= 3 && r[1].kind == 'p' {
		op := r[1].text
		a, b := r[0], r[2]
		lit := func(t sqlTok) bool { return t.kind == 's' || t.kind == 'n' }
		if lit(a) && lit(b) {
			av, bv := strings.Trim(a.text, `'`), strings.Trim(b.text, `'`)
			switch op {
			case "=", "<=", ">=":
				return av == bv
			case "<>", "!=":
				return av != bv
			case "<", ">":
				return true // two constants: decided before any row is read
			}
		}
		if a.kind == 'w' && b.kind == 'w' && a.up == b.up && (op == "=" || op == ">=" || op == "<=") {
			return true
		}
	}
	if len(r) >= 3 && r[1].kind == 'w' && r[1].up == "LIKE" && (r[0].kind == 's' || r[0].kind == 'n') && strings.Trim(r[2].text, `'`) == "%" {
		return true
	}
	return false
}

// unionProbe reports a UNION SELECT that reads what an attacker probes for: NULL column lists,
// the catalogue, version and user functions.
func unionProbe(r []sqlTok) bool {
	r = codeOnly(r)
	if len(r) == 0 || r[0].up != "SELECT" {
		return false
	}
	nulls := 0
	for _, t := range r[1:] {
		switch {
		case t.up == "NULL":
			nulls++
		case strings.HasPrefix(t.up, "INFORMATION_SCHEMA"), strings.HasPrefix(t.up, "@@"), t.up == "VERSION", t.up == "USER", t.up == "CURRENT_USER",
			t.up == "DATABASE", t.up == "SQLITE_MASTER", t.up == "PG_SHADOW", strings.HasPrefix(t.up, "SYS."), strings.HasPrefix(t.up, "MYSQL.USER"):
			return true
		case t.up == "FROM":
			return nulls >= 2
		}
	}
	return nulls >= 2
}

// readsSecrets reports a SELECT list naming credential columns (password, hash, token...).
func readsSecrets(r []sqlTok) bool {
	for _, t := range codeOnly(r) {
		if t.up == "FROM" {
			return false
		}
		for _, w := range []string{"PASSW", "PWD", "HASH", "SECRET", "TOKEN", "API_KEY", "APIKEY", "SALT", "CREDIT", "SSN"} {
			if t.kind == 'w' && strings.Contains(t.up, w) {
				return true
			}
		}
	}
	return false
}

func codeOnly(ts []sqlTok) []sqlTok {
	out := ts[:0:0]
	for _, t := range ts {
		if t.kind != 'c' {
			out = append(out, t)
		}
	}
	return out
}

func lastCode(ts []sqlTok) *sqlTok {
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].kind != 'c' {
			return &ts[i]
		}
	}
	return nil
}

func hasCode(ts []sqlTok) bool { return lastCode(ts) != nil }

func hasWord(ts []sqlTok, w string) bool {
	for _, t := range ts {
		if t.kind == 'w' && t.up == w {
			return true
		}
	}
	return false
}

func joinToks(ts []sqlTok) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && !t.glued {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}
