//go:build unix

package pgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindBinMissing: without PostgreSQL binaries the error says how to install them (Start
// turns it into a test failure, never a skip).
func TestFindBinMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := findBin(filepath.Join(t.TempDir(), "*", "bin"))
	if err == nil || !strings.Contains(err.Error(), "make setup") || !strings.Contains(err.Error(), "initdb") {
		t.Fatalf("findBin with nothing installed: %v; want an error naming initdb and make setup", err)
	}
}

// TestFindBinNewest: of several versions the newest is used, then PATH.
func TestFindBinNewest(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9", "15", "13"} {
		d := filepath.Join(root, v, "bin")
		os.MkdirAll(d, 0o755)
		for _, f := range []string{"initdb", "pg_ctl"} {
			os.WriteFile(filepath.Join(d, f), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	got, err := findBin(filepath.Join(root, "*", "bin"))
	if err != nil || got != filepath.Join(root, "15", "bin") {
		t.Fatalf("findBin = %q, %v; want version 15", got, err)
	}
	onPath := filepath.Join(root, "9", "bin")
	t.Setenv("PATH", onPath)
	if got, err := findBin(filepath.Join(t.TempDir(), "*", "bin")); err != nil || got != onPath {
		t.Fatalf("findBin from PATH = %q, %v; want %s", got, err, onPath)
	}
}

// TestStartRestart: a cluster starts (as palisade-pgtest when root), answers, survives a
// restart, and keeps what was committed.
func TestStartRestart(t *testing.T) {
	c := Start(t)
	if _, err := c.Psql("CREATE TABLE x (n int); INSERT INTO x VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	c.Restart()
	if out, err := c.Psql("SELECT n FROM x"); err != nil || out != "42" {
		t.Fatalf("after restart: %q, %v", out, err)
	}
	if os.Geteuid() == 0 {
		fi, err := os.Stat(c.DataDir())
		if err != nil {
			t.Fatal(err)
		}
		if owner := fileOwner(fi); owner == 0 {
			t.Fatalf("data dir owned by root; want %s", User)
		}
	}
}
