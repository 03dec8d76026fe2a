package shell

import (
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Interpreter one-liners (python -c, perl -e, ruby -e, node -e, php -r, awk programs, and
// heredocs or written files they run) are read token by token, not parsed: see README.md,
// "Why no language parser". code finds calls by name and reads the string literals of their
// arguments, which is what a one-liner's danger rests on: the shell text handed to
// system()/subprocess (analysed again as shell), the path handed to rmtree/unlink, and eval
// of downloaded text.

var (
	// shellCall matches a call that runs its argument through a shell or as an argv, in the
	// languages above; the argument list follows the match.
	shellCall = lazyre.New(`(?:\bos\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?)|\bsubprocess\.(?:run|call|check_call|check_output|getoutput|getstatusoutput)|\bPopen|\bcommands\.getoutput|\bpty\.spawn|\bchild_process\.|\b(?:execSync|execFileSync|spawnSync|execFile|exec|spawn)|\bshell_exec|\bpassthru|\bproc_open|\bpopen|\bsystem|\bIO\.popen|\bOpen3\.\w+|\bKernel\.(?:system|exec|spawn)|\bRuntime\.getRuntime\(\)\.exec|\bos\.execute|\bio\.popen|\bqx)\s*[(\[{/]`)
	// deleteCall matches a call that deletes the paths in its argument list.
	deleteCall = lazyre.New(`(?:\.(?:rmSync|rmdirSync|unlinkSync)|\b(?:shutil\.rmtree|rmtree|remove_tree|os\.(?:remove|unlink|rmdir|removedirs)|fs\.(?:rm|rmdir|unlink)|(?:fs\.)?promises\.(?:rm|rmdir|unlink)|rimraf(?:\.sync)?|FileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry|rm)|File\.(?:delete|unlink)|Dir\.(?:delete|rmdir)|file\.remove|unlink|rmdir))\s*\(`)
	// pathDelete matches pathlib's Path(p).unlink() / .rmdir().
	pathDelete = lazyre.New(`Path\(([^)]*)\)\.(?:unlink|rmdir)\(`)
	// codeEval matches evaluation of text as code.
	codeEval = lazyre.New(`(?:^|[^.\w])(?:eval|exec|instance_eval|class_eval|Function)\s*\(|\bnew\s+Function\s*\(|\bvm\.runIn\w+\(|[(,]\s*eval\s*\)|\bexec\s+\w|\beval\s+\$|\beval\s*\{`)
	// codeFetch matches fetching text from the network.
	codeFetch = lazyre.New(`\burlopen\s*\(|\brequests\.(?:get|post)\s*\(|\bhttpx\.get\s*\(|\bfetch\s*\(|\bhttps?\.get\s*\(|\bNet::HTTP\b|\bURI\.open\b|\bopen-uri\b|\bLWP::Simple\b|\bget\s*\(\s*["']https?:|\bfile_get_contents\s*\(\s*["']https?:|\bcurl_exec\b|\bHTTP::Tiny\b|\baxios\.get\b|\bopen\s*\(\s*["']https?:`)
	// codeDecode matches decoding base64, hex or compressed text.
	codeDecode = lazyre.New(`\bb64decode\b|\bb32decode\b|\batob\s*\(|['"]base64['"]|\bdecode_base64\b|\bbase64_decode\b|\bunpack\s*\(\s*["']m|\bBase64\.decode64\b|\bunhexlify\b|\bfromhex\b|\bzlib\.decompress\b|\bcodecs\.decode\b|\bgzinflate\b|\bstr_rot13\b`)
	// codeConnect matches opening a network socket, to connect or to listen: Python's socket
	// (under any name the module is imported as, or loaded by name: `__import__("socket")`,
	// `a("socket").socket`), Perl's socket() on PF_INET or IO::Socket::INET, Ruby's TCPSocket and
	// TCPServer, PHP's fsockopen, stream_socket_client and socket_create, Node's net module,
	// Python's create_connection (under any module name: `import socket as s`, or imported by
	// name: `from socket import create_connection as cc`),
	// Lua's socket.tcp, Go's net.Dial and net.Listen, gawk's /inet/tcp special files, bash's
	// /dev/tcp.
	codeConnect = lazyre.New(`\(\s*["']socket["']\s*\)|\bTCPServer\.(?:open|new)\b|\bnet\.(?:Dial|Listen)\w*\s*\(|\b\w+\.socket\s*\(|\bsocket\.tcp\s*\(|require\s*\(?\s*["']socket["']|/inet[46]?/(?:tcp|udp)/|\b\w+\.create_connection\s*\(|\bfrom\s+socket\s+import\s[^;\n]*\b(?:socket|create_connection)\b|\bsocket\s*\(\s*\w+\s*,\s*(?:PF|AF)_INET|\bIO::Socket::INET\b|\bTCPSocket\.(?:open|new)\b|\bSocket\.(?:tcp|new)\b|\bfsockopen\s*\(|\bstream_socket_client\s*\(|\bsocket_create\s*\(|\bnet\.(?:connect|createConnection)\s*\(|\bnew\s+net\.Socket\b|require\(\s*["']net["']\s*\)|/dev/(?:tcp|udp)/`)
	// codeShellOnSocket matches handing a shell or the process's own descriptors to a
	// connection: a shell's path or `sh -i` as a string, cmd.exe (under any folder), dup2, fdopen, Perl's open(STDIN, ">&S"), a
	// redirection to a descriptor number in a command string, piping a child's streams, gawk's
	// coprocess read (`cmd |& getline`).
	codeShellOnSocket = lazyre.New(`["'](?:/bin/|/usr/bin/)?(?:ba|z|da|k|a)?sh(?:\s+-i)?["']|\b(?:ba)?sh\s+-i\b|["'](?:[^"'\s]*[\\/])?cmd(?:\.exe)?["']|\bpowershell\b|\bdup2?\s*\(|\bfdopen\s*\(|\|&\s*getline|\bopen\s*\(\s*STD(?:IN|OUT|ERR)\s*,\s*["']?[<>+]*&|[<>]&\s*(?:%d|\d|\$)|\.pipe\s*\(\s*\w+\.std(?:in|out)\b|\bstdio\s*:\s*\[?\s*\w+`)
	// homeExpr matches a language's way of naming the home directory.
	homeExpr = lazyre.New(`expanduser\(\s*["']~|environ\[\s*["']HOME|environ\.get\(\s*["']HOME|getenv\(\s*["']HOME|process\.env\.HOME|\bhomedir\(\)|Path\.home\(\)|ENV\[\s*["']HOME|\$ENV\{\s*["']?HOME|Dir\.home|\$_SERVER\[\s*["']HOME`)
	// literal matches a quoted string literal ('...', "...", `...`) without escapes of its
	// own quote.
	literal = lazyre.New(`'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"`)
)

// code judges inline code of language lang (python, perl, ruby, node, php, awk, ...).
func (a *analyzer) code(lang, src, line string) {
	if lang == "pwsh" || lang == "powershell" {
		a.powershell(src, line)
		if t, ok := psToSh(src, true); ok && a.depth < MaxDepth {
			a.line(t, a.depth+1) // pwsh.go
		}
		return
	}
	if tclLang(lang) {
		a.tcl(src, line, 0) // tcl.go
		return
	}
	src = normalizeCode(src) // codenorm.go
	switch {
	case rLang(lang):
		a.rCode(src) // tcl.go
	case lang == "julia":
		a.juliaCode(src, line)
	}
	if codeEnv.MatchString(src) && codeNet.MatchString(src) {
		a.together("exfil/code_env", "inline code sends the environment over the network", line, 0.95)
	} else if codeFile.MatchString(src) && codeNet.MatchString(src) {
		a.together("exfil/code_file", "inline code sends a secret file over the network", line, 0.95)
	}
	// A reverse shell: the code connects out and hands a shell, or its own stdin and stdout,
	// to the connection (PayloadsAllTheThings' Python, Perl, Ruby, PHP and Node one-liners).
	// A connection alone (a port check) or a shell alone (`pty.spawn("/bin/bash")`) is not one.
	// A bind or reverse shell that runs what the connection sends also has no shell string:
	// the command handed to popen/system/Popen is a variable (`IO.popen(cmd,"r")` after
	// `cmd=c.gets`, `sp.Popen(d,shell=True)` after `d=c.recv(1024)`, `popen("$in","r")`), so the
	// code opening a socket and running a command it does not spell out is one too (runsUnwritten).
	socket := containsAny(src, "socket", "Socket", "connect", "/dev/tcp", "/dev/udp", "sockopen", "net.", "/inet", "TCPServer") &&
		codeConnect.MatchString(src)
	if socket && (codeShellOnSocket.MatchString(src) || runsUnwritten(lang, src)) {
		a.together("exec/reverse_shell", "inline code opens a network socket and hands a shell, or the commands it reads, to the connection", line, 0.95)
	}
	// The substring tests skip regular expressions that cannot match: they backtrack, and
	// most one-liners hold none of these words.
	if containsAny(src, "eval", "exec", "Function", "runIn") && codeEval.MatchString(src) {
		if codeFetch.MatchString(src) {
			a.together("exec/download_run", "inline code evaluates text it downloads", line, 0.95)
		}
		if codeDecode.MatchString(src) {
			a.together("exec/decode_run", "inline code evaluates text it decodes (obfuscated)", line, 0.9)
		}
	}
	// Shell text handed to system(), subprocess, child_process, backticks: analysed as shell.
	if containsAny(src, "system", "popen", "Popen", "exec", "spawn", "subprocess", "child_process", "shell_exec", "passthru", "proc_open", "Open3", "qx", "getoutput") {
		for _, loc := range shellCall.FindAllStringIndex(src, 16) {
			args := balanced(src[loc[1]-1:])
			if cmd := shellText(args); cmd != "" {
				a.line(cmd, a.depth+1)
			}
		}
	}
	if (lang == "perl" || lang == "ruby") && containsAny(src, "system", "exec", "spawn") {
		// Perl and Ruby call a function without parentheses: `exec "curl URL | bash"`,
		// `system 'rm -rf ~'` (perlfunc system/exec, Ruby's Kernel#system/#exec; det67).
		for _, m := range bareCall.FindAllStringSubmatch(src, 16) {
			a.line(m[1]+m[2], a.depth+1)
		}
	}
	if (lang == "perl" || lang == "ruby" || lang == "php") && containsAny(src, "`", "%x(") {
		for _, m := range backticks.FindAllStringSubmatch(src, 16) {
			a.line(m[1]+m[2], a.depth+1)
		}
	}
	if lang == "awk" && strings.Contains(src, "|") {
		// print "cmd" | "sh"
		if m := awkPipe.FindStringSubmatch(src); m != nil {
			a.line(strings.Join(literals(m[1]), ""), a.depth+1)
		}
	}
	// Literals decoded in place (`os.system(bytes.fromhex('726d…').decode())`): the code is
	// read again with the text they decode to (codenorm.go).
	if dec, ok := decodeLiterals(src); ok {
		a.code(lang, dec, line)
	}
	// Deletes of paths outside the project.
	if !containsAny(src, "rm", "unlink", "remove", "delete", "rimraf") {
		return
	}
	for _, loc := range deleteCall.FindAllStringIndex(src, 16) {
		args := balanced(src[loc[1]-1:])
		if len(literals(args)) == 0 && !homeExpr.MatchString(args) {
			// The path is a variable: when the code walks a directory tree, what it deletes
			// is what the walk finds under its root (codenorm.go walkRoots).
			for _, r := range walkRoots(src) {
				q := `"` + r + `"`
				if strings.Contains(r, `"`) {
					q = "'" + r + "'"
				}
				a.codeDelete("rmtree", q, line)
			}
			continue
		}
		a.codeDelete(src[loc[0]:loc[1]], args, line)
	}
	if strings.Contains(src, "Path(") {
		for _, m := range pathDelete.FindAllStringSubmatch(src, 16) {
			a.codeDelete("unlink", m[1], line)
		}
	}
}

// runsUnwritten reports whether code hands a shell-running call (shellCall) a command it does
// not write out: a variable or expression (`IO.popen(cmd,"r")`, `subprocess.call(d)`), a
// string that is only one interpolated variable (`popen("$in","r")`, `system("#{c}")`), or an
// argv list whose program is not written (`[d]`) or is a shell given a command that is not
// (`["sh","-c",d]`), or backticks that interpolate a variable (Perl, PHP, Ruby: `#{c}`). A
// literal command line, or a list naming its program (its arguments may
// be variables: `["server","--port",str(port)]`), is not one: it is judged as shell text.
func runsUnwritten(lang, src string) bool {
	interpolates := lang == "perl" || lang == "php" || lang == "ruby"
	if interpolates && containsAny(src, "`", "%x(") {
		// Backticks (%x()) run their text as shell; an interpolated variable in them
		// (`#{c}`, `$c`) runs what the variable holds: `s.puts(`#{c}`)` after `c=s.gets`.
		for _, m := range backticks.FindAllStringSubmatch(src, 16) {
			if backtickVar.MatchString(m[1] + m[2]) {
				return true
			}
		}
	}
	if !containsAny(src, "system", "popen", "Popen", "exec", "spawn", "subprocess", "child_process", "shell_exec", "passthru", "proc_open", "Open3", "qx", "getoutput") {
		return false
	}
	for _, loc := range shellCall.FindAllStringIndex(src, 16) {
		parts := splitArgs(balanced(src[loc[1]-1:]))
		if len(parts) == 0 {
			continue
		}
		first := strings.TrimSpace(parts[0])
		switch {
		case strings.HasPrefix(first, "["):
			if unwrittenArgv(splitArgs(balanced(first)), interpolates) {
				return true
			}
		case first == "" || strings.HasPrefix(first, "{"):
		case unwrittenText(first, interpolates):
			return true
		}
	}
	return false
}

// unwrittenArgv reports whether an argv list's program is not written out, or is a shell or
// an interpreter (sh -c, python3 -c, cmd /c) given an element that is not.
func unwrittenArgv(elems []string, interpolates bool) bool {
	if len(elems) == 0 || strings.TrimSpace(elems[0]) == "" {
		return false
	}
	if unwrittenText(elems[0], interpolates) {
		return true
	}
	prog := interpLang(base(strings.ToLower(strings.ReplaceAll(strings.Join(literals(elems[0]), ""), `\`, "/"))))
	if interpreter(prog) || prog == "cmd" {
		for _, e := range elems[1:] {
			if unwrittenText(e, interpolates) {
				return true
			}
		}
	}
	return false
}

// unwrittenText reports whether an argument's text is not all written out: outside its string
// literals (a one-letter prefix such as r"", b"" aside) it holds a name or a variable (`cmd`,
// `"sh -c " + d`, `"%s" % d`, `f(x)`), or a literal interpolates one (`"$in"`, `"#{c}"`,
// f"{d}"; interpolates: the language expands variables in double quotes, Perl, PHP, Ruby).
func unwrittenText(e string, interpolates bool) bool {
	e = strings.TrimSpace(e)
	if e == "" {
		return false
	}
	rest := literal.ReplaceAllString(strPrefix.ReplaceAllString(e, "$1"), "")
	if strings.IndexFunc(rest, nameRune) >= 0 {
		return true
	}
	return fString.MatchString(e) || interpolates && interpolation.MatchString(e)
}

var (
	// strPrefix matches a string literal's one- or two-letter prefix (r"", b"", f"", rb"").
	strPrefix = lazyre.New(`\b[rbfuRBFU]{1,2}(["'])`)
	// interpolation matches a variable interpolated into a double-quoted or backquoted literal
	// (Perl, PHP, Ruby): "$in", "${cmd}", "#{c}".
	interpolation = lazyre.New(`"[^"]*(?:\$\{?\w|#\{)[^"]*"|` + "`[^`]*\\$\\{?\\w[^`]*`")
	// fString matches a Python f-string with a replacement field: f"{d}".
	fString = lazyre.New(`\b[fF]["'][^"']*\{\w`)
)

// nameRune reports whether r can start a name or a variable.
func nameRune(r rune) bool {
	return r == '_' || r == '$' || r == '@' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// containsAny reports whether s contains one of words.
func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// bareCall matches Perl's and Ruby's system, exec or spawn called without parentheses on one
// string literal; group 1 or 2 is its text.
var bareCall = lazyre.New(`(?:^|[^.\w$@:]|\bKernel\.)(?:system|exec|spawn)\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')`)

var backticks = lazyre.New("`([^`]*)`|%x\\(([^)]*)\\)")

// backtickVar matches a variable interpolated into backtick text: `#{c}`, `$c`, `${c}`.
var backtickVar = lazyre.New(`#\{|\$\{?\w`)

var awkPipe = lazyre.New(`print[f]?\s+(.*?)\|\s*"(?:/bin/)?(?:sh|bash|zsh)"`)

// together adds a finding that rests on two things appearing in the same code (the
// environment and a network call, a socket and a shell): in a one-liner they work together; in a
// whole source file (AnalyzeCode) they may be a thousand lines apart, so it is a question.
func (a *analyzer) together(rule, reason, line string, score float64) {
	if a.wholeFile {
		a.ask(rule, reason, line, score)
		return
	}
	a.add(rule, reason, line, score)
}

// codeDelete judges a delete call with argument text args.
func (a *analyzer) codeDelete(call, args, line string) {
	rec := strings.Contains(call, "rmtree") || strings.Contains(call, "remove_tree") || strings.Contains(call, "rm_r") ||
		strings.Contains(call, "rimraf") || strings.Contains(call, "removedirs") || strings.Contains(args, "recursive")
	var paths []string
	lits := literals(args)
	if homeExpr.MatchString(args) {
		// The home directory itself, or a file under it named by the literals.
		paths = append(paths, "~")
		var under []string
		for _, l := range lits {
			if strings.Contains(l, "/") || strings.HasPrefix(l, ".") {
				under = append(under, strings.Trim(l, "/~"))
			}
		}
		if len(under) > 0 {
			if a.wholeFile {
				// A whole file's `expanduser('~/.cache/app')` names the folder below the
				// home, not the home itself (one-liners keep the stricter reading).
				paths = paths[:0]
			}
			paths = append(paths, "~/"+strings.Join(under, "/"))
		}
		rec = rec || strings.Contains(call, "rmdir")
	}
	if len(lits) > 0 && !strings.HasPrefix(lits[0], "HOME") {
		paths = append(paths, lits[0])
	}
	for _, p := range paths {
		if a.outsideAt(p, rec) {
			if a.wholeFile {
				// A whole file names its path, as rm's words do (AnalyzeFile's wipesTop).
				line = "delete " + p
			}
			a.add("destroy/code_delete", "inline code deletes files outside the project", line, 0.95)
			return
		}
	}
}

// balanced returns the text inside the bracket s starts with ((, [ or {), up to its match,
// skipping quoted strings; the rest of s when it does not close.
func balanced(s string) string {
	if s == "" {
		return ""
	}
	open := s[0]
	closer := map[byte]byte{'(': ')', '[': ']', '{': '}', '/': '/'}[open]
	if closer == 0 {
		return s
	}
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == open && open != closer:
			depth++
		case c == closer:
			if open == closer && i == 0 {
				depth++
				continue
			}
			depth--
			if depth == 0 {
				return s[1:i]
			}
		}
	}
	return s[1:]
}

// literals returns the string literals in code text, unescaped the simple way.
func literals(s string) []string {
	var out []string
	for _, m := range literal.FindAllStringSubmatch(s, 64) {
		v := m[1] + m[2]
		v = strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`, `\n`, "\n").Replace(v)
		out = append(out, v)
	}
	return out
}

// shellText turns the arguments of a shell-running call into shell text: a string (literals
// joined by + or .) is a command line; a list (["rm", "-rf", "/"]), a name then a list
// (spawn("rm", ["-rf", "/"])) or several plain strings (perl's system LIST) is an argv,
// quoted word by word.
func shellText(args string) string {
	parts := splitArgs(args)
	if len(parts) == 0 {
		return ""
	}
	var argv []string
	first := strings.TrimSpace(parts[0])
	switch {
	case strings.HasPrefix(first, "["):
		argv = literals(first)
	case len(parts) > 1 && strings.HasPrefix(strings.TrimSpace(parts[1]), "["):
		argv = append([]string{strings.Join(literals(first), "")}, literals(parts[1])...)
	case len(parts) > 1 && allLiterals(parts):
		for _, p := range parts {
			argv = append(argv, strings.Join(literals(p), ""))
		}
	default:
		return strings.Join(literals(first), "")
	}
	words := make([]string, 0, len(argv))
	for _, w := range argv {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

// splitArgs splits an argument list at its top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

// allLiterals reports whether every part is one quoted string.
func allLiterals(parts []string) bool {
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if loc := literal.FindStringIndex(p); loc == nil || loc[0] != 0 || loc[1] != len(p) {
			return false
		}
	}
	return true
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./~=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// awkProgram returns the program text of an awk command line: the first operand after the
// options (-F fs, -v var=val); "" when the program comes from a file (-f).
func awkProgram(args []string) string {
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch {
		case x == "-f" || strings.HasPrefix(x, "--file"):
			return ""
		case x == "-F" || x == "-v":
			i++
		case strings.HasPrefix(x, "-") && len(x) > 1:
		default:
			return x
		}
	}
	return ""
}
