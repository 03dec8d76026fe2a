package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// crontab judges a crontab command. crontab(1) (https://man7.org/linux/man-pages/man1/crontab.1.html):
// `crontab file` installs file as the user's table, `-` (or no file) reads it from standard
// input; -l lists it, -r removes it, -e edits it, -u names another user's table. Installing a
// table is persistence, and a careful reviewer asks about it (a tutorial's
// `( crontab -l ; echo "$cronjob" ) | crontab -`): what the jobs run is judged wherever the line
// shows it (a file or heredoc it wrote, an echo piped in: cronJobs), and a table downloaded or
// decoded on the line is refused (pipe, and here for a file).
func (a *analyzer) crontab(args []string, line string) {
	switch {
	case hasFlag(args, "-r"):
		a.add("destroy/crontab_remove", "removes every scheduled job of the user", line, 0.85)
	case hasFlag(args, "-l"):
	case installsCrontab(args):
		a.ask("hide/persistence", "installs a scheduled job (persistence)", line, 0.75)
		ops := operands(args)
		if len(ops) == 0 || ops[0] == "-" {
			return // standard input: the pipe or heredoc that feeds it is judged there
		}
		k := a.fileKey(ops[0])
		switch text, ok := a.written[k]; {
		case remote(ops[0]) || a.fetched[k]:
			a.add("hide/persistence", "installs a scheduled job from downloaded content", line, 0.9)
		case ok:
			a.cronJobs(text)
		}
	default:
		// -e (an editor a variable may name), -u (another user's table), options this
		// judgement does not know.
		a.add("hide/persistence", "installs a scheduled job", line, 0.75)
	}
}

// installsCrontab reports whether crontab's arguments install a table from a file or standard
// input: at most one operand and no option.
func installsCrontab(args []string) bool {
	if len(args) > 1 {
		return false
	}
	return len(args) == 0 || args[0] == "-" || !strings.HasPrefix(args[0], "-")
}

// cronJobs judges the commands of crontab text as lines of their own. crontab(5)
// (https://man7.org/linux/man-pages/man5/crontab.5.html): blank lines, `#` comments and
// `NAME = value` settings are not jobs; a job is five time fields, or one `@reboot`-style
// nickname, then the command.
func (a *analyzer) cronJobs(text string) {
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		n := 5
		if strings.HasPrefix(f[0], "@") {
			n = 1
		} else if strings.Contains(f[0], "=") {
			continue
		}
		if len(f) <= n {
			continue
		}
		// The command is the rest of the line after the time fields, as written.
		rest := l
		for range n {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[strings.IndexAny(rest+" ", " \t"):]
		}
		a.line(strings.TrimSpace(rest), a.depth+1)
	}
}

// cronHeredoc judges the table a heredoc feeds to crontab (`crontab - <<EOF`).
func (a *analyzer) cronHeredoc(argv []string, redirs []*syntax.Redirect) {
	argv = unwrap(argv)
	if len(argv) == 0 || base(argv[0]) != "crontab" || !installsCrontab(argv[1:]) {
		return
	}
	if ops := operands(argv[1:]); len(ops) > 0 && ops[0] != "-" {
		return
	}
	for _, r := range redirs {
		w := r.Hdoc
		if r.Op == syntax.WordHdoc {
			w = r.Word
		}
		if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc) && w != nil {
			a.cronJobs(a.literal(w))
		}
	}
}
