package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWapitiExtraFill: each marker gets the fixed value the file's doc lists, [VALUE] the
// ordinary value of the class's field.
func TestWapitiExtraFill(t *testing.T) {
	for _, tc := range []struct{ in, label, want string }{
		{"' or sleep([TIME])#[LF]1", "sql_injection", "' or sleep(5)#\n1"},
		{"'[TAB]and[TAB]pg_sleep([TIME])--1", "sql_injection", "'\tand\tpg_sleep(5)--1"},
		{"[VALUE];waitfor delay '0:0:[TIME]'--1", "sql_injection", "laptop;waitfor delay '0:0:5'--1"},
		{"a;sleep 60;[TIMEOUT]", "command_injection", "a;sleep 60;"},
		{"[VALUE][LF]env;", "command_injection", "example.com\nenv;"},
		{`[DIRVALUE]/../etc/passwd\0`, "path_traversal", "docs/../etc/passwd\x00"},
		{`[VALUE]/../etc/passwd\0.[EXTVALUE]`, "path_traversal", "docs/index.html/../etc/passwd\x00.html"},
		{"[EXTERNAL_ENDPOINT]e.php", "ssrf", "http://wapiti3.ovh/e.php"},
		{"<ScRiPt>alert('__XSS__')</sCrIpT>", "xss", "<ScRiPt>alert('w4p1t1')</sCrIpT>"},
		{"[ATTR_SEP]autofocus/onfocus=[VALUE_SEP]alert(/__XSS__/)", "xss", `"autofocus/onfocus="alert(/w4p1t1/)`},
		{"0[FF]<sCripT[FF]>", "xss", "0\f<sCripT\f>"},
	} {
		if got := wapitiFill(tc.in, tc.label); got != tc.want {
			t.Errorf("wapitiFill(%q, %s) = %q, want %q", tc.in, tc.label, got, tc.want)
		}
	}
}

// TestWapitiExtraIni: only `payload` keys are read, classed per line in fileHandlingPayloads.ini
// (URLs as SSRF, the rest as traversal; an absolute path listed), numbered by line.
func TestWapitiExtraIni(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.ini")
	ini := "; comment\n[a]\npayload = [EXTERNAL_ENDPOINT]e.php\nrules = x\n    y\n[b]\npayload = /etc/passwd\\0\n[c]\npayload = file:///etc/passwd\n[d]\npayload = ../../etc/services\n"
	if err := os.WriteFile(p, []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := iniPayloads(p, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []attack{
		{label: "ssrf", text: "http://wapiti3.ovh/e.php", source: "x:3"},
		{label: "path_traversal", text: "/etc/passwd\x00", source: "x:7", listed: true},
		{label: "ssrf", text: "file:///etc/passwd", source: "x:9"},
		{label: "path_traversal", text: "../../etc/services", source: "x:11"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestWapitiExtraDrop: the set's own drop rules, per class.
func TestWapitiExtraDrop(t *testing.T) {
	for _, tc := range []struct {
		label, text string
		keep        bool
	}{
		{"sql_injection", "' or sleep(5)#1", true},
		{"sql_injection", "1 or sleep(5)#1", true},
		{"sql_injection", "1)/**/and/**/pg_sleep(5)--1", true},
		{"sql_injection", "');waitfor delay '0:0:5'--1", true},
		{"sql_injection", "sleep(5)#1", false},
		{"sql_injection", "laptop,sleep(5)#1", false},
		{"sql_injection", "';d=new Date();do{cd=new Date();}while(cd-d<10000);//", false},
		{"sql_injection", "sleep or wake", false},
		{"command_injection", "a;sleep 60;", true},
		{"command_injection", "data:;base64,PD9waHAgZWNobyAndzRwMXQxJzsgPz4=", false},
		{"path_traversal", "[FILE_NAME]::$DATA", false},
		{"path_traversal", "../../etc/passwd", true},
		{"ssrf", "http://wapiti3.ovh/e.php", false},
		{"ssrf", "file:///etc/passwd", true},
	} {
		why := wapitiExtraDrop(attack{label: tc.label, text: tc.text})
		if (why == "") != tc.keep {
			t.Errorf("%s %q: drop reason %q, want kept %v", tc.label, tc.text, why, tc.keep)
		}
	}
}

// TestWapitiExtraByteIdentical: the committed wapiti-extra set is what the generator writes
// (it downloads wapiti with apt-get into build/_heldout-src once; skipped with -short, without
// apt-get and dpkg-deb, or when the pinned version is no longer offered).
func TestWapitiExtraByteIdentical(t *testing.T) {
	heldout := filepath.Join("..", "..", "data", "heldout")
	out := regenerateDebSet(t, "wapiti-extra", "heldout-wapiti-extra", func(out, cache string, log *bytes.Buffer) error {
		return generateWapitiExtra(out, cache, wapitiOthers(heldout), log)
	})
	checkDroppedRegenerated(t, out, heldout, "wapiti-extra", "heldout-wapiti-extra")
}
