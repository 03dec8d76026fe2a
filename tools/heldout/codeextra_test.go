package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCodeExtraByteIdentical: the committed code-extra set (calib.jsonl, COUNTS.md and
// dropped.jsonl) is what the generator writes, every record benign code or code_output.
func TestCodeExtraByteIdentical(t *testing.T) {
	heldout := filepath.Join("..", "..", "data", "heldout")
	out := regenerateDebSet(t, "code-extra", "heldout-code-extra", func(out, cache string, log *bytes.Buffer) error {
		return generateCodeExtra(out, cache, codeOthers(heldout), log)
	})
	got, err := os.ReadFile(filepath.Join(out, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want, err := os.ReadFile(filepath.Join(heldout, "code-extra", "dropped.jsonl")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("dropped.jsonl: regenerated file differs from data/heldout/code-extra/dropped.jsonl (run make heldout-code-extra), %v", err)
	}
	n := 0
	err = recordKeys(filepath.Join(out, "calib.jsonl"), map[string]bool{}, func(r Record) (string, bool) {
		if n++; r.Label != "benign" || (r.Kind != "code" && r.Kind != "code_output") {
			t.Errorf("%s: label %q, kind %q", r.Source, r.Label, r.Kind)
		}
		return "", false
	})
	if err != nil || n == 0 {
		t.Fatalf("%d records, %v", n, err)
	}
}

// Each code package is pinned with its licence, once, and none is one of the other Debian
// sets'.
func TestCodeExtraPackagesPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range append(append([]debPackage{}, debianPackages...), hardNegPackages...) {
		seen[p.Name] = true
	}
	for _, p := range codeExtraPackages {
		if p.Version == "" || p.License == "" || seen[p.Name] {
			t.Errorf("%s: version %q, licence %q (names must be unique, none of the other Debian sets')", p.Name, p.Version, p.License)
		}
		seen[p.Name] = true
	}
}

// TestCodeLanguage: by extension, else by the #! line; other files have none.
func TestCodeLanguage(t *testing.T) {
	for _, tc := range []struct{ rel, src, want string }{
		{"usr/lib/python3/dist-packages/django/db/models/query.py", "", "python"},
		{"usr/share/roundcube/program/include/rcmail.inc", "<?php", "php"},
		{"usr/share/phpmyadmin/templates/table/structure.twig", "", "html"},
		{"usr/sbin/dkms", "#!/bin/bash\n", "shell"},
		{"etc/etckeeper/pre-commit.d/20warn-problem-files", "#!/bin/sh\n", "shell"},
		{"usr/bin/tool", "#!/usr/bin/env python3\n", "python"},
		{"usr/share/doc/dkms/README", "text", ""},
		{"usr/share/etckeeper/style.css", "a{}", ""},
	} {
		if got := codeLanguage(tc.rel, tc.src); got != tc.want {
			t.Errorf("codeLanguage(%q) = %q, want %q", tc.rel, got, tc.want)
		}
	}
}

// TestCodeConstruct: the hard-negative rule takes the listed constructs and leaves plain code.
func TestCodeConstruct(t *testing.T) {
	for text, want := range map[string]bool{
		"out = subprocess.run(cmd, check=True)":      true,
		"cursor.execute('SELECT id FROM auth_user')": true,
		`<button onclick="toggle()">`:                true,
		"el.innerHTML = html;":                       true,
		"{% include '../base.html' %}":               true,
		"rm -rf \"$tmpdir\"":                         true,
		"def add(a, b):\n    return a + b":           false,
		"function update(x) { return x.value; }":     false,
		"my $self = shift;\nreturn $self->{name};":   false,
	} {
		if got := codeConstruct.MatchString(text); got != want {
			t.Errorf("codeConstruct(%q) = %v, want %v", text, got, want)
		}
	}
}
