package shell

import (
	"encoding/json"
	"strings"
)

// VS Code's tasks (https://code.visualstudio.com/docs/editor/tasks, "Custom tasks" and "Run
// behavior"; the schema's `command`, `args`, `tasks`, `runOptions.runOn` and the per-platform
// `linux`, `osx` and `windows` members): .vscode/tasks.json is a JSON-with-comments file whose
// tasks run a command with arguments, by hand (like a makefile's recipe) or, with
// `"runOptions": {"runOn": "folderOpen"}`, as soon as the folder is opened: a task that runs
// without being called, as a git hook does.

// vscodeTask is one command a tasks.json runs: its line, and whether it runs on folder open.
type vscodeTask struct {
	cmd    string
	onOpen bool
}

// vscodeFile reports whether p is a workspace's tasks file.
func vscodeFile(p string) bool {
	return p == ".vscode/tasks.json" || strings.HasSuffix(p, "/.vscode/tasks.json")
}

// vscodeTasks returns the commands of a tasks.json text: each task's command and arguments
// (and each platform's own), the file's top-level command too. Text that is not a whole
// tasks file (a piece an edit puts in) is read by its `"command": "…"` members, each run on
// folder open when the text says folderOpen anywhere.
func vscodeTasks(text string) []vscodeTask {
	type cmdSpec struct {
		Command any   `json:"command"`
		Args    []any `json:"args"`
	}
	type task struct {
		cmdSpec
		Linux      *cmdSpec `json:"linux"`
		OSX        *cmdSpec `json:"osx"`
		Windows    *cmdSpec `json:"windows"`
		RunOptions struct {
			RunOn string `json:"runOn"`
		} `json:"runOptions"`
	}
	var file struct {
		task
		Tasks []task `json:"tasks"`
	}
	var out []vscodeTask
	if json.Unmarshal([]byte(stripJSONC(text)), &file) != nil {
		open := strings.Contains(text, "folderOpen")
		for _, m := range reJSONPair.FindAllStringSubmatch(text, -1) {
			var s string
			if m[1] == "command" && json.Unmarshal([]byte(m[2]), &s) == nil {
				out = append(out, vscodeTask{s, open})
			}
		}
		return out
	}
	add := func(c *cmdSpec, open bool) {
		if c == nil {
			return
		}
		line := vscodeWord(c.Command)
		for _, a := range c.Args {
			if w := vscodeWord(a); w != "" {
				line += " " + shellQuote(w) // each argument one word, as VS Code quotes it
			}
		}
		if strings.TrimSpace(line) != "" {
			out = append(out, vscodeTask{line, open})
		}
	}
	for _, t := range append([]task{file.task}, file.Tasks...) {
		open := t.RunOptions.RunOn == "folderOpen"
		add(&t.cmdSpec, open)
		add(t.Linux, open)
		add(t.OSX, open)
		add(t.Windows, open)
	}
	return out
}

// vscodeWord is a command or argument as tasks.json gives it: a string, or an object whose
// `value` is the string (a quoting rule beside it).
func vscodeWord(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if s, ok := x["value"].(string); ok {
			return s
		}
	}
	return ""
}

// stripJSONC returns text with JSON-with-comments' extras removed: `//` and `/* */` comments
// outside strings, and a comma before a closing bracket or brace.
func stripJSONC(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	inStr := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inStr:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(text) {
				i++
				b.WriteByte(text[i])
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			b.WriteByte(c)
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			if i < len(text) {
				b.WriteByte('\n')
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 3
		case c == ',':
			j := i + 1
			for j < len(text) && strings.IndexByte(" \t\r\n", text[j]) >= 0 {
				j++
			}
			if j < len(text) && (text[j] == '}' || text[j] == ']') {
				continue // a trailing comma
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
