package shell

import (
	"path"
	"slices"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Destructive operations found by probing the hook by hand (issue 26, 2026-12-01, second
// round): each line below had no finding. Sources are in Catalogue.

// formatter reports whether name makes a file system or swap on what it is given: mkfs and
// its per-type programs (mkfs.ext4, mkfs.xfs, mke2fs, mkntfs, mkdosfs; util-linux mkfs(8),
// e2fsprogs mke2fs(8)) have no listing mode.
func formatter(name string) bool {
	switch name {
	case "mkfs", "mke2fs", "mkntfs", "mkdosfs", "mkexfatfs", "mkswap":
		return true
	}
	return strings.HasPrefix(name, "mkfs.")
}

// format judges a file-system maker (formatter): on a device (/dev/…) or a path the line does
// not spell out it is refused; on a file it makes a file-system image, which replaces the
// file's content: asked outside the project, passed inside it (`mkfs.ext4 build/disk.img`);
// asking only for its version or help does nothing.
func (a *analyzer) format(args []string, line string) {
	ops := operands(args)
	if len(ops) == 0 {
		for _, x := range args {
			if x != "--version" && x != "-V" && x != "--help" && x != "-h" {
				a.add("destroy/disk", "formats a disk", line, 0.95)
				return
			}
		}
		return
	}
	for _, t := range ops {
		if strings.HasPrefix(a.resolve(t), "/dev/") || strings.ContainsAny(t, "$`") {
			a.add("destroy/disk", "formats a disk", line, 0.95)
			return
		}
	}
	for _, t := range ops {
		if a.outsideAt(t, false) {
			a.ask("destroy/disk", "makes a file system in a file outside the project (its content is replaced)", line, 0.85)
			return
		}
	}
}

// hdparmErase are hdparm(8)'s options that erase, overwrite or lock a drive (its manual marks
// them DANGEROUS): the rest of hdparm reads or tunes the drive.
var hdparmErase = set("--security-erase", "--security-erase-enhanced", "--trim-sector-ranges",
	"--trim-sector-ranges-stdin", "--write-sector", "--make-bad-sector", "--security-set-pass",
	"--dco-restore", "--fwdownload", "--fwdownload-mode3", "--fwdownload-mode3-max",
	"--fwdownload-mode7", "--yes-i-know-what-i-am-doing", "-N")

// volumeDestroy reports whether name with args destroys a volume or what is on a disk beyond
// the partition tools of disk.go: nvme-cli's format, sanitize and delete-ns, cryptsetup's
// luksFormat and erase (the key slots: the data is then unreadable), LVM's lvremove, vgremove
// and pvremove, ZFS's destroy and labelclear, and hdparm's erasing options.
func volumeDestroy(name string, args []string) bool {
	switch name {
	case "nvme", "cryptsetup", "zpool", "zfs":
	case "lvremove", "vgremove", "pvremove":
		return true
	case "hdparm":
		for _, x := range args {
			k, _, _ := strings.Cut(x, "=")
			if hdparmErase[k] {
				return true
			}
		}
		return false
	default:
		return false
	}
	sub := ""
	if ops := operands(args); len(ops) > 0 {
		sub = ops[0]
	}
	switch name {
	case "nvme":
		return sub == "format" || sub == "sanitize" || sub == "delete-ns"
	case "cryptsetup":
		switch strings.ToLower(sub) {
		case "luksformat", "erase", "lukserase":
			return true
		}
		return hasFlag(args, "--type") && slices.Contains(args, "luksFormat")
	case "zpool":
		return sub == "destroy" || sub == "labelclear"
	case "zfs":
		return sub == "destroy"
	}
	return false
}

// killsAll reports whether name with args signals every process the user may signal: kill's
// pid -1 (kill(1): "all processes with a PID larger than 1"), killall5 (every process outside
// its own session), and pkill or killall given only a user (`pkill -u dev`, `killall -u dev`:
// every process of that user). The guard, the agent's own session and the user's desktop go
// with them.
func killsAll(name string, args []string) bool {
	switch name {
	case "killall5":
		return true
	case "kill":
		i := 0
		if i < len(args) && (args[i] == "-s" || args[i] == "-n" || args[i] == "--signal") {
			i += 2
		} else if i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" && args[i] != "-1" {
			i++ // -9, -KILL, -SIGTERM, --signal=X
		} else if i < len(args)-1 && args[i] == "-1" {
			i++ // `kill -1 -1`: signal 1 (HUP), then the pids
		}
		for _, x := range args[min(i, len(args)):] {
			if x == "-1" {
				return true
			}
		}
	case "pkill", "killall":
		user := false
		var pattern []string
		for i := 0; i < len(args); i++ {
			x := args[i]
			switch {
			case x == "-u" || x == "-U" || x == "--user" || x == "--euid" || x == "--uid":
				user = true
				i++
			case strings.HasPrefix(x, "--user=") || strings.HasPrefix(x, "--euid=") || strings.HasPrefix(x, "--uid="):
				user = true
			case x == "-s" || x == "--signal" || x == "-g" || x == "-G" || x == "-P" || x == "-t" || x == "-o" || x == "-y" || x == "-n" && name == "killall":
				i++ // an option's value
			case strings.HasPrefix(x, "-"):
			default:
				pattern = append(pattern, x)
			}
		}
		return user && len(pattern) == 0
	}
	return false
}

// removedSources returns the files an archiver or rsync deletes after copying them: tar's
// --remove-files, zip's -m (--move), 7-Zip's -sdel and rsync's --remove-source-files; the
// archive itself and rsync's destination are not among them. nil when nothing is removed.
func removedSources(name string, args []string) []string {
	switch name {
	case "tar":
		if !hasFlag(args, "--remove-files") {
			return nil
		}
		// The archive (-f FILE, --file FILE, the word after a bundle ending in f such as -czf,
		// or the word after an old-style first bundle: `tar czf ARCHIVE FILES…`) and -C's
		// folder are values, not sources; sources are relative to -C's folder.
		archive, dirAt, old := -1, -1, false
		for i, x := range args {
			switch {
			case x == "-f" || x == "--file":
				archive = i + 1
			case x == "-C" || x == "--directory":
				dirAt = i + 1
			case strings.HasPrefix(x, "--"):
			case strings.HasPrefix(x, "-") && strings.HasSuffix(x, "f"):
				archive = i + 1
			case i == 0 && !strings.HasPrefix(x, "-") && strings.Contains(x, "f"):
				archive, old = 1, true
			}
		}
		dir := ""
		if dirAt > 0 && dirAt < len(args) {
			dir = strings.TrimSuffix(args[dirAt], "/") + "/"
		}
		var out []string
		for i, x := range args {
			if i == archive || i == dirAt || strings.HasPrefix(x, "-") || i == 0 && old {
				continue
			}
			if dir != "" && !strings.HasPrefix(x, "/") && !strings.HasPrefix(x, "~") {
				x = dir + x
			}
			out = append(out, x)
		}
		return out
	case "zip":
		move := false
		for _, x := range args {
			if x == "--move" || strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "m") {
				move = true
			}
		}
		if ops := operands(args); move && len(ops) > 1 {
			return ops[1:] // zip [options] zipfile files…
		}
	case "7z", "7za", "7zr":
		if hasFlag(args, "-sdel") {
			if ops := operands(args); len(ops) > 2 {
				return ops[2:] // 7z a archive files…
			}
		}
	case "rsync":
		if hasFlag(args, "--remove-source-files", "--remove-sent-files") {
			if ops := operands(args); len(ops) > 1 {
				var out []string
				for _, x := range ops[:len(ops)-1] {
					if !strings.Contains(x, ":") {
						out = append(out, x) // a remote source is the other host's files
					}
				}
				return out
			}
		}
	}
	return nil
}

// listsAll reports whether args hold a command substitution listing every id quietly
// (`$(docker ps -aq)`, `$(docker volume ls -q)`; unquoted, its stand-in is split into words):
// rm given it removes every container or volume, running ones and named volumes too, wider
// than prune. A filtered listing (`$(docker ps -aq -f status=exited)`) is a chosen few.
func listsAll(args []string) bool {
	j := strings.Join(args, " ")
	i := strings.Index(j, "$(")
	if i < 0 {
		return false
	}
	sub := j[i:]
	if k := strings.Index(sub, ")"); k > 0 {
		sub = sub[:k]
	}
	f := strings.Fields(sub)
	quiet, list := false, false
	for _, x := range f[min(1, len(f)):] {
		switch {
		case x == "ps" || x == "ls" || x == "list":
			list = true
		case x == "-f" || x == "--filter" || strings.HasPrefix(x, "--filter="):
			return false
		case strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "q"), x == "--quiet":
			quiet = true
		}
	}
	return list && quiet
}

// destroy judges the operations above; it is called for every command.
func (a *analyzer) destroy(name string, args []string, line string) {
	switch {
	case volumeDestroy(name, args):
		a.add("destroy/disk", "erases a disk, a volume or its encryption keys", line, 0.95)
	case killsAll(name, args):
		a.add("destroy/kill_all", "signals every process of the user or the system (the guard and the agent's session among them)", line, 0.9)
	}
	if name == "sed" {
		a.sedExec(args, line)
	}
	if src := removedSources(name, args); len(src) > 0 {
		a.fed(append([]string{"rm", "-r"}, src...), true)
	}
	if name == "docker" || name == "podman" {
		switch {
		case len(args) >= 2 && args[0] == "system" && args[1] == "reset":
			a.add("destroy/docker_prune", "deletes every container, image and volume (data)", line, 0.85)
		case len(args) >= 2 && args[0] == "volume" && args[1] == "rm" && listsAll(args[2:]):
			a.add("destroy/docker_prune", "deletes every volume (data)", line, 0.85)
		case len(args) >= 1 && (args[0] == "rm" || args[0] == "container" && len(args) > 1 && args[1] == "rm") && listsAll(args[1:]):
			a.ask("destroy/docker_prune", "deletes every container", line, 0.8)
		}
	}
}

// fileWrites returns the files a program writes by name: cp, mv, ln, install, rsync and tee
// (copyTargets), dd's of=, and the files sed -i and perl -i edit in place.
func (a *analyzer) fileWrites(name string, args []string) []string {
	if files := a.copyTargets(name, args); files != nil {
		return files
	}
	switch name {
	case "dd":
		for _, x := range args {
			if f, ok := strings.CutPrefix(x, "of="); ok {
				return []string{f}
			}
		}
	case "find":
		var out []string
		for i, x := range args {
			if ListFile(name, x) && i+1 < len(args) {
				out = append(out, args[i+1]) // -fprint FILE, -fprintf FILE FORMAT
			}
		}
		return out
	case "sed", "perl":
		inPlace, script := false, false
		var ops []string
		for i := 0; i < len(args); i++ {
			x := args[i]
			switch {
			case x == "-i" || strings.HasPrefix(x, "-i") && name == "sed" || strings.HasPrefix(x, "--in-place") ||
				name == "perl" && strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.Contains(x, "i"):
				inPlace = true
				if name == "perl" && strings.Contains(x, "e") {
					script = true // -pie '…': the code is the next word
					i++
				}
			case x == "-e" || x == "-f" || x == "--expression" || x == "--file":
				script = true
				i++
			case strings.HasPrefix(x, "-"):
			default:
				ops = append(ops, x)
			}
		}
		if !inPlace {
			return nil
		}
		if !script && len(ops) > 0 {
			ops = ops[1:] // the first operand is the script
		}
		return ops
	}
	return nil
}

// programWrites judges the files a program writes by name (fileWrites) as a redirect into
// them is judged: an account or privilege file (`cp x /etc/sudoers`) is refused, a shell's
// start-up file (`cp /dev/null ~/.bashrc`, `ln -sf /tmp/x ~/.bashrc`) asked, shell history
// overwritten refused.
func (a *analyzer) programWrites(name string, args []string, line string) {
	for _, f := range a.fileWrites(name, args) {
		r := a.resolve(f)
		switch {
		case privFile.MatchString(r):
			a.add("priv/system_file", "writes a system account or privilege file", line, 0.95)
		case historyFile.MatchString(r):
			a.add("hide/history", "overwrites shell history", line, 0.9)
		case startupWrite(r):
			a.ask("hide/startup_file", "writes a shell start-up file: what it holds runs in every new shell", line, 0.85)
		case persistFile(r):
			a.ask("hide/persistence", "writes a file whose content runs later without being called (autostart, a systemd user unit, a git hook)", line, 0.85)
		}
	}
}

// locksOut reports whether a chmod mode takes the owner's read or search permission away
// (`000`, `0600` on a folder, `a-rwx`, `u=`): on the home folder or a system folder itself the
// owner can no longer list or enter it.
func locksOut(mode string) bool {
	if mode != "" && strings.Trim(mode, "01234567") == "" {
		if len(mode) < 3 {
			return true // `chmod 0 ~`, `chmod 44 ~`: the owner's digit is 0
		}
		d := mode[len(mode)-3] - '0'
		return d&5 != 5
	}
	for _, clause := range strings.Split(mode, ",") {
		i := 0
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			i++
		}
		who, rest := clause[:i], clause[i:]
		if who != "" && !strings.ContainsAny(who, "ua") || rest == "" {
			continue
		}
		switch rest[0] {
		case '-':
			if strings.ContainsAny(rest[1:], "rx") {
				return true
			}
		case '=':
			if !strings.Contains(rest[1:], "r") || !strings.Contains(rest[1:], "x") {
				return true
			}
		}
	}
	return false
}

// topFolder reports whether r (resolved) is the root, the home folder itself or a top system
// folder (/etc, /usr, …), not something below it.
func topFolder(r string) bool {
	if h, ok := strings.CutPrefix(r, "~"); ok && strings.Trim(h, "/") == "" {
		return true
	}
	if r == "$HOME" || r == "${HOME}" || r == "$HOME/" || r == "${HOME}/" {
		return true
	}
	c := strings.TrimSuffix(r, "/")
	if c == "" && r == "/" {
		return true
	}
	return strings.HasPrefix(c, "/") && !strings.Contains(c[1:], "/") && systemDir.MatchString(c)
}

// lockOut asks about chmod taking the owner's access to the home folder, the root or a top
// system folder away, and chown giving one of them away, without -R (`chmod 000 ~`): the
// owner can no longer enter it, until someone with the rights gives it back. -R on them is
// refused (priv/perms_system).
func (a *analyzer) lockOut(name string, args []string, line string) {
	if name != "chmod" && name != "chown" || hasFlag(args, "-R", "--recursive") {
		return
	}
	ops := operands(args)
	if len(ops) < 2 || name == "chmod" && !locksOut(ops[0]) {
		return
	}
	for _, t := range ops[1:] {
		if topFolder(a.resolve(t)) {
			a.ask("priv/perms_system", "takes the owner's access to the home folder or a system folder away", line, 0.85)
			return
		}
	}
}

// sedAddress matches a sed command's address: a line number, $, or /regexp/, optionally a
// range, optionally negated.
var sedAddress = lazyre.New(`^\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*!?\s*`)

// sedScripts returns the scripts of a sed command line: every -e/--expression value, else the
// first operand (-f's file is not read here).
func sedScripts(args []string) []string {
	var scripts []string
	var ops []string
	file := false
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch {
		case (x == "-e" || x == "--expression") && i+1 < len(args):
			scripts = append(scripts, args[i+1])
			i++
		case strings.HasPrefix(x, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(x, "--expression="))
		case x == "-f" || x == "--file":
			file = true
			i++
		case strings.HasPrefix(x, "-e") && len(x) > 2:
			scripts = append(scripts, x[2:])
		case strings.HasPrefix(x, "-") && x != "-":
		default:
			ops = append(ops, x)
		}
	}
	if len(scripts) == 0 && !file && len(ops) > 0 {
		scripts = ops[:1]
	}
	return scripts
}

// sedExec judges GNU sed's commands that run a shell (GNU sed manual, "Commands for sed
// gurus" and "The s command"): `e COMMAND` runs COMMAND, judged as a line; `e` alone and the
// s command's e flag run the pattern space, text the line does not show, so they ask.
func (a *analyzer) sedExec(args []string, line string) {
	for _, script := range sedScripts(args) {
		if !strings.Contains(script, "e") {
			continue
		}
		for _, cmd := range strings.FieldsFunc(script, func(r rune) bool { return r == '\n' || r == ';' || r == '{' || r == '}' }) {
			cmd = strings.TrimSpace(cmd[len(sedAddress.FindString(cmd)):])
			switch {
			case cmd == "e":
				a.ask("exec/sed_exec", "sed runs its input lines as commands", line, 0.85)
			case strings.HasPrefix(cmd, "e ") || strings.HasPrefix(cmd, "e\t"):
				a.line(strings.TrimSpace(cmd[2:]), a.depth+1)
			case len(cmd) > 2 && cmd[0] == 's' && sedEFlag(cmd):
				a.ask("exec/sed_exec", "sed runs each line it rewrites as a command", line, 0.85)
			}
		}
	}
}

// sedEFlag reports whether the s command cmd ("s/re/repl/flags", any delimiter) has the e
// flag.
func sedEFlag(cmd string) bool {
	d := cmd[1]
	if d == '\\' || d == '\n' || d == ' ' {
		return false
	}
	n := 0
	for i := 2; i < len(cmd); i++ {
		switch cmd[i] {
		case '\\':
			i++
		case d:
			n++
			if n == 2 {
				flags := cmd[i+1:]
				if k := strings.IndexAny(flags, " \tw"); k >= 0 {
					flags = flags[:k] // w FILE: the rest is a file name
				}
				return strings.Contains(flags, "e")
			}
		}
	}
	return false
}

// worldWritable judges a chmod that lets every local user write (a numeric mode whose last
// digit has the write bit, `o+w`, `a=rwx`; chmod(1)): the root, a home folder or a top system
// folder made writable by anyone, recursively or not, is refused (priv/perms_system); the
// project or any other folder made so recursively (`chmod -R 777 .`) is asked about
// (priv/perms_world): every other account on the host may then change its code, and a
// careful reviewer asks what needed it (issue 26, det65). A mode without the bit for others
// (`chmod -R 755 build`, `chmod +x script.sh`, `g+w`) is not this. A shell's start-up file or
// a secret made writable by anyone is refused too. It reports whether it judged the line.
func (a *analyzer) worldWritable(args []string, recursive bool, line string) bool {
	ops := operands(args)
	if len(ops) < 2 || !writableByOthers(ops[0]) {
		return false
	}
	for _, t := range ops[1:] {
		if r := a.resolve(t); homeOrSystem(r) || userHome.MatchString(path.Clean(r)) {
			a.add("priv/perms_system", "lets every user write the root, a home folder or a system folder", line, 0.9)
			return true
		}
		if rest, ok := homeRest(a.resolve(t)); ok && !strings.Contains(rest, "/") && startupFile(rest) || PathRisk(a.resolve(t)) == RiskSecret {
			// `chmod o+w ~/.bashrc`: any local user then writes what every new shell runs;
			// a key or credential file writable by anyone can be swapped.
			a.add("priv/perms_system", "lets every user write a shell's start-up file or a secret", line, 0.9)
			return true
		}
	}
	for _, t := range ops[1:] {
		if recursive && !a.outsideAt(t, true) {
			a.ask("priv/perms_world", "lets every user of the host write a folder tree", line, 0.85)
			return true
		}
	}
	return false
}

// writableByOthers reports whether a chmod mode gives others the write bit: octal with the
// bit in its last digit, or a symbolic clause for o or a that adds or sets w.
func writableByOthers(mode string) bool {
	if mode != "" && strings.Trim(mode, "01234567") == "" {
		return len(mode) >= 3 && (mode[len(mode)-1]-'0')&2 != 0
	}
	for _, c := range strings.Split(mode, ",") {
		i := strings.IndexAny(c, "+=")
		if i < 0 || strings.Contains(c[:i], "-") {
			continue
		}
		who := c[:i]
		if strings.ContainsAny(who, "oa") && strings.Contains(c[i+1:], "w") {
			return true
		}
	}
	return false
}
