package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLineAttacks: one payload per line, "# " lines are comments, CR line ends are cut, and
// each line's source names its line number.
func TestLineAttacks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(p, []byte("# from somewhere\r\n' or 1=1--\r\n#1\nadmin'#\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := lineAttacks(p, "x/list.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []attack{
		{label: "sql_injection", text: "' or 1=1--", source: "x/list.txt:2"},
		{label: "sql_injection", text: "#1", source: "x/list.txt:3"},
		{label: "sql_injection", text: "admin'#", source: "x/list.txt:4"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestLibinjectionInputs: the --INPUT-- section of each test file, multi-line inputs joined.
func TestLibinjectionInputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"test-sqli-001.txt":   "--TEST--\nx\n--INPUT--\n1' or 1=1\n--EXPECTED--\ns&1\n",
		"test-sqli-002.txt":   "--TEST--\nx\n--INPUT--\n1\nunion select 2\n--EXPECTED--\n1UE\n",
		"test-tokens-001.txt": "--TEST--\nx\n--INPUT--\nnot read\n--EXPECTED--\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, "tests", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := libinjectionInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].text != "1' or 1=1" || got[1].text != "1\nunion select 2" {
		t.Errorf("got %+v", got)
	}
}
