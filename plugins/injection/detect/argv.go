package detect

import (
	"strconv"
	"strings"

	"github.com/added060/palisade/plugins/internal/argkind"
)

// A tool that runs a program may take its command line as an argv array rather than one string
// (`{"cmd": ["rm", "-rf", "~"]}`, `{"command": "rm", "args": ["-rf", "~"]}`, a `kubectl` tool's
// `{"args": ["delete", "namespace", "prod"]}`). Each item alone is a word, not a command, so
// nothing was judged (issue 26, probing the gateway, 2026-12-01). argvLeaves adds one shell
// leaf per such array: its words quoted and joined, after the program's name where a sibling or
// the tool's name gives it.

// argvKeys name an array that is a whole argv (the program first).
var argvKeys = map[string]bool{"cmd": true, "command": true, "argv": true, "command_line": true,
	"commandline": true, "shell_command": true, "exec": true, "entrypoint": true}

// argsKeys name an array of a program's arguments (the program elsewhere).
var argsKeys = map[string]bool{"args": true, "arguments": true, "argv": true, "params": true, "parameters": true}

// programKeys name the sibling that holds the program an args array is given to.
var programKeys = []string{"command", "cmd", "program", "executable", "binary", "bin"}

// cliTools are tools named for the program they run, whose args array is that program's
// arguments (`kubectl` with `["delete", "namespace", "prod"]`).
var cliTools = map[string]bool{"kubectl": true, "docker": true, "podman": true, "git": true, "helm": true,
	"terraform": true, "tofu": true, "aws": true, "gcloud": true, "az": true, "gsutil": true, "npm": true,
	"pnpm": true, "yarn": true, "pip": true, "cargo": true, "go": true, "make": true, "systemctl": true,
	"psql": true, "mysql": true, "redis-cli": true, "ssh": true, "rsync": true, "curl": true, "wget": true,
	"bash": true, "sh": true, "rm": true, "find": true, "oc": true}

// argvLeaves returns leaves with one Shell leaf added for each argv array among the argument
// leaves of a call of tool (leaves of an array's items are consecutive, in index order, with
// paths P[0], P[1], …: collectStrings and the view's walker agree).
func argvLeaves(leaves []leaf, tool string) []leaf {
	n := len(leaves)
	for i := 0; i < n; {
		prefix, idx, ok := itemOf(leaves[i].path)
		if !ok || idx != 0 {
			i++
			continue
		}
		j := i + 1
		for j < n {
			p, k, ok := itemOf(leaves[j].path)
			if !ok || p != prefix || k != j-i {
				break
			}
			j++
		}
		words := make([]string, 0, j-i)
		for _, l := range leaves[i:j] {
			words = append(words, quoteWord(l.text))
		}
		i = j
		parent, key := prefix, prefix
		if d := strings.LastIndexByte(prefix, '.'); d >= 0 {
			parent, key = prefix[:d], prefix[d+1:]
		}
		key = strings.ToLower(key)
		line := ""
		switch {
		case argvKeys[key] && !argsKeys[key] || key == "argv" && !hasProgram(leaves[:n], parent):
			line = strings.Join(words, " ")
		case argsKeys[key]:
			if p := programOf(leaves[:n], parent); p != "" {
				line = quoteWord(p) + " " + strings.Join(words, " ")
			} else if t := cliName(tool); t != "" {
				line = t + " " + strings.Join(words, " ")
			}
		}
		if line != "" {
			leaves = append(leaves, leaf{path: prefix, text: line, kind: argkind.Shell})
		}
	}
	return envLeaves(cwdLeaves(leaves))
}

// envKeys name the environment a command runs with, beside the command (`{"command": "npm
// install", "env": {"NODE_TLS_REJECT_UNAUTHORIZED": "0"}}`: Node's child_process, most MCP
// command runners, Docker's exec).
var envKeys = []string{"env", "environment", "envs", "env_vars"}

// envName reports whether name is a variable name a shell assigns.
func envName(name string) bool {
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return name != ""
}

// envLeaves adds, for each shell leaf with an environment sibling (envKeys: an object of
// strings), the line as it runs: `export NAME=VALUE; COMMAND`, so variables that turn checks
// off or load a library (`NODE_TLS_REJECT_UNAUTHORIZED=0`, `LD_PRELOAD`) are judged as the
// shell judges them when the line sets them. The command alone is still judged as before.
func envLeaves(leaves []leaf) []leaf {
	n := len(leaves)
	for i := 0; i < n; i++ {
		l := leaves[i]
		if l.kind != argkind.Shell {
			continue
		}
		if _, _, item := itemOf(l.path); item {
			continue
		}
		parent := ""
		if d := strings.LastIndexByte(l.path, '.'); d >= 0 {
			parent = l.path[:d] + "."
		}
		var exports []string
		for _, m := range leaves[:n] {
			for _, k := range envKeys {
				name, ok := cutFold(m.path, parent+k+".")
				if ok && envName(name) && !strings.ContainsAny(m.text, "\n") {
					exports = append(exports, "export "+name+"="+quoteWord(m.text))
				}
			}
		}
		if len(exports) > 0 {
			leaves = append(leaves, leaf{path: l.path, text: strings.Join(exports, "; ") + "; " + l.text, kind: argkind.Shell})
		}
	}
	return leaves
}

// cutFold is strings.CutPrefix with prefix matched without regard to case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

// cwdKeys name the folder a command runs in, beside the command (`{"options": {"cwd": "~",
// "command": "rm -rf ."}}`: Node's child_process and most runners' option).
var cwdKeys = []string{"cwd", "workdir", "working_dir", "working_directory", "workingdirectory", "dir", "directory"}

// cwdLeaves adds, for each shell leaf with a folder sibling (cwdKeys), the line as it runs:
// `cd DIR && COMMAND`, so a path relative to the folder is judged where it points (issue 26,
// det65). The command alone is still judged as before.
func cwdLeaves(leaves []leaf) []leaf {
	n := len(leaves)
	for i := 0; i < n; i++ {
		l := leaves[i]
		if l.kind != argkind.Shell {
			continue
		}
		parent := ""
		if d := strings.LastIndexByte(l.path, '.'); d >= 0 {
			parent = l.path[:d]
		}
		if _, _, item := itemOf(l.path); item {
			continue
		}
		for _, k := range cwdKeys {
			dir := ""
			for _, m := range leaves[:n] {
				if strings.EqualFold(m.path, parent+"."+k) || parent == "" && strings.EqualFold(m.path, k) {
					dir = strings.TrimSpace(m.text)
				}
			}
			if dir != "" && !strings.ContainsAny(dir, "\n") {
				// The folder is the command's project when it can be one (shell.AnalyzeIn, det68).
				leaves[i].root = dir
				leaves = append(leaves, leaf{path: l.path, text: "cd " + quoteWord(dir) + " && " + l.text, kind: argkind.Shell, root: dir})
				break
			}
		}
	}
	return leaves
}

// itemOf splits an item's path P[i] into P and i.
func itemOf(p string) (string, int, bool) {
	if !strings.HasSuffix(p, "]") {
		return "", 0, false
	}
	o := strings.LastIndexByte(p, '[')
	if o < 0 {
		return "", 0, false
	}
	i, err := strconv.Atoi(p[o+1 : len(p)-1])
	if err != nil {
		return "", 0, false
	}
	return p[:o], i, true
}

// programOf returns the string sibling of parent that names a program (programKeys), or "".
func programOf(leaves []leaf, parent string) string {
	for _, k := range programKeys {
		for _, l := range leaves {
			if strings.EqualFold(l.path, parent+"."+k) && !strings.ContainsAny(l.text, " \t\n") {
				return l.text
			}
		}
	}
	return ""
}

// hasProgram reports whether parent has a program sibling (programOf).
func hasProgram(leaves []leaf, parent string) bool { return programOf(leaves, parent) != "" }

// cliName returns the program a tool is named for (cliTools), the server's prefix of an
// aggregated name (`k8s__kubectl`) dropped, or "".
func cliName(tool string) string {
	t := strings.ToLower(tool)
	if i := strings.LastIndex(t, "__"); i >= 0 {
		t = t[i+2:]
	}
	if cliTools[t] {
		return t
	}
	return ""
}

// quoteWord quotes w for a shell line when it holds anything but plain word characters.
func quoteWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,~") == "" && !strings.HasPrefix(w, "~") || w == "~" || strings.HasPrefix(w, "~/") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// A tool that runs code (`execute_python`, `run_js`, `python_repl`, `code_interpreter` with a
// language in its name) takes the program as a code argument, which the Code kind judges as
// text an agent writes (a file's content), not as a program that runs now: `{"code":
// "import shutil; shutil.rmtree('/home/u')"}` had no finding. codeLeaves adds the code again as
// the one-liner that runs it (`python3 -c '…'`), which the shell package reads as it reads any
// interpreter one-liner (plugins/internal/shell code.go).

// codeKeys name the argument that holds the program.
var codeKeys = map[string]bool{"code": true, "script": true, "source": true, "program": true, "source_code": true, "cell": true, "snippet": true}

// runLanguage returns the one-liner flag form for the language a code-running tool's name
// names (`python3 -c`), or "" when the name does not say it runs code in one.
func runLanguage(tool string) string {
	t := strings.ToLower(tool)
	if i := strings.LastIndex(t, "__"); i >= 0 {
		t = t[i+2:]
	}
	runs := false
	for _, w := range []string{"exec", "run", "eval", "repl", "interpret", "sandbox", "execute", "notebook", "jupyter"} {
		runs = runs || strings.Contains(t, w)
	}
	switch {
	case strings.Contains(t, "python") || t == "py" || strings.HasSuffix(t, "_py"):
		if runs || t == "python" || t == "py" {
			return "python3 -c"
		}
	case strings.Contains(t, "node") || strings.Contains(t, "javascript") || strings.HasSuffix(t, "_js") || strings.Contains(t, "_js_") || strings.HasPrefix(t, "js_") || strings.Contains(t, "typescript"):
		if runs || t == "node" || t == "javascript" {
			return "node -e"
		}
	case strings.Contains(t, "ruby"):
		if runs || t == "ruby" {
			return "ruby -e"
		}
	case strings.Contains(t, "perl"):
		if runs || t == "perl" {
			return "perl -e"
		}
	case strings.Contains(t, "php"):
		if runs || t == "php" {
			return "php -r"
		}
	}
	return ""
}

// runsCode reports whether a tool's name says it runs code without naming the language
// (`execute_code`, `run_code`, `code_interpreter`, `run_cell`): an argument names it then.
func runsCode(tool string) bool {
	t := strings.ToLower(tool)
	if i := strings.LastIndex(t, "__"); i >= 0 {
		t = t[i+2:]
	}
	return (strings.Contains(t, "exec") || strings.Contains(t, "run") || strings.Contains(t, "eval") || strings.Contains(t, "interpret")) &&
		(strings.Contains(t, "code") || strings.Contains(t, "cell") || strings.Contains(t, "snippet") || strings.Contains(t, "script"))
}

// languageRuns maps the language a code-running tool's argument names to the one-liner that
// runs its code.
var languageRuns = map[string]string{
	"python": "python3 -c", "python3": "python3 -c", "py": "python3 -c",
	"javascript": "node -e", "js": "node -e", "node": "node -e", "nodejs": "node -e", "typescript": "node -e", "ts": "node -e",
	"ruby": "ruby -e", "rb": "ruby -e", "perl": "perl -e", "php": "php -r",
	"bash": "bash -c", "sh": "bash -c", "shell": "bash -c", "zsh": "bash -c",
	"r": "Rscript -e", "julia": "julia -e", "tcl": "tclsh <<<", "powershell": "pwsh -Command", "pwsh": "pwsh -Command",
}

// namedLanguage returns the one-liner form of the language a top-level language, lang,
// kernel, runtime or interpreter argument names, or "".
func namedLanguage(leaves []leaf) string {
	for _, l := range leaves {
		switch strings.ToLower(strings.TrimPrefix(l.path, "arguments.")) {
		case "language", "lang", "kernel", "runtime", "interpreter":
			if r := languageRuns[strings.ToLower(strings.TrimSpace(l.text))]; r != "" {
				return r
			}
		}
	}
	return ""
}

// codeLeaves returns leaves with a Shell leaf added for each top-level code argument of a
// code-running tool (runLanguage): the one-liner that runs it.
func codeLeaves(leaves []leaf, tool string) []leaf {
	run := runLanguage(tool)
	if run == "" && runsCode(tool) {
		run = namedLanguage(leaves)
	}
	if run == "" {
		return leaves
	}
	n := len(leaves)
	for i := 0; i < n; i++ {
		l := leaves[i]
		key, ok := strings.CutPrefix(l.path, "arguments.")
		if !ok || !codeKeys[strings.ToLower(key)] || l.text == "" {
			continue
		}
		leaves = append(leaves, leaf{path: l.path, text: run + " " + quoteWord(l.text), kind: argkind.Shell})
	}
	return leaves
}
