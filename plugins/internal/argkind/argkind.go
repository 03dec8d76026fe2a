// Package argkind says what kind of value a tool-call argument holds — a shell command, a SQL
// statement, a path, a URL, a search query, prose, code, or a fixed-shape token such as an id or a
// host name — from the tool's name, its definition (abi.ToolInfo: description and input schema,
// when the host has it) and the argument's key. Detectors use the kind to ask the question that
// fits the argument: a shell tool's command is judged on what it does, not on looking like a
// command; a search query may mention markup; a hostname field may hold no command syntax at all.
//
// Claude Code's built-in tools (Bash, Read, Write, Edit, WebFetch, ...) are known by name. Other
// tools are classified by key name, refined by the tool's name and description. Unknown is the
// answer when nothing says more: detectors then apply every category, as before kinds existed.
//
// Pure Go, no go-pdk: plugins and native tests share it.
package argkind

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/added060/palisade/sdk/go/abi"
)

// Kind is what an argument holds.
type Kind uint8

// Kinds.
const (
	Unknown Kind = iota // nothing says: every detector category applies
	Shell               // a shell command line the tool runs
	SQL                 // a SQL statement the tool executes
	Path                // a file or directory path
	URL                 // a URL the tool fetches
	Query               // a search query: a question, may mention markup or commands
	Text                // prose: a comment, message or body others read
	Code                // source code or file content written by the agent
	Fixed               // a fixed-shape token: id, host name, branch, email, number
	// Typed is a value that conforms to the integer, number, boolean, enum or format (uuid,
	// date, date-time, email) its tool's input schema declares (see Tool.Judge): data of a
	// known shape, not text. No detector category applies.
	Typed
	// TypedURL is a well-formed URL in a field the input schema declares a URL (format uri or
	// url): judged as a URL — where it points (SSRF) and injected instructions — not as text.
	TypedURL
	// NumKinds is the number of kinds (for tables indexed by kind).
	NumKinds
)

var names = [...]string{"unknown", "shell", "sql", "path", "url", "query", "text", "code", "fixed", "typed", "typed_url"}

// String is the kind's lower-case name (shell, sql, ...).
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "unknown"
}

// builtIn maps Claude Code's tools to their arguments' kinds.
var builtIn = map[string]map[string]Kind{
	"bash":         {"command": Shell, "description": Text},
	"bashoutput":   {"bash_id": Fixed, "filter": Code},
	"killshell":    {"shell_id": Fixed},
	"read":         {"file_path": Path},
	"write":        {"file_path": Path, "content": Code},
	"edit":         {"file_path": Path, "old_string": Code, "new_string": Code},
	"multiedit":    {"file_path": Path, "old_string": Code, "new_string": Code},
	"notebookedit": {"notebook_path": Path, "new_source": Code, "cell_id": Fixed, "cell_type": Fixed, "edit_mode": Fixed},
	"glob":         {"pattern": Code, "path": Path},
	"grep":         {"pattern": Code, "path": Path, "glob": Path, "type": Fixed, "output_mode": Fixed},
	"ls":           {"path": Path, "ignore": Code},
	"webfetch":     {"url": URL, "prompt": Query},
	"websearch":    {"query": Query, "allowed_domains": Fixed, "blocked_domains": Fixed},
	"task":         {"prompt": Text, "description": Text, "subagent_type": Fixed},
	"todowrite":    {"content": Text, "activeForm": Text, "status": Fixed, "id": Fixed},
	"exitplanmode": {"plan": Text},
}

// KnownTool reports whether tool is one of Claude Code's built-in tools.
func KnownTool(tool string) bool {
	_, ok := builtIn[strings.ToLower(tool)]
	return ok
}

// Tool is the context for classifying one call's arguments.
type Tool struct {
	name  string // lower case
	text  string // lower-case name, description and schema descriptions, for hints
	props map[string]string
	known map[string]Kind
	// root holds the input schema's declarations of the arguments' members, typed and nested
	// (see JudgeIn), by exact property name; nil without a schema.
	root *object
}

// ForCall builds the classification context from the envelope's tool name and tool_info (nil
// when the host has none).
func ForCall(tool string, info *abi.ToolInfo) *Tool {
	t := &Tool{name: strings.ToLower(tool)}
	if info != nil && info.Name != "" && t.name == "" {
		t.name = strings.ToLower(info.Name)
	}
	t.known = builtIn[t.name]
	t.text = t.name
	if info != nil {
		t.text += " " + strings.ToLower(info.Description)
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
				schemaProp
			} `json:"properties"`
			Defs        map[string]schemaProp `json:"$defs"`
			Definitions map[string]schemaProp `json:"definitions"`
		}
		if len(info.InputSchema) > 0 && json.Unmarshal(info.InputSchema, &s) == nil {
			t.props = map[string]string{}
			defs := s.Defs
			if len(defs) == 0 {
				defs = s.Definitions
			}
			props := make(map[string]schemaProp, len(s.Properties))
			for k, p := range s.Properties {
				t.props[strings.ToLower(k)] = strings.ToLower(p.Description + " " + p.Format)
				props[k] = p.schemaProp
			}
			budget := 0
			t.root = objectOf(props, defs, 0, &budget)
		}
	}
	return t
}

// Of classifies the argument at key (the last object key on its path; "" for array items and
// the top level).
func (t *Tool) Of(key string) Kind {
	if t == nil {
		return Unknown
	}
	if k, ok := t.known[key]; ok {
		return k
	}
	lk := strings.ToLower(key)
	desc := t.props[lk]
	toolSays := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(t.text, w) || strings.Contains(desc, w) {
				return true
			}
		}
		return false
	}
	switch lk {
	case "command", "cmd", "shell_command", "command_line", "commandline", "bash_command":
		return Shell
	case "script":
		if toolSays("shell", "bash", "terminal", "exec", "run") {
			return Shell
		}
		return Code
	case "sql", "sql_query", "statement", "sql_statement":
		return SQL
	case "query", "q":
		if toolSays("sql", "database", "postgres", "mysql", "sqlite", "select ", "bigquery", "snowflake", "duckdb") {
			return SQL
		}
		return Query
	case "search", "search_query", "keywords", "term", "terms", "question":
		return Query
	case "path", "file", "file_path", "filepath", "filename", "file_name", "dir", "directory",
		"dir_path", "folder", "cwd", "notebook_path", "source_path", "dest", "destination", "target_path":
		return Path
	case "url", "uri", "href", "link", "endpoint", "webhook", "webhook_url", "callback_url", "base_url":
		return URL
	case "body", "comment", "message", "text", "description", "title", "prompt", "note", "notes",
		"summary", "subject", "reason", "content", "markdown", "prose", "reply":
		if lk == "content" && toolSays("file", "write", "code", "source") {
			return Code
		}
		return Text
	case "code", "source", "snippet", "patch", "diff", "new_string", "old_string", "new_source", "program":
		return Code
	case "host", "hostname", "domain", "ip", "ip_address", "address", "port", "email", "username",
		"user", "branch", "ref", "sha", "commit", "version", "repo", "repository", "owner", "tag",
		"status", "type", "format", "lang", "language", "locale", "zone", "region", "name", "id", "key":
		return Fixed
	}
	if strings.HasSuffix(lk, "_id") || strings.HasSuffix(key, "Id") || strings.HasSuffix(key, "ID") {
		return Fixed
	}
	if strings.HasSuffix(lk, "_path") || strings.HasSuffix(lk, "_file") || strings.HasSuffix(lk, "_dir") {
		return Path
	}
	if strings.HasSuffix(lk, "_url") || strings.HasSuffix(lk, "_uri") {
		return URL
	}
	return Unknown
}

// ForValue refines k by the value itself: a text field that holds no prose (fewer than three
// words, such as a bare path or URL in a "message") is judged as unknown, every category: the
// leniency prose earns does not extend to a payload alone. A code field that holds one absolute,
// home or relative path and nothing else is a path (`{"source": "/home/u/.ssh/id_rsa"}` of a
// move_file or copy_file tool, where "source" names the file moved): no program is one path,
// and the leniency code earns for the paths it mentions does not extend to a path alone.
func (k Kind) ForValue(v string) Kind {
	if k == Text && !hasWords(v, 3) {
		return Unknown
	}
	if k == Code && barePath(v) {
		return Path
	}
	return k
}

// barePath reports whether v is one path and nothing else: no white space, starting at the
// root, the home folder, `./`, `../` or a drive (`C:\`, `C:/`).
func barePath(v string) bool {
	if len(v) < 2 || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return false
	}
	switch {
	case v[0] == '/', strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"):
		return true
	}
	return len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') && unicode.IsLetter(rune(v[0]))
}

// hasWords reports whether v holds at least n words as strings.Fields splits them (runs of
// non-space runes, unicode.IsSpace), without building the slice.
func hasWords(v string, n int) bool {
	words, in := 0, false
	for _, r := range v {
		if unicode.IsSpace(r) {
			in = false
			continue
		}
		if !in {
			if words++; words >= n {
				return true
			}
			in = true
		}
	}
	return false
}

// Labels names the detector categories that are meaningful for a kind: a finding of any other
// category in an argument of that kind is what the argument is for, not an attack. nil means
// every category. Shell and SQL arguments are judged by parsers instead (plugins/injection:
// what a command does, whether user data changed a statement's structure); code is content.
func (k Kind) Labels() []string {
	switch k {
	case Shell:
		return []string{"prompt_injection", "sensitive_paths"}
	case SQL:
		return []string{"prompt_injection", "sensitive_paths"}
	case Code:
		return []string{"prompt_injection"}
	case Path:
		return []string{"path_traversal", "sensitive_paths", "command_injection", "prompt_injection"}
	case Typed:
		return []string{}
	case TypedURL:
		return []string{"ssrf", "prompt_injection"}
	case Text:
		// Prose people read: injected instructions, markup and command or SQL syntax do not
		// belong; a path or an internal URL mentioned in a message is not opened by the tool.
		return []string{"prompt_injection", "xss", "command_injection", "sql_injection"}
	case Query:
		return []string{"sql_injection", "command_injection", "prompt_injection", "xss", "ssrf", "path_traversal", "sensitive_paths"}
	}
	return nil
}

// Applies reports whether a finding labelled label counts in an argument of kind k.
func (k Kind) Applies(label string) bool {
	ls := k.Labels()
	if ls == nil {
		return true
	}
	for _, l := range ls {
		if l == label {
			return true
		}
	}
	return false
}

// LastKey returns the last object key of an evidence path such as "arguments.options.command",
// "arguments.cmds[2]" or "arguments.cmds.2" (both "cmds"), or "" when there is none. A detector
// path's window suffix ("arguments.body[0:512]") is skipped too.
//
// It allocates nothing: the injection stage reads it for every argument of unknown kind.
func LastKey(path string) string {
	end := len(path)
	for {
		i := strings.LastIndexAny(path[:end], ".[")
		if i < 0 {
			return "" // the first part is "arguments", "uri" or "result"
		}
		if p := path[i+1 : end]; p != "" && !strings.HasSuffix(p, "]") && strings.Trim(p, "0123456789") != "" {
			if strings.TrimLeft(path[:i], ".[") == "" {
				return "" // nothing before it: it is the first part
			}
			return p
		}
		end = i
	}
}

// Cache keeps the Tool of the last call it built one for: agents call the same tool many times
// in a row, and building a Tool parses the tool's input schema (encoding/json, slow inside
// Wasm). It is safe for concurrent use; the zero value is ready.
type Cache struct {
	last atomic.Pointer[cacheEntry]
}

type cacheEntry struct {
	tool, info string // the key, copied
	t          *Tool
}

// ForCall is ForCall(tool, info decoded), reusing the last Tool while tool and info are the
// same bytes. info is the envelope's tool_info JSON ("" when absent); one that does not decode
// counts as absent, as it does for ForCall's callers. The strings may alias a buffer the caller
// reuses: the cache keeps copies.
func (c *Cache) ForCall(tool, info string) *Tool {
	if e := c.last.Load(); e != nil && e.tool == tool && e.info == info {
		return e.t
	}
	var ti *abi.ToolInfo
	if info != "" {
		var x abi.ToolInfo
		if json.Unmarshal([]byte(info), &x) == nil {
			ti = &x
		}
	}
	e := &cacheEntry{tool: strings.Clone(tool), info: strings.Clone(info)}
	e.t = ForCall(e.tool, ti)
	c.last.Store(e)
	return e.t
}
