package shell

import (
	"path"
	"strings"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// The project an agent works in is named beside its command: Claude Code's PreToolUse hook
// carries `cwd`, an MCP tool that runs commands may take a `cwd` argument. Agents often write
// the project's files by their absolute path (`rm -f /home/dev/project/src/old.go`), which was
// judged as a path outside the project while `rm -f src/old.go` had no finding (issue 26,
// det68). AnalyzeIn judges a word that names a path inside the project root as the same path
// written relative to it would be. The root must name a project (ProjectRoot): not the root
// folder, a top-level folder, a home folder, a system folder or a hidden one. A word is left
// as written when it climbs out of the root (`/home/dev/project/../.ssh`), when the analyzer
// judges it a secret or personal path as written (PathRisk: `/home/dev/project/.env`), when
// the line makes a symbolic link or a bind mount (what a path inside the project points at
// is then the line's choice), and when cd left the project's tree.

// systemTops are the top-level folders whose subfolders are the system's or its packages'
// (FHS 3.0), never one project's: a working directory under them gets no project leniency.
var systemTops = map[string]bool{"bin": true, "boot": true, "dev": true, "etc": true, "lib": true,
	"lib32": true, "lib64": true, "libx32": true, "opt": true, "proc": true, "root": true, "run": true,
	"sbin": true, "snap": true, "sys": true, "usr": true, "nix": true, "System": true, "Library": true,
	"Applications": true, "private": true, "Volumes": true}

// homeTops are the folders whose children are home folders (/home/dev, /Users/dev).
var homeTops = map[string]bool{"home": true, "Users": true}

// ProjectRoot returns cwd cleaned when it can stand for a project's root, and "" when it
// cannot: not absolute, not clean (`..`, `.`), a word the shell would expand, the root
// folder, a top-level folder (/tmp, /workspace), a home folder (/home/dev, /Users/dev,
// /var/home/dev), a folder under a system top (/usr/lib, /etc/nginx, /opt/tool), under /var
// but /var/www, or with a hidden component (/home/dev/.ssh, /home/dev/.config/app).
func ProjectRoot(cwd string) string {
	c := strings.TrimRight(strings.TrimSpace(cwd), "/")
	if !strings.HasPrefix(c, "/") || path.Clean(c) != c || strings.ContainsAny(c, "$`*?[{\\\n\x00\"'") {
		return ""
	}
	parts := strings.Split(c[1:], "/")
	if len(parts) < 2 || systemTops[parts[0]] {
		return ""
	}
	for _, p := range parts {
		if strings.HasPrefix(p, ".") || p == "~" {
			return ""
		}
	}
	switch {
	case homeTops[parts[0]] && len(parts) < 3:
		return ""
	case parts[0] == "var" && (len(parts) < 3 || parts[1] != "www"):
		return ""
	case parts[0] == "export" && parts[1] == "home" && len(parts) < 4:
		return ""
	}
	return c
}

// linking matches a line that makes a symbolic link or bind-mounts a folder: `ln -s`,
// `ln -sf`, `ln --symbolic`, `cp -s`, `mount --bind`, `mount -o bind`, bindfs.
var linking = lazyre.New(`(^|[\s;&|(` + "`" + `])(ln|cp|gln|gcp)(\s[^;&|\n]*)?\s(-[A-Za-z]*s|--symbolic)|--bind|--rbind|\bbind(fs)?\b`)

// AnalyzeIn is Analyze for a line run in the project folder root (ProjectRoot: "" or a folder
// that cannot be a project is Analyze): a path inside it is judged as the relative path.
func AnalyzeIn(cmd, root string) Result {
	a := &analyzer{vars: map[string]string{}, src: cmd}
	if p := ProjectRoot(root); p != "" && !linking.MatchString(cmd) {
		a.root = p
	} else if p == "" {
		a.callDir = callFolder(root)
	}
	return a.analyze(cmd)
}

// callFolder returns cwd cleaned when it is a folder a line could run in, written plainly (no
// word the shell would expand): absolute, or relative to the project (an MCP call's `"cwd":
// "build"`); "" for the project itself and anything else.
func callFolder(cwd string) string {
	c := strings.TrimSpace(cwd)
	if c == "" || strings.ContainsAny(c, "$`*?[{\\\n\x00\"'") || path.Clean(c) == "." {
		return ""
	}
	return path.Clean(c)
}

// A recursive delete of everything in the folder it runs in (`rm -rf *`, `rm -rf .`, `find .
// -delete`) is decided by where it runs, which the line itself does not show (issue 26,
// det70). At the project's root it deletes the whole project, every file not yet committed
// with it: asked. After cd to a folder outside the project, or in a call whose folder cannot
// be a project's, outsideAt refuses the root, a system folder and the home folder itself (`cd
// / && rm -rf *`, `cd ~ && rm -rf .`, a call run in /home/dev); anywhere else outside the
// project (another project, ~/Downloads, /tmp itself) is asked, and a folder below /tmp,
// /var/tmp or /dev/shm passes, as `rm -rf /tmp/x/*` does. After cd inside the project (`cd
// build && rm -rf *`) or to a folder the line does not show (`cd "$dir"`), nothing changes.

// wholeOperand reports whether t, an operand of rm or find, names everything in the folder
// the command runs in: `.`, `./`, `*`, `./*`, `.[!.]*`, `$PWD`, `"$(pwd)"/*`.
func wholeOperand(t string) bool {
	if rest, ok := pwdRest(t); ok {
		t = "." + rest
	}
	c := path.Clean(t)
	return c != ".." && strings.Trim(c, "*?[]!.^") == ""
}

// filteredFind reports whether find's arguments choose some files by a test (a name, a path,
// an age, a size, an owner), so that it does not delete everything below its paths.
func filteredFind(args []string) bool {
	for _, x := range args {
		switch x {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
			"-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-size", "-empty",
			"-user", "-group", "-nouser", "-nogroup", "-perm", "-links", "-inum", "-samefile", "-lname", "-ilname":
			return true
		}
	}
	return false
}

// wholeDelete judges a recursive delete of everything in the folder it runs in
// (wholeOperand) that outsideAt let pass; deny is the rule a refused one reports.
func (a *analyzer) wholeDelete(deny, line string) {
	dir := a.cwd
	if dir == "" {
		dir = a.callDir
	}
	switch {
	case dir == "" && a.root != "" && siblingBuild("../"+path.Base(a.root)):
		// the call runs in a build folder (an MCP call's `"cwd": "/home/dev/project/build"`),
		// as after `cd build`
	case dir == "":
		a.ask("destroy/rm_project", "deletes everything in the project folder", line, 0.85)
	case dir == "?" || !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, "~") && dir != ".." && !strings.HasPrefix(dir, "../"):
		// inside the project (`cd build && rm -rf *`), or a folder the line does not show
	case a.cwd == "" && (dir == "/" || (systemDir.MatchString(dir) || userDir.MatchString(dir)) && strings.Count(dir, "/") <= 2):
		a.add(deny, "deletes everything in the root, a system folder or a home folder", line, 0.95)
	case strings.HasPrefix(dir, "/tmp/") || strings.HasPrefix(dir, "/var/tmp/") || strings.HasPrefix(dir, "/dev/shm/"):
		// a scratch folder below /tmp, as `rm -rf /tmp/x/*` is
	default:
		a.ask("destroy/rm_outside", "deletes everything in a folder outside the project", line, 0.85)
	}
}

// scratchAll reports whether the path p (resolved: absolute where cd set a folder) is a shared
// scratch folder itself (/tmp, /var/tmp, /dev/shm) or a glob of everything in one (`/tmp/*`),
// as a relative operand climbing out of a folder below it names them.
func scratchAll(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if strings.ContainsAny(path.Base(c), "*?[") {
		c = path.Dir(c)
	}
	return c == "/tmp" || c == "/var/tmp" || c == "/dev/shm"
}

// inRoot returns w with a path inside the project root written relative to the working
// directory cd set, as the line could have written it; any other word as it is. A flag's
// value glued to it (`--prefix=/home/dev/project`, `-C/home/dev/project`) is the path.
func (a *analyzer) inRoot(w string) string {
	if a.root == "" || !strings.Contains(w, a.root) || strings.ContainsAny(w, "\n\x00") {
		return w // a here-document's text is no path
	}
	flag := ""
	if strings.HasPrefix(w, "-") {
		i := strings.IndexByte(w, '=')
		if i < 0 && strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && len(w) > 2 {
			i = 1
		}
		if i < 0 {
			return w
		}
		flag, w = w[:i+1], w[i+1:]
	}
	rest, ok := strings.CutPrefix(w, a.root)
	if !ok || rest != "" && rest[0] != '/' || PathRisk(w) != RiskNone {
		return flag + w
	}
	rel := strings.TrimLeft(rest, "/")
	if rel == "" {
		rel = "."
	}
	if c := path.Clean(rel); c == ".." || strings.HasPrefix(c, "../") || c == "." && rel != "." {
		return flag + w // climbs out of the project, or names it by a detour (`src/..`)
	}
	switch {
	case a.cwd == "":
	case a.cwd == "?" || strings.HasPrefix(a.cwd, "/") || strings.HasPrefix(a.cwd, "~") || a.cwd == ".." || strings.HasPrefix(a.cwd, "../"):
		return flag + w // cd left the project's tree: the relative path would point elsewhere
	default:
		rel = strings.Repeat("../", strings.Count(a.cwd, "/")+1) + rel
	}
	if flag == "" && strings.HasPrefix(rel, "-") {
		rel = "./" + rel
	}
	return flag + rel
}

// deleters are the programs that delete their operands: the project's folder itself given to
// one of them stays as written (`rm -rf /home/dev/project` deletes the project, not a file in it).
var deleters = map[string]bool{"rm": true, "rmdir": true, "unlink": true, "shred": true, "srm": true,
	"trash": true, "trash-put": true, "gio": true, "wipe": true}

// inRootAll is inRoot for each word of argv, in place.
func (a *analyzer) inRootAll(argv []string) []string {
	if a.root == "" {
		return argv
	}
	deletes := false
	for i, w := range argv {
		deletes = deletes || deleters[base(w)]
		if deletes && strings.TrimRight(strings.TrimSuffix(w, "/."), "/") == a.root {
			continue
		}
		argv[i] = a.inRoot(w)
	}
	return argv
}
