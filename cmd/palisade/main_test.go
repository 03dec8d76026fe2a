package main

import (
	"os"
	"sync"
	"testing"
)

// builtDirs are the folders this package's tests build binaries into once per test binary
// (sync.Once builders outlive any one test, so t.TempDir cannot hold them); TestMain removes
// them after the last test, so a full run leaves nothing behind in the temporary folder.
var builtDirs dirList

type dirList struct {
	mu   sync.Mutex
	dirs []string
}

func (l *dirList) add(dir string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dirs = append(l.dirs, dir)
}

func (l *dirList) removeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.dirs {
		os.RemoveAll(d)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	builtDirs.removeAll()
	os.Exit(code)
}
