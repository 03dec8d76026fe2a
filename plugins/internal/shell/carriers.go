package shell

import (
	"path"
	"slices"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// Programs that run a command given to them as an option or an operand (issue 26 class 1:
// "wrappers"): what they run is judged as the line it is. Each one's manual says so:
// watch(1) ("runs command repeatedly"; `sh -c` unless -x), script(1) -c, flock(1) -c and
// `flock FILE COMMAND`, GNU parallel's `COMMAND ::: ARGUMENTS`, ssh_config(5) ProxyCommand and
// LocalCommand, rsync(1) -e, git-config(1)'s core.pager, core.sshCommand, core.editor,
// core.fsmonitor, sequence.editor, diff.external and `!`-aliases (with -c, or set by `git
// config`, run by the next git command), GNU tar's --checkpoint-action=exec, --to-command,
// --use-compress-program/-I, --rsh-command, --info-script/-F, --new-volume-script, zip(1) -TT,
// vim's `-c ':!…'` and `+':!…'`, less's `+!…`, `docker exec CONTAINER COMMAND` and `kubectl
// exec POD -- COMMAND`.

// wrapperValues are a wrapper's short options that take the next word as their value when it
// is not attached, and its long options that do (nice(1), ionice(1), timeout(1), stdbuf(1),
// env(1), bash's exec, caffeinate(8), taskset(1), chrt(1)): `nice -n 19 rm -rf ~` runs rm.
var wrapperValues = map[string]struct {
	short string
	long  []string
}{
	"nice":       {"n", []string{"--adjustment"}},
	"ionice":     {"cnpPtu", []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"timeout":    {"sk", []string{"--signal", "--kill-after"}},
	"stdbuf":     {"ioe", []string{"--input", "--output", "--error"}},
	"env":        {"uCS", []string{"--unset", "--chdir", "--split-string"}},
	"exec":       {"a", nil},
	"caffeinate": {"tw", nil},
	"taskset":    {"", nil},
	"chrt":       {"", nil},
	"unshare":    {"RwSG", []string{"--root", "--wd", "--setuid", "--setgid"}}, // unshare(1)
}

// wrapperPositional: wrappers whose first operand is a setting, not the command (timeout's
// duration, taskset's mask or list, chrt's priority).
var wrapperPositional = map[string]bool{"timeout": true, "taskset": true, "chrt": true}

// dropWrapperOptions returns what a wrapper runs: its options (and their values) and its
// setting operand dropped; env's NAME=VALUE words and -S string (split into words) too.
func dropWrapperOptions(name string, rest []string) []string {
	vals := wrapperValues[name]
	var split []string
	for len(rest) > 0 {
		x := rest[0]
		switch {
		case x == "--":
			rest = rest[1:]
			goto operands
		case name == "env" && (x == "-S" || x == "--split-string") && len(rest) > 1:
			split = append(split, strings.Fields(rest[1])...)
			rest = rest[2:]
		case name == "env" && strings.HasPrefix(x, "-S") && len(x) > 2:
			split = append(split, strings.Fields(x[2:])...)
			rest = rest[1:]
		case name == "env" && strings.HasPrefix(x, "--split-string="):
			split = append(split, strings.Fields(strings.TrimPrefix(x, "--split-string="))...)
			rest = rest[1:]
		case strings.HasPrefix(x, "--"):
			n := 1
			for _, l := range vals.long {
				if x == l && len(rest) > 1 {
					n = 2
				}
			}
			rest = rest[n:]
		case strings.HasPrefix(x, "-") && len(x) > 1:
			n := 1
			if len(x) == 2 && strings.IndexByte(vals.short, x[1]) >= 0 && len(rest) > 1 {
				n = 2
			}
			rest = rest[n:]
		case name == "env" && strings.Contains(x, "="):
			rest = rest[1:]
		default:
			goto operands
		}
	}
operands:
	if wrapperPositional[name] && len(rest) > 0 && len(split) == 0 {
		rest = rest[1:]
	}
	return append(split, rest...)
}

// carrier judges the command a program runs for its caller (the list above); it reports
// whether name is one.
func (a *analyzer) carrier(name string, args []string, line string) bool {
	switch name {
	case "watch":
		i, exec := 0, false
		for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			switch x := args[i]; {
			case x == "-x" || x == "--exec":
				exec = true
			case (x == "-n" || x == "--interval" || x == "-q" || x == "--equexit") && i+1 < len(args):
				i++
			}
		}
		if exec {
			a.command(args[i:])
		} else if i < len(args) {
			a.line(strings.Join(args[i:], " "), a.depth+1)
		}
	case "script":
		for i, x := range args {
			// -c, or -c last in a group of short flags (`script -qc CMD`)
			short := len(x) > 1 && x[0] == '-' && x[1] != '-' && x[len(x)-1] == 'c'
			if (short || x == "--command") && i+1 < len(args) {
				a.line(args[i+1], a.depth+1)
			} else if v, ok := strings.CutPrefix(x, "--command="); ok {
				a.line(v, a.depth+1)
			}
		}
	case "flock":
		i := 0
		for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			if (args[i] == "-w" || args[i] == "--timeout" || args[i] == "-E" || args[i] == "--conflict-exit-code") && i+1 < len(args) {
				i++
			}
		}
		if i+1 < len(args) { // the lock file, then -c COMMAND or COMMAND ARGS
			if rest := args[i+1:]; (rest[0] == "-c" || rest[0] == "--command") && len(rest) > 1 {
				a.line(rest[1], a.depth+1)
			} else {
				a.command(rest)
			}
		}
	case "parallel":
		for i, x := range args {
			if x == ":::" || x == "::::" {
				cmd := args[:i]
				for len(cmd) > 0 && strings.HasPrefix(cmd[0], "-") {
					cmd = cmd[1:]
				}
				if len(cmd) > 0 {
					a.command(append(append([]string(nil), cmd...), args[i+1:]...))
				}
				break
			}
		}
	case "ssh", "scp", "sftp":
		for i := range args {
			v, found := optValue(args, i, "-o", "-o")
			if !found {
				continue
			}
			key, val, ok := strings.Cut(v, "=")
			if !ok {
				key, val, _ = strings.Cut(v, " ")
			}
			if k := strings.ToLower(strings.TrimSpace(key)); k == "proxycommand" || k == "localcommand" {
				a.line(strings.TrimSpace(val), a.depth+1)
			}
		}
		if name == "ssh" {
			a.sshRemote(args)
		}
		return false // ssh's own checks still run
	case "rsync":
		for i, x := range args {
			if (x == "-e" || x == "--rsh") && i+1 < len(args) {
				a.line(args[i+1], a.depth+1)
			} else if v, ok := strings.CutPrefix(x, "--rsh="); ok {
				a.line(v, a.depth+1)
			}
		}
		return false
	case "tar":
		for i, x := range args {
			for _, p := range []string{"--checkpoint-action=exec=", "--to-command=", "--use-compress-program=", "--rsh-command=", "--info-script=", "--new-volume-script="} {
				if v, ok := strings.CutPrefix(x, p); ok {
					a.line(v, a.depth+1)
				}
			}
			if (x == "-I" || x == "-F" || x == "--to-command" || x == "--use-compress-program" || x == "--info-script") && i+1 < len(args) {
				a.line(args[i+1], a.depth+1)
			}
		}
		return false
	case "zip":
		for i, x := range args {
			if (x == "-TT" || x == "--unzip-command") && i+1 < len(args) {
				a.line(args[i+1], a.depth+1)
			}
		}
		return false
	case "vim", "vi", "nvim", "view", "ex", "less":
		for i := range args {
			v, found := optValue(args, i, "-c", "+")
			if !found {
				continue
			}
			if c, ok := strings.CutPrefix(strings.TrimLeft(v, ": "), "!"); ok {
				a.line(c, a.depth+1)
			}
		}
		return false
	case "systemd-run":
		// systemd-run(1) runs COMMAND as a transient service or scope, now or on a timer
		// (--on-calendar, --on-active): judged as run here. Its options taking a value in
		// the next word are skipped with it.
		i := 0
		for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			if systemdRunValue[args[i]] {
				i++
			}
		}
		if i < len(args) {
			a.command(args[i:])
		}
	case "osascript":
		// AppleScript's `do shell script "…"` (Apple's Technical Note TN2065) runs its text
		// in sh.
		for i, x := range args {
			if x == "-e" && i+1 < len(args) {
				for _, m := range doShellScript.FindAllStringSubmatch(args[i+1], 8) {
					a.line(strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[1]), a.depth+1)
				}
			}
		}
		return false
	case "at", "batch":
		// at(1) -f FILE runs FILE's commands later with sh; what it reads from a pipe or a
		// here-string is judged where that text is known (pipe, fedInput).
		for i, x := range args {
			if x == "-f" && i+1 < len(args) {
				a.runScript(args[i+1], "sh", line)
			}
		}
		return false
	case "chroot":
		// chroot(8): `chroot [OPTION…] NEWROOT [COMMAND [ARG…]]` runs COMMAND with NEWROOT as
		// its root. Under `/` that is this system's command; under another root its paths are
		// that tree's, which a question settles as for a container's (execIn).
		i := 0
		for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			if (args[i] == "--userspec" || args[i] == "--groups") && i+1 < len(args) {
				i++
			}
		}
		if i+1 < len(args) {
			if path.Clean(args[i]) != "/" {
				a.inContainer++
				defer func() { a.inContainer-- }()
			}
			a.command(args[i+1:])
		}
	case "tmux":
		a.tmux(args)
	case "screen":
		a.screen(args)
	case "sqlite3":
		// sqlite3(1)'s dot-commands .shell and .system run their text in a shell, given as an
		// operand, with -cmd, or on standard input (given).
		for _, x := range args {
			a.sqliteDot(x)
		}
		return false
	case "docker", "podman", "kubectl", "oc":
		return a.execIn(name, args)
	case "git":
		i := 0
		for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			switch x := args[i]; {
			case x == "-c" && i+1 < len(args):
				i++
				if k, v, ok := strings.Cut(args[i], "="); ok {
					a.gitConfigCommand(k, v)
				}
			case x == "-C" || x == "--git-dir" || x == "--work-tree" || x == "--namespace":
				i++
			}
		}
		if i < len(args) && args[i] == "config" {
			var ops []string
			for j := i + 1; j < len(args); j++ {
				switch x := args[j]; {
				case x == "-f" || x == "--file" || x == "--blob" || x == "--type" || x == "--default" || x == "--comment":
					j++
				case strings.HasPrefix(x, "-"):
				default:
					ops = append(ops, x)
				}
			}
			if len(ops) == 2 { // git config KEY VALUE
				a.gitConfigCommand(ops[0], ops[1])
			} else if len(ops) == 3 && ops[0] == "set" { // git config set KEY VALUE (git 2.46)
				a.gitConfigCommand(ops[1], ops[2])
			}
		}
		return false
	default:
		return false
	}
	return true
}

// systemdRunValue are systemd-run(1)'s options whose value is the next word.
var systemdRunValue = set("-u", "--unit", "-p", "--property", "--description", "--slice", "-E", "--setenv",
	"--uid", "--gid", "--nice", "-H", "--host", "-M", "--machine", "--working-directory", "--on-active",
	"--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property",
	"--path-property", "--socket-property", "--service-type", "--expand-environment")

// doShellScript matches AppleScript's `do shell script "TEXT"`.
var doShellScript = lazyre.New(`do shell script\s+"((?:[^"\\]|\\.)*)"`)

// optValue returns the value of the option at args[i]: the next word after flag, or the rest
// of a word that starts with attached (`-o ProxyCommand=…`, `-oProxyCommand=…`, `+cmd`).
func optValue(args []string, i int, flag, attached string) (string, bool) {
	switch x := args[i]; {
	case x == flag && i+1 < len(args):
		return args[i+1], true
	case x != flag && strings.HasPrefix(x, attached):
		return x[len(attached):], true
	}
	return "", false
}

// gitCommandKeys are git configuration keys whose value git runs as a shell command.
var gitCommandKeys = map[string]bool{"core.pager": true, "core.sshcommand": true, "core.editor": true,
	"core.fsmonitor": true, "sequence.editor": true, "diff.external": true, "credential.helper": true,
	"core.askpass": true, "gpg.program": true}

// gitConfigCommand judges a configuration value git will run (`git -c core.pager='…' log`,
// `git config core.fsmonitor '…'`): a key of gitCommandKeys, an `!`-alias, `pager.*`.
func (a *analyzer) gitConfigCommand(key, val string) {
	k := strings.ToLower(key)
	switch {
	case (k == "credential.helper" || strings.HasPrefix(k, "credential.") && strings.HasSuffix(k, ".helper")) && strings.HasPrefix(val, "!"):
		// A helper git runs with every credential it stores (gitcredentials(7), "store"
		// action: the password on the helper's standard input). One that sends what it reads
		// over the network is refused; one that appends it to a file asks (`!f() { cat >>
		// /tmp/c; }; f`); one that only prints a token (`!f() { echo "password=$T"; }; f`,
		// CI's set-up) is judged by its text alone, whose output goes to git, not to the
		// conversation (as a command substitution's does: secretPrint).
		a.inSubst++
		a.line(val[1:], a.depth+1)
		a.inSubst--
		switch body := val[1:]; {
		case credSend.MatchString(body):
			a.add("exfil/credential_helper", "makes git hand the credentials it stores to a command that sends them over the network", key+" "+val, 0.9)
		case credKeep.MatchString(devNullRedirect.ReplaceAllString(body, "")):
			a.ask("exfil/credential_helper", "makes git hand the credentials it stores to a command that writes them to a file", key+" "+val, 0.85)
		}
	case (k == "http.sslverify" || strings.HasPrefix(k, "http.") && strings.HasSuffix(k, ".sslverify")) && falsy(val):
		// http.sslVerify false: git fetches and pushes without checking the server's
		// certificate, so whoever stands on the way can serve any code (registry.go).
		a.ask("exec/tls_off", "turns certificate checks off for git's later fetches and pushes", key+" "+val, 0.85)
	case gitCommandKeys[k] || strings.HasPrefix(k, "pager."):
		a.line(strings.TrimPrefix(val, "!"), a.depth+1)
	case strings.HasPrefix(k, "alias.") && strings.HasPrefix(val, "!"):
		a.line(val[1:], a.depth+1)
	case k == "core.hookspath" && (strings.HasPrefix(val, "/") || strings.HasPrefix(val, "~") || strings.HasPrefix(val, "$") || strings.Contains(val, "..")):
		// The project's own hooks folder (`core.hooksPath .githooks`, a prepare script's
		// set-up) is the project's code like any other; one outside it is asked.
		a.ask("hide/git_hooks", "points git's hooks at a folder outside the project: what is there runs on every commit", key+" "+val, 0.85)
	case strings.HasPrefix(k, "url.") && (strings.HasSuffix(k, ".insteadof") || strings.HasSuffix(k, ".pushinsteadof")):
		// `url.<base>.insteadOf <original>` (git-config(1)): every URL that starts with the
		// original is fetched from, or pushed to, the base instead. SSH for HTTPS on the same
		// host, or a token added to it, is a set-up step; another host is asked (registry.go).
		suffix := len(".insteadof")
		if strings.HasSuffix(k, ".pushinsteadof") {
			suffix = len(".pushinsteadof")
		}
		if len(key) < len("url.")+suffix {
			break // `url.insteadOf`: no base
		}
		if base := key[len("url.") : len(key)-suffix]; gitHost(base) != gitHost(val) {
			a.ask("exec/package_index", "sends git's later fetches or pushes of one host to another", key+" "+val, 0.85)
		}
	}
}

var (
	// credSend and credKeep match a credential helper's shell text that sends what it reads
	// over the network, or writes it to a file.
	credSend = lazyre.New(`\b(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|ssh)\b|/dev/(?:tcp|udp)/`)
	credKeep = lazyre.New(`>>?\s*[^&\s]|\btee\b`)
	// devNullRedirect matches output thrown away (`2>/dev/null`), which keeps nothing.
	devNullRedirect = lazyre.New(`[0-9&]?>>?\s*/dev/null`)
)

// gitHost returns the host of a git URL or its prefix (`https://tok@github.com/`,
// `git@github.com:`, `ssh://git@host:22/`), lower case.
func gitHost(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	}
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	if i := strings.IndexAny(u, "/:"); i >= 0 {
		u = u[:i]
	}
	return strings.ToLower(u)
}

// execIn judges the command `docker exec`/`podman exec` (after the container) and `kubectl
// exec`/`oc exec` (after `--`) run inside the container. Its paths are the container's, not
// this host's, so what it finds asks (`docker exec db psql -c 'DROP DATABASE x'` may be a
// developer's own throwaway database or production's).
func (a *analyzer) execIn(name string, args []string) bool {
	if len(args) == 0 || args[0] != "exec" {
		return false
	}
	a.inContainer++
	defer func() { a.inContainer-- }()
	rest := args[1:]
	if name == "kubectl" || name == "oc" {
		for i, x := range rest {
			if x == "--" {
				a.command(rest[i+1:])
				return false
			}
		}
		return false
	}
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		switch rest[0] {
		case "-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys":
			if len(rest) > 1 {
				rest = rest[1:]
			}
		}
		rest = rest[1:]
	}
	if len(rest) > 1 { // the container, then its command
		a.command(rest[1:])
	}
	return false
}

// startupWrite reports whether p (resolved) is a shell's start-up file in a home folder:
// what is written there runs in every new shell (ATT&CK T1546.004).
func startupWrite(p string) bool {
	rest, ok := homeRest(p)
	if !ok {
		for _, h := range []string{"/root/", "/home/", "/Users/"} {
			if r, found := strings.CutPrefix(p, h); found {
				if h != "/root/" {
					_, r, found = strings.Cut(r, "/")
				}
				rest, ok = r, found
			}
		}
	}
	if !ok {
		return false
	}
	switch rest {
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
		".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login",
		".config/fish/config.fish":
		return true
	}
	return path.Dir(rest) == ".config/fish/conf.d"
}

// startupText judges what echo, printf or a here-document writes into a file whose content
// runs later (persistFile: a shell start-up file, an autostart entry, a systemd user unit, a
// git hook) as the line it will be (`echo 'curl … | sh' >> ~/.bashrc`); of a unit or a
// desktop entry, the commands its Exec lines name.
func (a *analyzer) startupText(s *syntax.Stmt) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return
	}
	target := ""
	for _, r := range s.Redirs {
		if r.Word != nil && (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.ClbOut) {
			if t := a.resolve(a.literal(r.Word)); persistFile(t) || gitHook(t) {
				target = t
			}
		}
	}
	if n := c.Args[0].Lit(); target == "" && n != "" && base(n) != "tee" {
		return // nothing written where it runs later: the words need no expansion
	}
	argv := a.fields(c.Args)
	if len(argv) == 0 {
		return
	}
	if target == "" && base(argv[0]) == "tee" {
		for _, t := range operands(argv[1:]) {
			if r := a.resolve(t); persistFile(r) || gitHook(r) {
				target = r
			}
		}
	}
	if target == "" {
		return
	}
	text, have := "", false
	switch base(argv[0]) {
	case "echo":
		text, have = echoText(argv[1:]), true
		if strings.Contains(text, `\`) {
			// sh's echo (dash, a hook's #!/bin/sh) resolves backslash escapes where bash's
			// does not: `echo '#!/bin/sh\ncurl …|sh' > .git/hooks/pre-commit` writes two
			// lines there. Judged as written both ways.
			text += "\n" + unescape(text)
		}
	case "printf":
		text, have = printfText(argv[1:]), true
	case "cat", "tee":
		text, have = a.hereText(s.Redirs)
	}
	if !have {
		return
	}
	for _, l := range execLines(target, text) {
		a.line(l, a.depth+1)
	}
}

// globProgram judges a program named by a file-name pattern (`/bin/r? -rf ~`): which program
// runs depends on the folder's contents, which the line does not show, so it asks, and it is
// judged as each of the programs below the pattern could name.
func (a *analyzer) globProgram(argv []string, line string) bool {
	name := base(argv[0])
	if _, err := path.Match(name, ""); err != nil || !strings.ContainsAny(name, "?*[") || name == "[" || name == "[[" {
		return false // no pattern (`[opc@host ~]$` pasted from a prompt), or test's own names
	}
	if strings.Trim(name, "*?") == "" {
		return false // `*` alone: a line's fragment (a continued argument list), no program's name
	}
	matched := false
	for _, c := range globCandidates {
		if ok, _ := path.Match(name, c); ok {
			matched = true
			a.command(append([]string{c}, argv[1:]...))
		}
	}
	if matched && strings.ContainsAny(name, "?*") {
		a.ask("exec/glob_name", "runs a program named by a file-name pattern: which one depends on the folder", line, 0.85)
	}
	// A pattern that names none of them (`*.yml`, `[Service]`) is left to the rest.
	return matched
}

// globCandidates are the programs a pattern in a command's name is tried against.
var globCandidates = []string{"rm", "dd", "mv", "cp", "sh", "bash", "zsh", "dash", "curl", "wget", "nc", "ncat",
	"socat", "shred", "chmod", "chown", "python", "python3", "perl", "ruby", "node", "php", "sudo", "su", "scp",
	"rsync", "tar", "find", "xargs", "truncate", "mkfs", "crontab", "git", "ssh"}

// mvAway refuses moving the root, a home folder itself or a top-level system folder away:
// the files stay, but nothing that expects them there works (`mv ~ /tmp/x`, `mv /etc /tmp`).
func (a *analyzer) mvAway(args []string, line string) {
	ops := operands(args)
	if !hasFlag(args, "-t") && !strings.Contains(strings.Join(args, " "), "--target-directory") {
		if len(ops) < 2 {
			return
		}
		ops = ops[:len(ops)-1]
	}
	for _, x := range ops {
		if homeOrSystem(a.resolve(x)) {
			a.add("destroy/mv_away", "moves the home folder or a system folder away", line, 0.9)
			return
		}
	}
}

// homeOrSystem reports whether r (resolved) is the root, a home folder itself or a top-level
// system folder.
func homeOrSystem(r string) bool {
	c := path.Clean(r)
	rest, ok := homeRest(r + "/")
	return ok && strings.Trim(rest, "/") == "" || r == "~" || r == "$HOME" || r == "${HOME}" || c == "/" || movedAway.MatchString(c)
}

// serveFiles judges a one-line web server by the folder it serves (`python3 -m http.server`,
// Python 2's SimpleHTTPServer, `php -S`, whose documentation says it serves the current
// folder, or -d/--directory, -t): the home folder, the root, a system folder or a folder of
// secrets served to the network (http.server binds every interface unless told) is refused.
// In the project, or a folder the line does not know, it is a developer's preview.
func (a *analyzer) serveFiles(name string, args []string, line string) {
	dir, serving := "", false
	switch {
	case strings.HasPrefix(name, "python"):
		for i, x := range args {
			if x != "-m" || i+1 >= len(args) || args[i+1] != "http.server" && args[i+1] != "SimpleHTTPServer" {
				continue
			}
			serving = true
			rest := args[i+2:]
			for j := 0; j < len(rest); j++ {
				switch x := rest[j]; {
				case (x == "-d" || x == "--directory") && j+1 < len(rest):
					dir = rest[j+1]
					j++
				case strings.HasPrefix(x, "--directory="):
					dir = strings.TrimPrefix(x, "--directory=")
				case x == "-b" || x == "--bind" || x == "-p" || x == "--protocol":
					j++
				}
			}
			break
		}
	case name == "php":
		for i, x := range args {
			if x == "-S" {
				serving = true
			} else if x == "-t" && i+1 < len(args) {
				dir = args[i+1]
			}
		}
	case name == "ruby":
		// `ruby -run -e httpd DIR -p 8000` (the un library's httpd: WEBrick on DIR, "." by
		// default).
		for i, x := range args {
			if x == "-e" && i+1 < len(args) && args[i+1] == "httpd" && (slices.Contains(args[:i], "-run") || slices.Contains(args[:i], "-r") && slices.Contains(args, "un")) {
				serving = true
				dir = first(operands(args[i+2:]))
				break
			}
		}
	case name == "httpd":
		// busybox httpd serves -h DIR on every interface (Apache's httpd takes no value
		// after -h, its help).
		for i, x := range args {
			if x == "-h" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				serving, dir = true, args[i+1]
			}
		}
	case name == "npx" || name == "bunx" || name == "http-server" || name == "serve":
		// Node's one-line servers (http-server, serve: the folder is their first operand,
		// the working directory by default), run directly or through npx.
		if name == "npx" || name == "bunx" {
			ops := operands(args)
			if len(ops) == 0 || ops[0] != "http-server" && ops[0] != "serve" {
				return
			}
			i := slices.Index(args, ops[0])
			args = args[i+1:]
		}
		serving = true
		for i := 0; i < len(args); i++ {
			x := args[i]
			if x == "-p" || x == "--port" || x == "-a" || x == "-l" || x == "--listen" || x == "-c" || x == "--config" {
				i++
				continue
			}
			if !strings.HasPrefix(x, "-") {
				dir = x
				break
			}
		}
	}
	if !serving {
		return
	}
	r := a.cwd // "" is the project
	if dir != "" {
		r = a.resolve(dir)
	}
	if r == "" || r == "?" {
		return
	}
	if homeOrSystem(r) || PathRisk(r) == RiskSecret {
		a.add("exfil/serve_files", "serves the home folder, a system folder or secrets to the network", line, 0.9)
	}
}

// userHome is a user's home folder named by its path (`docker run -v /home/dev:/srv`), as `~`
// names it.
var userHome = lazyre.New(`^/(home|Users)/[^/]+$`)

var movedAway = lazyre.New(`^/(etc|usr|bin|sbin|lib|lib32|lib64|boot|var|opt|srv|home|root|sys|proc|dev|Users|System|Library|Applications)$|^/(home|Users)/[^/]+$`)

// sshValue are ssh(1)'s options whose value is the next word (or the rest of the word).
const sshValue = "BbcDEeFIiJLlmOopQRSWw"

// sshRemote judges the command ssh(1) runs on the remote host: the words after the
// destination, joined with spaces and run by the remote user's shell. The remote host's paths
// are not this one's, so what it finds asks, as a container's command does (execIn).
func (a *analyzer) sshRemote(args []string) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1; i++ {
		if args[i] == "--" {
			i++
			break
		}
		if last := args[i][len(args[i])-1]; len(args[i]) == 2 && strings.IndexByte(sshValue, last) >= 0 {
			i++
		}
	}
	if i+1 >= len(args) {
		return // no command: a login shell, or a forward only (-N)
	}
	a.inContainer++
	defer func() { a.inContainer-- }()
	a.line(strings.Join(args[i+1:], " "), a.depth+1)
}

// tmux judges what tmux(1) runs: `-c SHELL-COMMAND`; new-session, new-window, split-window,
// respawn-pane, respawn-window and run-shell run their last arguments as a shell command;
// send-keys types its keys into a pane's shell (key names such as Enter and C-m aside).
// Commands chained with `;` are each judged.
func (a *analyzer) tmux(args []string) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch args[i] {
		case "-c":
			if i+1 < len(args) {
				a.line(args[i+1], a.depth+1)
			}
			return
		case "-f", "-L", "-S", "-T":
			i++
		}
	}
	for rest := args[i:]; len(rest) > 0; {
		cmd := rest
		for j, x := range rest {
			if x == ";" || x == `\;` {
				cmd, rest = rest[:j], rest[j+1:]
				break
			}
			if j == len(rest)-1 {
				rest = nil
			}
		}
		a.tmuxCommand(cmd)
	}
}

// tmuxRuns are tmux commands (and their aliases) that run a shell command given last.
var tmuxRuns = set("new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane",
	"respawnp", "respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup")

// tmuxKeyName matches a tmux key name (tmux(1) KEY BINDINGS) that send-keys presses rather
// than types.
var tmuxKeyName = lazyre.New(`^(?:(?:[CMS]-)+.|Enter|KPEnter|Escape|Tab|BSpace|Space|Up|Down|Left|Right|Home|End|[CMS]-(?:Enter|Space))$`)

// tmuxCommand judges one tmux command's words.
func (a *analyzer) tmuxCommand(cmd []string) {
	if len(cmd) == 0 {
		return
	}
	name, rest := cmd[0], cmd[1:]
	run := tmuxRuns[name]
	send := name == "send-keys" || name == "send"
	if !run && !send {
		return
	}
	// Options: flag letters, the last of a group taking the next word when it is one of
	// tmux's value options (-c, -e, -F, -f, -n, -s, -t, -x, -y, -l, -p, -T; run-shell's -d is a
	// delay).
	values := "ceFfnstxylpT"
	if name == "run-shell" || name == "run" {
		values += "d"
	}
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && len(rest[0]) > 1 {
		x := rest[0]
		rest = rest[1:]
		if x == "--" {
			break
		}
		if strings.IndexByte(values, x[len(x)-1]) >= 0 && len(rest) > 0 && !(send && x[len(x)-1] == 'l') {
			rest = rest[1:]
		}
	}
	if len(rest) == 0 {
		return
	}
	if run {
		a.line(strings.Join(rest, " "), a.depth+1)
		return
	}
	var typed []string
	for _, k := range rest {
		if !tmuxKeyName.MatchString(k) {
			typed = append(typed, k)
		}
	}
	if len(typed) > 0 {
		a.line(strings.Join(typed, " "), a.depth+1)
	}
}

// screen judges what screen(1) runs: `screen [-opts] [CMD [ARGS]]` runs CMD in a new window
// (detached with -dm); `-X COMMAND` sends a command to a running session, whose `stuff TEXT`
// types TEXT into the window's shell and `exec CMD` runs one.
func (a *analyzer) screen(args []string) {
	for i := 0; i < len(args); i++ {
		x := args[i]
		if !strings.HasPrefix(x, "-") || len(x) < 2 {
			a.command(args[i:])
			return
		}
		if x == "-X" || strings.HasSuffix(x, "X") && !strings.HasPrefix(x, "--") {
			rest := args[i+1:]
			switch {
			case len(rest) > 1 && rest[0] == "stuff":
				a.line(strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n", `\015`, "\n").Replace(rest[1]), a.depth+1)
			case len(rest) > 1 && rest[0] == "exec":
				a.command(rest[1:])
			}
			return
		}
		// -c FILE, -e XY, -h LINES, -p WINDOW, -S NAME, -T TERM, -t TITLE, -s SHELL: the value
		// is the next word unless attached (a group such as -dmS takes it for its last letter).
		if strings.IndexByte("cehpSTts", x[len(x)-1]) >= 0 && (len(x) == 2 || strings.Trim(x[1:len(x)-1], "dmDRrfaAilLOqUx") == "") {
			i++
		}
	}
}

// sqliteDot judges a sqlite3 dot-command that runs its text in a shell (`.shell CMD`,
// `.system CMD`, sqlite3(1)), one per line of text.
func (a *analyzer) sqliteDot(text string) {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{".shell ", ".system "} {
			if c, ok := strings.CutPrefix(l, p); ok {
				a.line(c, a.depth+1)
			}
		}
	}
}
