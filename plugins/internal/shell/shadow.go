package shell

import (
	"path"
	"strings"
)

// Shadowing a program on PATH (issue 26): a file put into a folder the shell searches for
// commands, under the name of a program that handles passwords or keys or of a shell
// (standIn: sudo, su, ssh, gpg, git...), runs instead of the real one whenever the user
// types that name, if its folder comes first on PATH, as /usr/local/bin and the user's own
// ~/bin and ~/.local/bin do on most systems. A `sudo` there reads the password the user
// types next (MITRE ATT&CK T1574.007, "Path Interception by PATH Environment Variable").
// Copying, moving, linking, installing or writing such a file asks (`hide/path_shadow`),
// elevated or not: an agent that can write those folders as the user needs no elevation
// for it. A program under its own name (`ln -s /usr/local/go/bin/go /usr/local/bin/go`) is
// not a stand-in and is judged as before.

// pathFolders are folders on PATH ahead of or beside the distribution's: the administrator's
// local software (FHS 3.0 §4.9), Homebrew's and MacPorts', the distribution's own (writable
// as root only), and the user's, under the home directory.
var pathFolders = map[string]bool{
	"/usr/local/bin": true, "/usr/local/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/bin": true, "/sbin": true, "/opt/homebrew/bin": true, "/opt/homebrew/sbin": true,
	"/opt/local/bin": true, "/snap/bin": true,
}

// homePathFolders are the folders under a home directory that installers and shells' start-up
// files put on PATH (~/bin and ~/.local/bin: systemd's file-hierarchy(7) and Debian's
// ~/.profile; the language tool chains' own).
var homePathFolders = map[string]bool{
	"bin": true, ".local/bin": true, "go/bin": true, ".cargo/bin": true, ".bun/bin": true,
	".deno/bin": true, ".npm-global/bin": true, ".volta/bin": true, ".yarn/bin": true,
}

// onPATH reports whether the folder dir (cleaned) is one of pathFolders or homePathFolders.
func onPATH(dir string) bool {
	if pathFolders[dir] {
		return true
	}
	if m := userDir.FindString(dir); m != "" {
		return homePathFolders[strings.TrimPrefix(dir[len(m):], "/")]
	}
	if strings.HasPrefix(dir, "~/") {
		return homePathFolders[dir[2:]]
	}
	return false
}

// shadows reports whether writing the file t (resolved) puts a stand-in on PATH.
func shadows(t string) bool {
	c := path.Clean(t)
	return onPATH(path.Dir(c)) && standIn(path.Base(c))
}

// pathShadow asks about a command that copies, moves, links, installs or tees a stand-in into
// a folder on PATH: the destination file, or each source's name when the destination is the
// folder itself (`cp sudo ~/.local/bin/`, `install -t ~/bin ssh`). A redirect's target is
// checked in redirect.
func (a *analyzer) pathShadow(name string, args []string, line string) {
	for _, f := range a.copyTargets(name, args) {
		if shadows(a.resolve(f)) {
			a.ask("hide/path_shadow", "puts a program named for "+path.Base(path.Clean(f))+" in a folder on PATH, where it runs instead of the real one", line, 0.9)
			return
		}
	}
}

// copyTargets returns the files cp, mv, ln, install, rsync or tee write: tee's operands, each
// source's name in -t's folder, else the last operand (each source's name in it when it is a
// folder on PATH). nil for any other program.
func (a *analyzer) copyTargets(name string, args []string) []string {
	switch name {
	case "cp", "mv", "ln", "install", "rsync", "tee":
	default:
		return nil
	}
	var ops []string
	dir := ""
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch {
		case x == "-t" || x == "--target-directory":
			if i+1 < len(args) {
				dir = args[i+1]
				i++
			}
		case strings.HasPrefix(x, "--target-directory="):
			dir = strings.TrimPrefix(x, "--target-directory=")
		case (x == "-m" || x == "-o" || x == "-g" || x == "-S" || x == "--suffix") && name == "install":
			i++
		case strings.HasPrefix(x, "-") && x != "-":
		default:
			ops = append(ops, x)
		}
	}
	var files []string
	switch {
	case name == "tee":
		files = ops
	case dir != "":
		for _, s := range ops {
			files = append(files, path.Join(dir, path.Base(s)))
		}
	case len(ops) >= 2:
		dst := a.resolve(ops[len(ops)-1])
		if onPATH(path.Clean(dst)) {
			for _, s := range ops[:len(ops)-1] {
				files = append(files, path.Join(dst, path.Base(s)))
			}
		} else {
			files = append(files, dst)
		}
	}
	return files
}
