package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAttacksExtraDecodeOnce: percent escapes are decoded once; a `+`, an invalid escape and an
// escape that decodes to bytes that are not UTF-8 stay as written.
func TestAttacksExtraDecodeOnce(t *testing.T) {
	for in, want := range map[string]string{
		"'%20or%201=1":     "' or 1=1",
		"%252e%252e/x":     "%2e%2e/x",
		"a+b":              "a+b",
		"%%32%65/x":        "%%32%65/x",
		"%c0%ae%c0%ae/x":   "%c0%ae%c0%ae/x",
		"<>\"'%;)(&+":      "<>\"'%;)(&+",
		"plain ../x":       "plain ../x",
		"..%2f..%2fboot.x": "../../boot.x",
	} {
		if got := decodeOnce(in); got != want {
			t.Errorf("decodeOnce(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAttacksExtraDrop: the set's own drop rule, per class: SQL that changes a query is kept and
// a lone quote, keyword, function, number or punctuation is dropped; XML without script and
// traversal templates are dropped.
func TestAttacksExtraDrop(t *testing.T) {
	const xml = "deb:wfuzz@3.1.0-2/usr/share/wfuzz/wordlist/Injections/XML.txt:3"
	for _, tc := range []struct {
		label, text, source string
		keep                bool
	}{
		{"sql_injection", "' or 1=1--", "", true},
		{"sql_injection", "hi\") or (\"a\"=\"a", "", true},
		{"sql_injection", "admin'#", "", true},
		{"sql_injection", "or 0=0 --", "", true},
		{"sql_injection", "/*x*/and/**/2=2", "", true},
		{"sql_injection", "1;SELECT *", "", true},
		{"sql_injection", "' UNION ALL SELECT", "", true},
		{"sql_injection", "'; exec master..xp_cmdshell", "", true},
		{"sql_injection", "'", "", false},
		{"sql_injection", "admin'", "", false},
		{"sql_injection", "select", "", false},
		{"sql_injection", "order by", "", false},
		{"sql_injection", "now()", "", false},
		{"sql_injection", "1e100", "", false},
		{"sql_injection", "= '", "", false},
		{"sql_injection", "' ;", "", false},
		{"sql_injection", "*(|(mail=*))", "", false},
		{"sql_injection", "O'Brien and sons", "", false},
		{"xss", "<script>alert(1)</script>", "", true},
		{"xss", "<![CDATA[<]]>SCRIPT<![CDATA[>]]>alert(1)", xml, true},
		{"xss", "<IMG SRC=\"javas<!-- -->cript:alert(1)\">", xml, true},
		{"xss", "<!DOCTYPE foo [<!ENTITY xxe SYSTEM \"file:///etc/hostname\">]><foo>&xxe;</foo>", xml, false},
		{"xss", "count(/child::node())", xml, false},
		{"path_traversal", "../../{FILE}", "", false},
		{"path_traversal", "../../boot.ini", "", true},
	} {
		why := attacksExtraDrop(attack{label: tc.label, text: tc.text, source: tc.source})
		if (why == "") != tc.keep {
			t.Errorf("%s %q: drop reason %q, want kept %v", tc.label, tc.text, why, tc.keep)
		}
	}
}

// TestAttacksExtraWordlist: CR line ends cut, blank and "# " lines skipped, escapes decoded,
// sources numbered by line.
func TestAttacksExtraWordlist(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l.txt")
	if err := os.WriteFile(p, []byte("# head\r\n'%20--\r\n\r\n#\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := wordlistAttacks(p, "x", "sql_injection", decodeOnce)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].text != "' --" || got[0].source != "x:2" || got[1].text != "#" || got[1].source != "x:4" {
		t.Errorf("got %+v", got)
	}
}

// TestAttacksExtraByteIdentical: the committed attacks-extra set is what the generator writes
// (it downloads wfuzz with apt-get into build/_heldout-src once; skipped with -short, without
// apt-get and dpkg-deb, or when the pinned version is no longer offered).
func TestAttacksExtraByteIdentical(t *testing.T) {
	heldout := filepath.Join("..", "..", "data", "heldout")
	out := regenerateDebSet(t, "attacks-extra", "heldout-attacks-extra", func(out, cache string, log *bytes.Buffer) error {
		return generateAttacksExtra(out, cache, attacksExtraOthers(heldout), log)
	})
	checkDroppedRegenerated(t, out, heldout, "attacks-extra", "heldout-attacks-extra")
}

// checkDroppedRegenerated checks that out/dropped.jsonl is data/heldout/<set>/dropped.jsonl
// byte for byte (make target for the message).
func checkDroppedRegenerated(t *testing.T, out, heldout, set, target string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(out, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(heldout, set, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("dropped.jsonl: regenerated file differs (run make %s)", target)
	}
}
