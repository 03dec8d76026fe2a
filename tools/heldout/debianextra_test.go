package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRoffInline: roff's escapes decode to the text a reader sees; one this reader does not
// know marks the line.
func TestRoffInline(t *testing.T) {
	for in, want := range map[string]string{
		`\fBfind\fR /tmp \-name core \-print0`:   "find /tmp -name core -print0",
		`git log v2\&.6\&.12\&.\&. include/scsi`: "git log v2.6.12.. include/scsi",
		`printf \(aq%s\en\(aq "$x"`:              `printf '%s\n' "$x"`,
		`\f(CWls \-l\fP \*(C+ \[em] \(lqa\(rq`:   "ls -l C++ \u2014 \u201ca\u201d",
		`a\ b\~c\|d\s-1SMALL\s+1`:                "a b cdSMALL",
		`text \" a comment`:                      "text",
	} {
		got, ok := roffInline(in)
		if got != want || !ok {
			t.Errorf("roffInline(%q) = %q, %v; want %q, true", in, got, ok, want)
		}
	}
	if _, ok := roffInline(`width \w'abc' here`); ok {
		t.Error(`\w'...' decoded as known`)
	}
	if got := roffArgs(`"a ""quoted"" word" b  c`); !slices.Equal(got, []string{`a "quoted" word`, "b", "c"}) {
		t.Errorf("roffArgs = %q", got)
	}
}

// manTexts runs manPage on a page and returns its prose and shell candidates, in order.
func manTexts(src, name string, commands ...string) []string {
	known := map[string]bool{}
	for _, c := range commands {
		known[c] = true
	}
	var got []string
	manPage(parseRoff(src, name), known, false, func(kind, text string, line int) {
		if kind != "doc_output" {
			got = append(got, kind+": "+text)
		}
	})
	return got
}

// TestManPageExamples: a man(7) page's example commands (literal blocks, prompted lines only
// where there are prompts, bold example lines; continuations, heredoc bodies), its long
// description paragraphs, and nothing from output, prose, placeholders, macro definitions or
// callouts.
func TestManPageExamples(t *testing.T) {
	src := `.\" a comment
.de XX
.SH NOT A SECTION
..
.TH DEMO 1
.SH NAME
demo \- show things
.SH DESCRIPTION
.B demo
reads each
.I file
and writes what it finds to standard output, one line for each entry it reads.
.PP
Too short to be prose.
.SH EXAMPLES
To list the files:
.PP
.nf
.RS 4
$ demo \-l /tmp
total 0
$ demo \-\-all \e
    /srv | sort \-u
.RE
.fi
.PP
.EX
demo \-x file.txt
Output goes here
# demo \-\-root /
demo <file>
git commit \-a  (2)
demo \-\-list |
    sort
cat >cfg <<END
key = value
END
.EE
.PP
\fBdemo \-\-verbose\fR
.RS 4
Say more.
.RE
.SH SEE ALSO
.nf
$ demo \-\-help
demo version 1
.fi
.nf
demo \-\-not\-prompted
.fi
`
	got := manTexts(src, "demo", "demo", "sort", "git", "cat")
	want := []string{
		"prose: demo reads each file and writes what it finds to standard output, one line for each entry it reads.",
		"shell: demo -l /tmp",
		"shell: demo --all \\\n    /srv | sort -u",
		"shell: demo -x file.txt",
		"shell: demo --root /",
		"shell: git commit -a",
		"shell: demo --list |\n    sort",
		"shell: cat >cfg <<END\nkey = value\nEND",
		"shell: demo --verbose",
		"shell: demo --help",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestManPagePromptedParas: with promptedParas, a one-line prompted paragraph outside
// EXAMPLES whose first word is known is a command; prose, an unknown word and a line without
// a prompt are not; without it, none is.
func TestManPagePromptedParas(t *testing.T) {
	src := `.TH DEMO 1
.SH OPTIONS
.TP
\fB\-\-all
Show all.
.br
Example:
.br
$ demo \-\-all
.br
# sudo demo \-\-root
.br
$ other \-\-all
.br
demo \-\-plain
`
	known := map[string]bool{"demo": true}
	var got []string
	manPage(parseRoff(src, "demo"), known, true, func(kind, text string, line int) {
		if kind == "shell" {
			got = append(got, text)
		}
	})
	if want := []string{"demo --all", "sudo demo --root"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := manTexts(src, "demo", "demo"); len(got) != 0 {
		t.Errorf("without promptedParas: %q", got)
	}
}

// TestMdocPage: an mdoc(7) page: .Dl and .Bd -literal examples, inline macros in prose, and a
// paragraph with a macro this reader does not know left out.
func TestMdocPage(t *testing.T) {
	src := `.Dd $Mdocdate$
.Dt NC 1
.Sh DESCRIPTION
The
.Nm
utility is used for just about anything under the sun involving
.Tn TCP
or
.Xr udp 4 .
.Pp
With
.Fl l ,
.Nm
listens on the given
.Ar port
for an incoming connection instead of making one to a remote host, as
.Xr inetd 8
would.
.Sh EXAMPLES
.Dl $ nc -l 1234
.Bd -literal -offset indent
$ nc host.example.com 42 < file
.Ed
`
	got := manTexts(src, "nc", "nc")
	want := []string{
		"prose: With -l, nc listens on the given port for an incoming connection instead of making one to a remote host, as inetd(8) would.",
		"shell: nc -l 1234",
		"shell: nc host.example.com 42 < file",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDebianExtraRecords: a known text is dropped (counted once), a page is a fetch tool's
// answer from manpages.debian.org, a package document a read tool's, commands Bash calls; a
// kind the set does not take is left out.
func TestDebianExtraRecords(t *testing.T) {
	m := goModule{Path: "debian:demo", Version: "1.0-1", Name: "demo"}
	c := func(kind, text, rel string) candidate {
		return candidate{kind: kind, text: text, mod: m, rel: rel, source: "debian:demo@1.0-1/" + rel + ":1", group: "debian:demo/" + rel}
	}
	cands := []candidate{
		c("doc_output", "NAME\ndemo - show things\n", "usr/share/man/man8/demo.8.gz"),
		c("doc_output", "demo for Debian\n---------------\n", "usr/share/doc/demo/README.Debian.gz"),
		c("shell", "demo -l /tmp", "usr/share/man/man8/demo.8.gz"),
		c("shell", "ls -la", "usr/share/man/man8/demo.8.gz"),
		c("shell", "ls -la", "usr/share/man/man8/demo.8.gz"),
		c("url", "https://example.com", "usr/share/doc/demo/README"),
	}
	recs, dropped := debianExtraRecords(cands, map[string]bool{"ls -la": true})
	if dropped != 1 || len(recs) != 3 {
		t.Fatalf("dropped %d, %d records %+v; want 1 and 3", dropped, len(recs), recs)
	}
	want := map[string]string{
		`fetch/fetch response {"url":"https://manpages.debian.org/bookworm/demo/demo.8.en.html"}`: "NAME\ndemo - show things\n",
		`files/read_file response {"path":"/usr/share/doc/demo/README.Debian"}`:                   "demo for Debian\n---------------\n",
		`/Bash request {"command":"demo -l /tmp"}`:                                                "demo -l /tmp",
	}
	for _, r := range recs {
		k := r.Server + "/" + r.Tool + " " + r.Phase + " " + string(r.Arguments)
		if w, ok := want[k]; !ok || w != r.Text || r.Label != "benign" {
			t.Errorf("unexpected record %s: %q", k, r.Text)
		}
	}
}

// Each Debian package is pinned to a version with its licence, once.
func TestDebianPackagesPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range debianPackages {
		if p.Version == "" || p.License == "" || seen[p.Name] {
			t.Errorf("%s: version %q, licence %q (names must be unique)", p.Name, p.Version, p.License)
		}
		seen[p.Name] = true
	}
}

// TestDebianExtraByteIdentical: the committed debian-extra set is what the generator writes (it
// downloads the packages with apt-get into build/_heldout-src once; skipped with -short or
// without apt-get and dpkg-deb).
func TestDebianExtraByteIdentical(t *testing.T) {
	heldout := filepath.Join("..", "..", "data", "heldout")
	regenerateDebSet(t, "debian-extra", "heldout-debian-extra", func(out, cache string, log *bytes.Buffer) error {
		return generateDebianExtra(out, cache, debianOthers(heldout), log)
	})
}

// TestHardNegExtraByteIdentical: the committed hardneg-extra set is what the generator writes,
// every record a benign hard negative.
func TestHardNegExtraByteIdentical(t *testing.T) {
	heldout := filepath.Join("..", "..", "data", "heldout")
	out := regenerateDebSet(t, "hardneg-extra", "heldout-hardneg-extra", func(out, cache string, log *bytes.Buffer) error {
		return generateHardNegExtra(out, cache, hardNegOthers(heldout), log)
	})
	n := 0
	err := recordKeys(filepath.Join(out, "calib.jsonl"), map[string]bool{}, func(r Record) (string, bool) {
		if n++; r.Label != "benign" || !r.HardNegative {
			t.Errorf("%s: label %q, hard_negative %v", r.Source, r.Label, r.HardNegative)
		}
		return "", false
	})
	if err != nil || n == 0 {
		t.Fatalf("%d records, %v", n, err)
	}
}

// Each hard-negative package is pinned with its licence, once, and none is one of
// debian-extra's.
func TestHardNegPackagesPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range debianPackages {
		seen[p.Name] = true
	}
	for _, p := range hardNegPackages {
		if p.Version == "" || p.License == "" || seen[p.Name] {
			t.Errorf("%s: version %q, licence %q (names must be unique, none of debian-extra's)", p.Name, p.Version, p.License)
		}
		seen[p.Name] = true
	}
}

// TestHardNegNotCommand: PAM configuration lines, sentences, plain words, prose that closes a
// parenthesis and several-word placeholders are not commands; commands, with or without
// operators, are.
func TestHardNegNotCommand(t *testing.T) {
	for text, want := range map[string]bool{
		"su      auth     required       pam_unix.so":            true,
		"login   -session optional /lib/security/pam_lastlog.so": true,
		"su authentication. Root is granted access by default.":  true,
		"sudo firejail --caps /etc/init.d/nginx start":           false,
		"su - root":                                            false,
		"auditctl -w /etc/shadow -p wa":                        false,
		"echo done. Next step. | tee log.":                     false,
		"verify IP addresses":                                  true,
		"as well as user name, whereas home directory will be": true,
		"users listed in /etc/ftpusers)":                       true,
		"psad -c <config file> -s <signatures file>":           true,
		"firejail icecat":                                      false,
		"cat testfile | sigtool --hex-dump > testfile.hex":     false,
		"cat <<EOF > cfg":                                      false,
		"nmap -v -iR 100000 -Pn -p 80":                         false,
		"(cd /tmp && ls)":                                      false,
	} {
		if got := hardNegNotCommand.MatchString(text); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}

// TestDebRecordsHardNegative: with hardNeg, every placed record is a hard negative; without,
// only those attackWords marks.
func TestDebRecordsHardNegative(t *testing.T) {
	m := goModule{Path: "debian:demo", Version: "1.0-1", Name: "demo"}
	cands := []candidate{{kind: "prose", text: "the daemon reads its configuration at start", mod: m,
		rel: "usr/share/man/man8/demo.8.gz", source: "debian:demo@1.0-1/usr/share/man/man8/demo.8.gz:3", group: "debian:demo/x"}}
	for _, hn := range []bool{false, true} {
		recs, _ := debRecords(cands, nil, map[string]int{"prose": 10}, hn)
		if len(recs) != 1 || recs[0].HardNegative != hn {
			t.Errorf("hardNeg %v: %+v", hn, recs)
		}
	}
}

// regenerateDebSet runs gen, a generator that downloads Debian packages with apt-get into
// build/_heldout-src, into a new folder and checks it writes data/heldout/<name> byte for
// byte (make target for the message); it returns that folder. Skipped with -short, without
// apt-get and dpkg-deb, or when a pinned version is no longer offered.
func regenerateDebSet(t *testing.T, name, target string, gen func(out, cache string, log *bytes.Buffer) error) string {
	t.Helper()
	if testing.Short() {
		t.Skip("downloads Debian packages")
	}
	for _, c := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skip("no " + c)
		}
	}
	root := filepath.Join("..", "..")
	out := t.TempDir()
	var log bytes.Buffer
	if err := gen(out, filepath.Join(root, "build", "_heldout-src"), &log); err != nil {
		if errors.Is(err, errDebNotOffered) {
			// Debian's mirror keeps only a release's current versions: once a pinned one is
			// replaced, the set cannot be fetched again here (snapshot.debian.org keeps it).
			t.Skipf("cannot regenerate the committed set on this host: %v", err)
		}
		t.Fatal(err)
	}
	checkRegenerated(t, out, filepath.Join(root, "data", "heldout"), name, target)
	return out
}

// TestNotOffered: apt-get's answers for a version the mirror no longer has, and for a package
// its lists do not know, are "not offered"; a network failure is not.
func TestNotOffered(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{"E: Version '9.0-1' for 'coreutils' was not found", true},
		{"E: Unable to locate package coreutilz", true},
		{"E: Failed to fetch http://deb.debian.org/debian/pool/main/c/coreutils/coreutils_9.1-1_amd64.deb  Temporary failure resolving 'deb.debian.org'", false},
	} {
		if got := notOffered(tc.out); got != tc.want {
			t.Errorf("notOffered(%q) = %v, want %v", tc.out, got, tc.want)
		}
	}
}
