package detect

import (
	"path"
	"strings"
	"unicode"

	"github.com/added060/palisade/plugins/internal/argkind"
	"github.com/added060/palisade/plugins/internal/shell"
)

// A tool named for deleting files (`delete_file`, `remove_directory`, `rmdir`, an MCP
// filesystem server's `delete`) with a path argument does what `rm` does with that path, but
// its path alone was judged as a path: `{"path": "~"}` and `{"path": "/"}` had no finding,
// while the same deletion as a shell line is refused (issue 26, det67). deleteLeaves adds the
// shell line the call amounts to, so the shell package judges it as it judges rm: `rm -rf --
// PATH` for a tool that deletes folders (its name says dir, directory, folder, tree or
// rmdir) and for a path no file tool has a reason to be given (the root, a home folder, a
// top system folder, a glob of one of them, `..` alone: nearRoot); `rm -f -- PATH` for a
// file tool's other paths. What the server does with a folder given to a file tool is not
// known, so that a home folder is named is taken as meant. A path inside the working
// directory the envelope names (`cwd`, the hook's project) is written relative to it, as a
// shell line run there would name it: `/home/dev/project/src/old.go` is `src/old.go`, when
// that directory can be a project's (shell.ProjectRoot: not a home, top-level or system
// folder, det68).

// callLeaves returns a call's argument leaves with the shell lines they amount to added: an
// argv array's line, a code tool's one-liner (argv.go), a delete tool's rm (deleteLeaves).
// Each Shell leaf runs in cwd unless a `cwd` argument beside it named its folder (cwdLeaves).
func callLeaves(leaves []leaf, tool, cwd string) []leaf {
	leaves = deleteLeaves(codeLeaves(argvLeaves(leaves, tool), tool), tool, cwd)
	for i := range leaves {
		if leaves[i].kind == argkind.Shell && leaves[i].root == "" {
			leaves[i].root = cwd
		}
	}
	return leaves
}

// deleteVerbs are the words of a tool's name that say it deletes.
var deleteVerbs = map[string]bool{"delete": true, "remove": true, "rm": true, "rmdir": true, "unlink": true,
	"erase": true, "trash": true, "del": true, "rmtree": true, "wipe": true}

// dirWords are the words of a delete tool's name that say it deletes a folder with what is in it.
var dirWords = map[string]bool{"dir": true, "directory": true, "directories": true, "folder": true,
	"folders": true, "tree": true, "rmdir": true, "rmtree": true, "recursive": true, "recursively": true}

// deletePathKeys name the argument that holds the path a delete tool deletes.
var deletePathKeys = map[string]bool{"path": true, "paths": true, "file": true, "files": true, "file_path": true,
	"filepath": true, "filename": true, "file_name": true, "dir": true, "directory": true, "dir_path": true,
	"dirpath": true, "folder": true, "folder_path": true, "target": true, "targets": true, "target_path": true,
	"absolute_path": true, "relative_path": true}

// nameWords splits a tool's name, the server's prefix of an aggregated name dropped, into its
// lower-case words: `delete_file`, `remove-directory`, `deleteFile`, `fs.rmdir`.
func nameWords(tool string) []string {
	if i := strings.LastIndex(tool, "__"); i >= 0 {
		tool = tool[i+2:]
	}
	var words []string
	var w []rune
	flush := func() {
		if len(w) > 0 {
			words = append(words, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	for i, r := range tool {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && len(w) > 0 && !unicode.IsUpper(w[len(w)-1]):
			flush()
			w = append(w, r)
		default:
			w = append(w, r)
		}
	}
	flush()
	return words
}

// deleteTool reports whether tool's name says it deletes files, and whether it deletes
// folders with their content.
func deleteTool(tool string) (deletes, dirs bool) {
	t := strings.ToLower(tool) // no copy when already lower case: the served call allocates nothing here
	if !strings.Contains(t, "del") && !strings.Contains(t, "rem") && !strings.Contains(t, "rm") &&
		!strings.Contains(t, "unlink") && !strings.Contains(t, "erase") && !strings.Contains(t, "trash") &&
		!strings.Contains(t, "wipe") {
		return false, false
	}
	for _, w := range nameWords(tool) {
		deletes = deletes || deleteVerbs[w]
		dirs = dirs || dirWords[w]
	}
	return deletes, deletes && dirs
}

// deleteLeaves returns leaves with a Shell leaf added for each path argument of a delete
// tool: the rm line the call amounts to, run in cwd ("" when the envelope names none).
func deleteLeaves(leaves []leaf, tool, cwd string) []leaf {
	deletes, dirs := deleteTool(tool)
	if !deletes {
		return leaves
	}
	n := len(leaves)
	for i := 0; i < n; i++ {
		l := leaves[i]
		key, ok := strings.CutPrefix(l.path, "arguments.")
		if !ok {
			continue
		}
		if p, _, item := itemOf(key); item {
			key = p
		}
		p := strings.TrimSpace(l.text)
		if !deletePathKeys[strings.ToLower(key)] || p == "" || strings.ContainsAny(p, "\n\x00") {
			continue
		}
		if root := shell.ProjectRoot(cwd); root != "" {
			if rel, ok := strings.CutPrefix(path.Clean(p), root+"/"); ok {
				p = "./" + rel
			}
		}
		flags := "-f"
		if dirs || nearRoot(p) {
			flags = "-rf"
		}
		leaves = append(leaves, leaf{path: l.path, text: "rm " + flags + " -- " + pathWord(p), kind: argkind.Shell})
	}
	return leaves
}

// pathWord writes p as a shell word that expands as the agent wrote it: a variable
// (`$HOME`), a tilde and a glob stay live, anything else is quoted.
func pathWord(p string) string {
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,~*?${}") == "" {
		return p
	}
	return quoteWord(p)
}

// nearRoot reports whether p is a path no tool that deletes one file has a reason to be
// given: the root, a home folder ($HOME, ~, /home/NAME, /Users/NAME, /root, C:\Users\NAME),
// a folder straight under the root, a glob of one of them, or a climb alone (`..`, `../..`).
func nearRoot(p string) bool {
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && unicode.IsLetter(rune(p[0])) {
		p = p[2:] // a Windows drive: C:/Users/me is /Users/me
		if p == "" {
			p = "/"
		}
	}
	for _, h := range []string{"${HOME}", "$HOME", "~"} {
		if rest, ok := strings.CutPrefix(p, h); ok && (rest == "" || rest[0] == '/') {
			p = "/home/me" + rest
			break
		}
	}
	if strings.Trim(p, "./") == "" {
		return strings.Contains(p, "..") || strings.HasPrefix(p, "/") // `..`, `../..`, `/`
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if b := path.Base(c); strings.ContainsAny(b, "*?[") {
		c = path.Dir(c) // a glob's files are its folder's content
	}
	switch d := strings.Count(c, "/"); {
	case c == "/" || d == 1:
		return true
	case d == 2:
		return strings.HasPrefix(c, "/home/") || strings.HasPrefix(c, "/Users/")
	}
	return false
}
