package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestExpandRegexp: a pattern that names finitely many strings lists them; a repetition or a
// wide class names no file.
func TestExpandRegexp(t *testing.T) {
	for _, tc := range []struct {
		re   string
		want []string
	}{
		{`\.(bash_|zsh_|z)?history`, []string{".history", ".bash_history", ".zsh_history", ".zhistory"}},
		{`\.gem/credentials`, []string{".gem/credentials"}},
		{`\.xchat2?/servlist_?\.conf`, []string{".xchat/servlist.conf", ".xchat/servlist_.conf", ".xchat2/servlist.conf", ".xchat2/servlist_.conf"}},
		{`.*_rsa`, nil},
		{`(.*)?config(\.inc)?\.php`, nil},
		{`[a-z]+rc`, nil},
	} {
		t.Run(tc.re, func(t *testing.T) {
			got := expandRegexp(tc.re)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("expandRegexp(%q) = %q, want %q", tc.re, got, want)
			}
		})
	}
}

// TestDenyPatternPaths: literal and finite filename signatures give paths under the home folder
// (an optional leading dot taken); extension and "contains word" signatures give none.
func TestDenyPatternPaths(t *testing.T) {
	p := filepath.Join(t.TempDir(), "git-deny-patterns.json")
	body := `[
 {"part":"filename","type":"regex","pattern":"\\A\\.?netrc\\z","caption":"netrc"},
 {"part":"filename","type":"match","pattern":"credentials.xml","caption":"jenkins"},
 {"part":"extension","type":"match","pattern":"pem","caption":"key"},
 {"part":"filename","type":"regex","pattern":"password","caption":"word"}
]`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := denyPatternPaths(p, "x")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, a := range got {
		texts = append(texts, a.text)
	}
	want := []string{home + "/.netrc", home + "/credentials.xml"}
	if !slices.Equal(texts, want) {
		t.Errorf("got %q, want %q", texts, want)
	}
}

// TestHomePaths: the credential rules' paths and the home-folder rules, listed; config rules and
// placeholders left out.
func TestHomePaths(t *testing.T) {
	p := filepath.Join(t.TempDir(), "chunk.js")
	body := `var Ea=[{id:"a",category:"Home path",label:"~/.ssh",description:"x",suffixParts:[".ssh"]}],` +
		`vi=[{id:"b",category:"Coding CLI credential",label:"Codex credentials",paths:["~/.codex/auth.json","<project>/.x"]},` +
		`{id:"c",category:"Coding CLI config",label:"Codex config",paths:["~/.codex/config.toml"]}];`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := homePaths(p, "x")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, a := range got {
		if !a.listed {
			t.Errorf("%s: not listed", a.text)
		}
		texts = append(texts, a.text)
	}
	want := []string{home + "/.codex/auth.json", home + "/.ssh"}
	if !slices.Equal(texts, want) {
		t.Errorf("got %q, want %q", texts, want)
	}
}
