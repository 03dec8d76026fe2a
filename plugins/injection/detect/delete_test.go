package detect

import (
	"slices"
	"testing"
)

// TestNearRoot: the paths no tool that deletes one file has a reason to be given (det67).
func TestNearRoot(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "~": true, "~/": true, "$HOME": true, "${HOME}/*": true, "/*": true, "/etc": true,
		"/home/dev": true, "/Users/me/": true, "/root": true, "..": true, "../..": true, `C:\`: true,
		`C:\Users\me`: true, "~/*": true,
		"~/notes.txt": false, "/home/dev/project/a.go": false, "/tmp/x/y": false, "../sibling/a.md": false,
		"src/old.go": false, ".": false, "./build": false, "build/*": false, `C:\Users\me\src\a.go`: false,
	} {
		if got := nearRoot(p); got != want {
			t.Errorf("nearRoot(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestDeleteTool: the words of a tool's name that say it deletes, and deletes folders.
func TestDeleteTool(t *testing.T) {
	for _, tc := range []struct {
		tool          string
		deletes, dirs bool
	}{
		{"delete_file", true, false}, {"fs__remove_directory", true, true}, {"deleteFolder", true, true},
		{"rmdir", true, true}, {"fs.unlink", true, false}, {"move_to_trash", true, false},
		{"read_file", false, false}, {"list_directory", false, false}, {"deleted_items_report", false, false},
	} {
		if d, r := deleteTool(tc.tool); d != tc.deletes || r != tc.dirs {
			t.Errorf("deleteTool(%q) = %v, %v; want %v, %v", tc.tool, d, r, tc.deletes, tc.dirs)
		}
	}
	if got := nameWords("mcp__fs__removeDirectoryRecursive"); !slices.Equal(got, []string{"remove", "directory", "recursive"}) {
		t.Errorf("nameWords = %q", got)
	}
}

// TestDeleteInCwd: an absolute path inside the envelope's working directory is the project's
// own file; the same path without one, or outside it, is judged as written.
func TestDeleteInCwd(t *testing.T) {
	in := []leaf{{path: "arguments.path", text: "/home/dev/project/src/old.go"}}
	for _, tc := range []struct{ cwd, want string }{
		{"/home/dev/project", "rm -f -- ./src/old.go"},
		{"/home/dev/project/", "rm -f -- ./src/old.go"},
		{"/home/dev/other", "rm -f -- /home/dev/project/src/old.go"},
		{"", "rm -f -- /home/dev/project/src/old.go"},
		// a working directory that cannot be a project's (shell.ProjectRoot, det68)
		{"/home/dev", "rm -f -- /home/dev/project/src/old.go"},
		{"/", "rm -f -- /home/dev/project/src/old.go"},
		{"/home", "rm -f -- /home/dev/project/src/old.go"},
	} {
		out := deleteLeaves(slices.Clone(in), "delete_file", tc.cwd)
		if len(out) != 2 || out[1].text != tc.want {
			t.Errorf("cwd %q: %+v, want %q", tc.cwd, out, tc.want)
		}
	}
}
