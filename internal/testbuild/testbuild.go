// Package testbuild gives test binaries folders for what their tests build once (a binary, a
// Wasm module) and removes them after the last test. A sync.Once builder outlives any one test,
// so t.TempDir cannot hold its output, and without this a full `make test` left about 300 MB
// in the temporary folder.
//
// A package that uses TempDir declares:
//
//	func TestMain(m *testing.M) { testbuild.Main(m) }
package testbuild

import (
	"os"
	"sync"
	"testing"
)

var made struct {
	sync.Mutex
	dirs []string
}

// TempDir makes a new folder in the temporary folder (os.MkdirTemp("", prefix)) that Main
// removes once the test binary's tests have run.
func TempDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	made.Lock()
	made.dirs = append(made.dirs, dir)
	made.Unlock()
	return dir, nil
}

// Main runs m's tests, removes every folder TempDir made, and exits with the tests' code.
func Main(m *testing.M) {
	code := m.Run()
	made.Lock()
	for _, d := range made.dirs {
		os.RemoveAll(d)
	}
	made.Unlock()
	os.Exit(code)
}
