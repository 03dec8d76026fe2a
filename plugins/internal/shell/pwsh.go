package shell

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// PowerShell and cmd.exe lines (issue 26, det65): Claude Code's PowerShell tool, `powershell
// -Command`, `pwsh -c`, `powershell -EncodedCommand` and `cmd /c` through the Bash tool. Most
// such lines parse as bash but name commands bash does not know (`Remove-Item -Recurse -Force
// $HOME`), so they were no finding. A line that reads as PowerShell or cmd is also judged in
// its POSIX equivalent (psToSh): the cmdlets and their common aliases mapped to the command
// that does the same (about_Aliases; Remove-Item -Recurse -Force is rm -rf,
// Invoke-WebRequest -OutFile is curl -o, Start-Process -Verb RunAs is sudo, cmd's rd /s /q is
// rm -rf), the home, temporary and system folders' names mapped to ~, /tmp and the system
// tree, and backslashes to slashes (PowerShell's escape is the backtick; cmd has none).
// Everything else is left as written, so an unknown cmdlet stays no finding.

// psLike matches what only a PowerShell or cmd line has: one of the cmdlets below, an
// environment drive ($env:NAME), a %NAME% variable of Windows' folders, cmd /c, a drive path,
// a .\ or ~\ path, gci, or a pipe into a ForEach-Object block or Remove-Item's aliases ri,
// del and erase (det67).
var psLike = lazyre.New(`(?i)\b(?:remove-item|invoke-(?:webrequest|restmethod|expression|command)|start-(?:process|bitstransfer)|get-(?:content|childitem)|set-(?:content|location|executionpolicy)|copy-item|move-item|compress-archive|format-volume|clear-disk|initialize-disk|new-object|out-file|add-content)\b|\$env:\w|%(?:userprofile|homepath|homedrive|appdata|localappdata|temp|tmp|systemroot|windir|programfiles|programdata)%|\bcmd(?:\.exe)?\s+/[ck]\b|\[(?:system\.)?net\.\w+\]::|(?:^|[\s"'=(])[a-z]:\\|(?:^|[\s"'(&])\.\\\w|(?:^|[\s"'=(])~\\\w|\bgci\b|\|\s*(?:%|foreach-object|foreach)\s*\{|\|\s*(?:ri|del|erase)(?:\s|$)`)

// psPaths maps Windows' names for the home, temporary and system folders (PowerShell's
// $HOME, $env:USERPROFILE, cmd's %USERPROFILE%, the path under C:\Users) to the POSIX ones
// the rest of the package judges. Applied in order, after backslashes became slashes.
var psPaths = []struct {
	re  *lazyre.Regexp
	new string
}{
	{lazyre.New(`(?i)\$\{?env:(?:userprofile|home)\}?|%userprofile%|\$env:homedrive\$env:homepath|%homedrive%%homepath%|\$\{?env:homepath\}?|%homepath%|\b[a-z]:/users/(?:[\w.$-]+|%username%|\$env:username)`), "~"},
	{lazyre.New(`(?i)\$\{?env:(?:appdata)\}?|%appdata%`), "~/AppData/Roaming"},
	{lazyre.New(`(?i)\$\{?env:(?:localappdata)\}?|%localappdata%`), "~/AppData/Local"},
	{lazyre.New(`(?i)\$\{?env:(?:temp|tmp)\}?|%te?mp%`), "/tmp"},
	// the system folder and its programs are /usr and /usr/bin (det67: /usr/Windows/System32
	// read as one program's folder, deleting it asked)
	{lazyre.New(`(?i)(?:\$\{?env:(?:systemroot|windir)\}?|%(?:systemroot|windir)%|\b[a-z]:/windows)/system32\b`), "/usr/bin"},
	{lazyre.New(`(?i)\$\{?env:(?:systemroot|windir)\}?|%(?:systemroot|windir)%|\b[a-z]:/windows\b`), "/usr"},
	{lazyre.New(`(?i)\$\{?env:(?:programfiles|programdata)\}?|%(?:programfiles|programdata)%|\b[a-z]:/program ?(?:files|data)(?: \(x86\))?`), "/opt"},
	{lazyre.New(`(?i)(^|[\s"'=(,])[a-z]:(?:/|$)`), "$1/"},
}

// psSeparator splits a line into its statements and pipeline stages, keeping each separator.
var psSeparator = lazyre.New(`\s*(?:;|&&|\|\||\||\n)\s*`)

// psAliases maps a cmdlet or an alias (lower case) to the POSIX command that does the same.
var psAliases = map[string]string{
	"remove-item": "rm", "ri": "rm", "del": "rm", "erase": "rm", "rd": "rm", "rmdir": "rm", "rm": "rm",
	"invoke-webrequest": "curl", "iwr": "curl", "invoke-restmethod": "curl", "irm": "curl", "wget": "curl", "curl": "curl", "start-bitstransfer": "curl",
	"get-content": "cat", "gc": "cat", "type": "cat", "cat": "cat",
	"copy-item": "cp", "copy": "cp", "cpi": "cp", "cp": "cp", "xcopy": "cp", "robocopy": "cp",
	"move-item": "mv", "move": "mv", "mi": "mv", "mv": "mv",
	"start-process": "start", "start": "start", "saps": "start",
	"compress-archive": "zip",
	"format-volume":    "mkfs", "clear-disk": "mkfs", "initialize-disk": "mkfs", "format": "mkfs",
	"set-content": "tee", "out-file": "tee", "add-content": "tee -a",
	"cmd": "cmd", "cmd.exe": "cmd",
	"get-childitem": "find", "gci": "find", "dir": "find", "ls": "find",
}

// psToSh returns the POSIX line that does what the PowerShell or cmd line text does, as far as
// the commands above go, and whether text reads as PowerShell or cmd at all (psLike; known:
// the text is PowerShell's whatever it looks like, the code of `pwsh -Command`).
func psToSh(text string, known bool) (string, bool) {
	if !known && !psLike.MatchString(text) {
		return "", false
	}
	t := strings.ReplaceAll(text, `\`, "/")
	for _, p := range psPaths {
		t = p.re.ReplaceAllString(t, p.new)
	}
	// A ForEach-Object block's statements run once for each item the pipe gives it: taken out
	// before the line is split at its separators, translated on their own (psEach).
	var blocks []string
	t = psBlock.Compiled().ReplaceAllStringFunc(t, func(m string) string {
		blocks = append(blocks, psBlock.FindStringSubmatch(m)[1])
		return " psblock" + strconv.Itoa(len(blocks)-1) + " "
	})
	parts, seps := psUnfiltered(psSeparator.Compiled().Split(t, -1), psSeparator.FindAllString(t, -1))
	var b strings.Builder
	for i, p := range parts {
		piped := i > 0 && strings.TrimSpace(seps[i-1]) == "|"
		b.WriteString(psStage(p, piped, blocks))
		if i < len(seps) {
			b.WriteString(" " + strings.TrimSpace(seps[i]) + " ")
			if strings.TrimSpace(seps[i]) == "" {
				b.WriteString("\n")
			}
		}
	}
	return b.String(), true
}

// psBlock matches a ForEach-Object block (`ForEach-Object { … }`, its aliases `%` and
// `foreach`, `-Process { … }`) without blocks inside it; group 1 is its statements.
var psBlock = lazyre.New(`(?i)(?:\bforeach-object|\bforeach|%)\s*(?:-process\s*)?\{([^{}]*)\}`)

// psItem matches the pipeline's current item in a block: $_ and $PSItem, with the property
// that names its path.
var psItem = lazyre.New(`(?i)\$(?:_|psitem)(?:\.(?:fullname|name|pspath))?\b`)

// psFilters are the cmdlets (and aliases) that pass on some of the items a pipe gives them,
// unchanged: Where-Object, Sort-Object, Select-Object.
var psFilters = set("where-object", "where", "?", "sort-object", "sort", "select-object", "select")

// psUnfiltered drops each filter stage (psFilters) after a pipe, with the pipe before it:
// `… | Where-Object { … } | Remove-Item` deletes what the stage before lists, less what the
// filter leaves out, so the stage after it is judged as fed by the stage before (det67).
// parts are a line's stages and statements, seps the separators between them.
func psUnfiltered(parts, seps []string) ([]string, []string) {
	var ps, ss []string
	for i, p := range parts {
		if f := strings.Fields(p); i > 0 && strings.TrimSpace(seps[i-1]) == "|" && len(f) > 0 && psFilters[strings.ToLower(f[0])] {
			ss = ss[:len(ss)-1]
			if i < len(seps) {
				ss = append(ss, seps[i])
			}
			continue
		}
		ps = append(ps, p)
		if i < len(seps) {
			ss = append(ss, seps[i])
		}
	}
	return ps, ss
}

// psStage translates one pipeline stage (issue 26, det67). What a stage after a pipe does
// with the items the pipe gives it is what xargs does with the lines: Remove-Item without a
// path deletes each item (`Get-ChildItem $HOME -Recurse | Remove-Item -Force` is `find ~ |
// xargs rm -f`), and a ForEach-Object block (psBlock, the placeholder `psblockN`) runs its
// statements on each, $_ standing for the item (`xargs -I{} sh -c '…'`).
func psStage(p string, piped bool, blocks []string) string {
	f := strings.Fields(p)
	if len(f) == 1 && strings.HasPrefix(f[0], "psblock") {
		n, err := strconv.Atoi(strings.TrimPrefix(f[0], "psblock"))
		if err != nil || n >= len(blocks) {
			return p
		}
		body := psItem.ReplaceAllString(blocks[n], "{}")
		var stmts []string
		for _, st := range psSeparator.Compiled().Split(body, -1) {
			if st = strings.TrimSpace(psStatement(st)); st != "" {
				stmts = append(stmts, st)
			}
		}
		if len(stmts) == 1 {
			return "xargs -I{} " + stmts[0]
		}
		return "xargs -I{} sh -c '" + strings.ReplaceAll(strings.Join(stmts, "; "), "'", `'\''`) + "'"
	}
	st := psStatement(p)
	if piped && (st == "rm -f " || st == "rm -rf ") {
		return "xargs " + st
	}
	return st
}

// psStatement translates one statement: its command by psAliases, its parameters by the
// command's POSIX options.
func psStatement(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "& ") // the call operator: `& .\x.exe`
	f := strings.Fields(s)
	if len(f) == 0 {
		return s
	}
	name := strings.ToLower(strings.Trim(f[0], `"'`))
	cmd, ok := psAliases[name]
	if !ok {
		return s
	}
	args := f[1:]
	switch cmd {
	case "rm":
		return psRemove(args)
	case "curl":
		return psFetch(args)
	case "start":
		return psStart(args)
	case "cp", "mv":
		return psCopy(cmd, args)
	case "zip":
		// Compress-Archive -Path P -DestinationPath D: zip -r D P
		src, dst := psParam(args, "-path", "-literalpath"), psParam(args, "-destinationpath")
		if src == "" {
			src = psPositional(args, 0)
		}
		if dst == "" {
			dst = psPositional(args, 1)
		}
		return "zip -r " + dst + " " + src
	case "mkfs":
		// a volume formatted or a disk cleared: nothing to undo
		return "mkfs.ntfs /dev/sda"
	case "cmd":
		for i, x := range args {
			if lx := strings.ToLower(x); lx == "/c" || lx == "/k" {
				return psCmdLine(strings.Trim(strings.Join(args[i+1:], " "), `"`))
			}
		}
		return s
	case "cat":
		return "cat " + strings.Join(psOperands(args, "-path", "-literalpath"), " ")
	case "find":
		return psList(args)
	}
	return cmd + " " + strings.Join(args, " ")
}

// cmdSeparator splits cmd.exe's statements (`&`, `&&`).
var cmdSeparator = lazyre.New(`\s*&&?\s*`)

// psCmdLine translates cmd.exe's command line (after /c): its statements joined by & and &&.
func psCmdLine(s string) string {
	var out []string
	for _, st := range cmdSeparator.Compiled().Split(s, -1) {
		out = append(out, psStatement(st))
	}
	return strings.Join(out, " ; ")
}

// psRemove: Remove-Item -Recurse -Force PATH (also -r, -fo, -rec; cmd's rd /s /q, del /s /q
// /f) is rm -rf PATH.
func psRemove(args []string) string {
	flags := "-f"
	var ops []string
	for i := 0; i < len(args); i++ {
		x := strings.ToLower(args[i])
		switch {
		case x == "/s" || x == "-r" || strings.HasPrefix(x, "-rec") || x == "-recurse:$true":
			flags = "-rf"
		case x == "/q" || x == "/f" || strings.HasPrefix(x, "-fo") || strings.HasPrefix(x, "-confirm"):
		case x == "-path" || x == "-literalpath" || x == "-lp":
		case x == "-include" || x == "-exclude" || x == "-filter":
			i++ // a pattern, not a path
		case strings.HasPrefix(x, "-") || strings.HasPrefix(x, "/") && len(x) == 2:
		default:
			ops = append(ops, args[i])
		}
	}
	return "rm " + flags + " " + strings.Join(ops, " ")
}

// psList: Get-ChildItem PATH lists PATH's items, as find does: `find PATH -maxdepth 1`,
// with -Recurse `find PATH`; -Include or -Filter PATTERN is `-name PATTERN` (det67).
func psList(args []string) string {
	dir := psParam(args, "-path", "-literalpath")
	if dir == "" {
		dir = psPositional(args, 0)
	}
	if dir == "" {
		dir = "."
	}
	out := "find " + dir
	rec := false
	for _, x := range args {
		if lx := strings.ToLower(x); lx == "-r" || strings.HasPrefix(lx, "-rec") || lx == "/s" {
			rec = true
		}
	}
	if !rec {
		out += " -maxdepth 1"
	}
	if pat := psParam(args, "-include", "-filter"); pat != "" {
		out += " -name " + pat
	}
	return out
}

// psFetch: Invoke-WebRequest URL -OutFile F is curl -o F URL; -InFile F (a file sent) is curl -T
// F URL; -Body is curl -d; a request that posts what the pipe gives it is curl --data-binary @-.
func psFetch(args []string) string {
	out := []string{"curl"}
	url := psParam(args, "-uri")
	if url == "" {
		url = psPositional(args, 0)
	}
	if f := psParam(args, "-outfile", "-destination"); f != "" {
		out = append(out, "-o", f)
	}
	if f := psParam(args, "-infile"); f != "" {
		out = append(out, "-T", f)
	}
	if b := psParam(args, "-body"); b != "" {
		out = append(out, "-d", b)
	}
	if m := strings.ToLower(psParam(args, "-method")); m == "post" || m == "put" {
		out = append(out, "--data-binary", "@-")
	}
	if f := psParam(args, "-source"); f != "" && url == "" { // Start-BitsTransfer -Source URL
		url = f
	}
	return strings.Join(append(out, url), " ")
}

// psStart: Start-Process X -ArgumentList A runs X A; -Verb RunAs runs it elevated (sudo).
func psStart(args []string) string {
	prog := psParam(args, "-filepath")
	if prog == "" {
		prog = psPositional(args, 0)
	}
	run := prog + " " + strings.Trim(psParam(args, "-argumentlist", "-args"), `"'`)
	if strings.EqualFold(psParam(args, "-verb"), "runas") {
		return "sudo " + run
	}
	return run
}

// psCopy: Copy-Item/Move-Item -Path S -Destination D -Recurse is cp -r S D.
func psCopy(cmd string, args []string) string {
	ops := psOperands(args, "-path", "-literalpath", "-destination")
	flag := ""
	for _, x := range args {
		if lx := strings.ToLower(x); strings.HasPrefix(lx, "-rec") || lx == "/s" || lx == "/e" || lx == "/mir" {
			flag = " -r"
		}
	}
	return cmd + flag + " " + strings.Join(ops, " ")
}

// psParam returns the value of the first of names (lower case) given: `-OutFile x`,
// `-OutFile:x`.
func psParam(args []string, names ...string) string {
	for i, x := range args {
		lx := strings.ToLower(x)
		for _, n := range names {
			if lx == n && i+1 < len(args) {
				return args[i+1]
			}
			if strings.HasPrefix(lx, n+":") {
				return x[len(n)+1:]
			}
		}
	}
	return ""
}

// psOperands returns the positional arguments and the values of the named path parameters.
func psOperands(args []string, pathParams ...string) []string {
	var ops []string
	for i := 0; i < len(args); i++ {
		lx := strings.ToLower(args[i])
		switch {
		case slices.Contains(pathParams, lx):
			if i+1 < len(args) {
				ops = append(ops, args[i+1])
			}
			i++
		case strings.HasPrefix(lx, "-"):
			if i+1 < len(args) && psValued(lx) {
				i++
			}
		default:
			ops = append(ops, args[i])
		}
	}
	return ops
}

// psPositional returns the n-th positional argument, skipping parameters and their values.
func psPositional(args []string, n int) string {
	ops := psOperands(args)
	if n < len(ops) {
		return ops[n]
	}
	return ""
}

// psValued reports whether a PowerShell parameter of the cmdlets above takes a value.
func psValued(p string) bool {
	switch p {
	case "-uri", "-outfile", "-infile", "-method", "-body", "-headers", "-contenttype", "-filepath", "-argumentlist",
		"-args", "-verb", "-destination", "-destinationpath", "-path", "-literalpath", "-include", "-exclude",
		"-filter", "-source", "-depth", "-usebasicparsing:$true", "-encoding", "-windowstyle", "-credential", "-timeoutsec":
		return p != "-usebasicparsing:$true"
	}
	return false
}

// psEncoded returns the PowerShell text of `-EncodedCommand B64` (-enc, -ec, -e and other
// prefixes of the parameter): base64 of UTF-16LE (about_PowerShell_exe), and whether args had
// one.
func psEncoded(args []string) (string, bool) {
	for i, x := range args {
		lx := strings.ToLower(x)
		if len(lx) < 2 || !strings.HasPrefix("-encodedcommand", lx) || i+1 >= len(args) {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(args[i+1])
		if err != nil || len(raw)%2 != 0 {
			return "", true
		}
		u := make([]uint16, len(raw)/2)
		for j := range u {
			u[j] = uint16(raw[2*j]) | uint16(raw[2*j+1])<<8
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

// windows judges t, the POSIX equivalent of a PowerShell or cmd line (psToSh), as a line of
// its own and adds what it finds to a's result.
func (a *analyzer) windows(t string) {
	b := &analyzer{vars: map[string]string{}, src: t, root: a.root}
	b.line(t, 0)
	if b.res.ParseErr != nil {
		return
	}
	a.res.Findings = append(a.res.Findings, b.res.Findings...)
	if room := MaxCommands - len(a.res.Commands); room > 0 {
		a.res.Commands = append(a.res.Commands, b.res.Commands[:min(room, len(b.res.Commands))]...)
	}
	a.res.Files = append(a.res.Files, b.res.Files...)
	a.res.Writes = append(a.res.Writes, b.res.Writes...)
	a.res.Network = a.res.Network || b.res.Network
	a.res.Incomplete = a.res.Incomplete || b.res.Incomplete
}

// psTLSOff matches PowerShell turning certificate checks off: a validation callback that
// accepts every certificate, or Invoke-WebRequest's -SkipCertificateCheck.
var psTLSOff = lazyre.New(`(?i)servercertificatevalidationcallback\s*=|-skipcertificatecheck\b`)
