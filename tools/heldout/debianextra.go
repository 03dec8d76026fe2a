package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The extra benign Debian set (issue 26): a calib-only source written by `-debian-extra`, with
// no test split. Every other benign set comes from Go modules; this one takes real text of
// another family: the manual pages (English, sections 1, 5 and 8) and package documentation of
// Debian bookworm's developer and ops tools, picked by what they are (coreutils to systemd).
// From a page's EXAMPLES section come the commands (shell, a Claude Code Bash call): the lines
// of its literal blocks (.nf/.fi, .EX/.EE, .Bd -literal, .Dl) and its bold example lines, roff
// escapes decoded, a "$ " or "# " prompt taken off, output and prose lines left out (a line is
// a command when its first word, after VAR=value and sudo, names a page of the set or a shell
// builtin; in a block with prompts only the prompted lines are). From DESCRIPTION come the
// paragraphs of 12 words or more (prose, a Slack message). A whole page as plain text is a
// fetch tool's answer from manpages.debian.org, and a README or NEWS of /usr/share/doc a read
// tool's answer (doc_output, response phase). A text any other held-out set holds is dropped
// without being written anywhere: COUNTS.md gives only the count.

// debPackage is a Debian bookworm package fetched with `apt-get download Name=Version`;
// License is the License of its debian/copyright's "Files: *" paragraph (or its prose).
type debPackage struct {
	Name, Version, License string
}

var debianPackages = []debPackage{
	{"coreutils", "9.1-1", "GPL-3+"},
	{"findutils", "4.9.0-4", "GFDL-NIV-1.3+"},
	{"git-man", "1:2.39.5-0+deb12u3", "GPL-2"},
	{"openssh-client", "1:9.2p1-2+deb12u10", "OpenSSH"},
	{"rsync", "3.5.0+ds1-0+deb12u1", "GPL-3+"},
	{"tar", "1.34+dfsg-1.2+deb12u1", "GPL-3+"},
	{"curl", "7.88.1-10+deb12u15", "curl"},
	{"wget", "1.21.3-1+deb12u1", "GPL-3+"},
	{"iproute2", "6.1.0-3", "GPL-2"},
	{"procps", "2:4.0.2-3", "LGPL-2.1+"},
	{"util-linux", "2.38.1-5+deb12u3", "GPL-2+"},
	{"mount", "2.38.1-5+deb12u3", "GPL-2+"},
	{"fdisk", "2.38.1-5+deb12u3", "GPL-2+"},
	{"sed", "4.9-1+deb12u1", "GPL-3+"},
	{"gawk", "1:5.2.1-2", "GPL-3+"},
	{"grep", "3.8-5", "GPL-3+"},
	{"make", "4.3-4.1", "GPL-3+"},
	{"openssl", "3.0.22-1~deb12u2", "Apache-2.0"},
	{"gpg", "2.2.40-1.1+deb12u2", "GPL-3+"},
	{"gpgv", "2.2.40-1.1+deb12u2", "GPL-3+"},
	{"systemd", "252.39-1~deb12u2", "LGPL-2.1+"},
	{"apt", "2.6.2", "GPL-2+"},
	{"dpkg", "1.21.23", "GPL-2+"},
	{"dpkg-dev", "1.21.23", "GPL-2+"},
	{"sudo", "1.9.13p3-1+deb12u4", "ISC"},
	{"cron", "3.0pl1-162", "Paul-Vixie's-license"},
	{"diffutils", "1:3.8-4", "GPL-3+"},
	{"patch", "2.7.6-7", "GPL-3+"},
	{"less", "590-2.1~deb12u2", "GPL-3+ or Less"},
	{"file", "1:5.44-3", "BSD-2-Clause-alike"},
	{"bzip2", "1.0.8-5+b1", "BSD-variant"},
	{"xz-utils", "5.4.1-1+deb12u2", "PD"},
	{"gzip", "1.12-1", "GPL-3+"},
	{"zstd", "1.5.4+dfsg2-5", "BSD-3-clause or GPL-2"},
	{"unzip", "6.0-28+deb12u1", "Info-ZIP"},
	{"zip", "3.0-13+deb12u1", "Info-ZIP"},
	{"jq", "1.6-2.1+deb12u3", "MIT"},
	{"tmux", "3.3a-3", "ISC"},
	{"screen", "4.9.0-4", "GPL-3+"},
	{"lsof", "4.95.0-1", "Purdue"},
	{"strace", "6.1-0.1", "LGPL-2.1+"},
	{"bind9-dnsutils", "1:9.18.49-1~deb12u3", "MPL-2.0 and ISC and BSD-2-clause and BSD-3-clause"},
	{"iputils-ping", "3:20221126-1+deb12u1", "BSD-3-clause"},
	{"netcat-openbsd", "1.219-1", "BSD-3-Clause"},
	{"socat", "1.7.4.4-2", "GPL-2"},
	{"tcpdump", "4.99.3-1", "BSD-3-Clause"},
	{"bash", "5.2.15-2+b13", "GPL-3+"},
	{"man-db", "2.11.2-2", "GPL-2+"},
	{"e2fsprogs", "1.47.0-2+b2", "GPL-2"},
	{"logrotate", "3.21.0-1", "GPL-2"},
	{"openssh-server", "1:9.2p1-2+deb12u10", "OpenSSH"},
	{"iptables", "1.8.9-2", "GPL-2"},
	{"nftables", "1.0.6-2+deb12u2", "GPL-2"},
	{"sqlite3", "3.40.1-2+deb12u2", "public-domain"},
	{"postgresql-client-15", "15.20-0+deb12u1", "PostgreSQL"},
	{"redis-tools", "5:7.0.15-1~deb12u10", "BSD-3-clause"},
	{"psmisc", "23.6-1", "GPL-2+"},
	{"debianutils", "5.7-0.5~deb12u1", "GPL-2+"},
	{"adduser", "3.134", "GPL-2+"},
	{"passwd", "1:4.13+dfsg1-1+deb12u2", "BSD-3-clause"},
	{"bc", "1.07.1-3+b1", "GPL-2.0+"},
	{"ed", "1.19-1", "GPL-2+"},
	{"m4", "1.4.19-3", "GPL-3+"},
	{"quilt", "0.67+really0.66-1", "GPL-2+"},
	{"devscripts", "2.23.4+deb12u2", "GPL-2+"},
	{"debhelper", "13.11.4", "GPL-2+"},
	{"binutils-common", "2.40-2", "GPL-3+"},
	{"git", "1:2.39.5-0+deb12u3", "GPL-2"},
	{"cryptsetup-bin", "2:2.6.1-4~deb12u2", "GPL-2+ with OpenSSL exception"},
	{"nfs-common", "1:2.6.2-4+deb12u1", "GPL-2+"},
	{"inetutils-telnet", "2:2.4-2+deb12u3", "GPL-3+"},
	{"dnsmasq-base", "2.90-4~deb12u2", "GPL-2 or GPL-3"},
}

// debianExtraCap caps each kind by the lowest salted hash (sample, as kindCap does).
var debianExtraCap = map[string]int{"shell": 1500, "prose": 1100, "doc_output": 400}

// debianOthers lists the JSONL files of every other held-out set under root.
func debianOthers(root string) []string {
	return append(proseExtraOthers(root), must(filepath.Glob(filepath.Join(root, "prose-extra", "*.jsonl")))...)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// generateDebianExtra writes out/calib.jsonl and out/COUNTS.md: the example commands,
// description paragraphs and pages of debianPackages, less the texts of the JSONL files in
// others (a missing one is an error), sampled and placed.
func generateDebianExtra(out, cache string, others []string, stdout io.Writer) error {
	return generateDebSet(out, cache, debianExtraSet, others, stdout)
}

// debSet is a calib-only set of Debian packages' manual pages and documents: its packages,
// the packages whose pages also name commands (knownCommands), its caps per kind, the title of
// its COUNTS.md, whether a one-line prompted paragraph is a command (manPage) and whether every record is a hard negative (benign text about attacks, by
// source).
type debSet struct {
	Packages, CommandsToo []debPackage
	PromptedParas         bool           // manPage's promptedParas
	NotCommand            *regexp.Regexp // a shell candidate it matches is left out
	Cap                   map[string]int
	Title                 string
	HardNegative          bool
}

var debianExtraSet = debSet{Packages: debianPackages, Cap: debianExtraCap,
	Title: "# Extra benign Debian set (calib only): counts\n\nWritten by `make heldout-debian-extra`"}

// generateDebSet writes out/calib.jsonl and out/COUNTS.md for set: the example commands,
// description paragraphs and pages of its packages, less the texts of the JSONL files in
// others (a missing one is an error), sampled and placed.
func generateDebSet(out, cache string, set debSet, others []string, stdout io.Writer) error {
	dirs := map[string]string{}
	for _, p := range set.Packages {
		dir, err := fetchDeb(cache, p)
		if err != nil {
			return err
		}
		dirs[p.Name] = dir
	}
	cmdDirs := maps.Clone(dirs)
	for _, p := range set.CommandsToo {
		dir, err := fetchDeb(cache, p)
		if err != nil {
			return err
		}
		cmdDirs[p.Name] = dir
	}
	commands := knownCommands(cmdDirs)
	var cands []candidate
	for _, p := range set.Packages {
		cs, err := debCandidates(p, dirs[p.Name], commands, set.PromptedParas)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		for _, c := range cs {
			if c.kind == "shell" && set.NotCommand != nil && set.NotCommand.MatchString(c.text) {
				continue
			}
			cands = append(cands, c)
		}
	}
	known, err := filesKeys(others, textKey)
	if err != nil {
		return err
	}
	recs, dropped := debRecords(cands, known, set.Cap, set.HardNegative)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "calib.jsonl"), recs); err != nil {
		return err
	}
	counts := countsMarkdown(set.Title, map[string][]Record{"calib": recs}, nil)
	counts += fmt.Sprintf("\n## Left out\n\n| reason | texts |\n|---|---:|\n| %s | %d |\n", proseInOtherSet, dropped)
	counts += "\n## Records per package\n\n| package | version | licence | shell | prose | doc_output |\n|---|---|---|---:|---:|---:|\n"
	per := map[string]map[string]int{}
	for _, r := range recs {
		pkg, _, _ := strings.Cut(strings.TrimPrefix(r.Source, "debian:"), "@")
		if per[pkg] == nil {
			per[pkg] = map[string]int{}
		}
		per[pkg][r.Kind]++
	}
	for _, p := range set.Packages {
		n := per[p.Name]
		counts += fmt.Sprintf("| %s | %s | %s | %d | %d | %d |\n", p.Name, p.Version, p.License, n["shell"], n["prose"], n["doc_output"])
	}
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(counts), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, counts)
	return nil
}

// debianExtraRecords drops the candidates whose text is known, samples the rest and places
// them; it returns the records, sorted, and how many distinct texts it dropped.
func debianExtraRecords(cands []candidate, known map[string]bool) ([]Record, int) {
	return debRecords(cands, known, debianExtraCap, false)
}

// debRecords drops the candidates whose text is known, samples the rest by caps and places
// them (all marked hard negatives with hardNeg); it returns the records, sorted, and how many
// distinct texts it dropped.
func debRecords(cands []candidate, known map[string]bool, caps map[string]int, hardNeg bool) ([]Record, int) {
	recs, dropped := placeUnknown(cands, known, caps)
	for i, r := range recs {
		if hardNeg {
			recs[i].HardNegative = true
		}
		if r.Kind != "doc_output" {
			continue
		}
		// c.rel is the file in the package; a page is fetched from manpages.debian.org, a
		// document read from the disk.
		rel := strings.SplitN(strings.TrimPrefix(r.Source, "debian:"), "/", 2)[1]
		rel = rel[:strings.LastIndexByte(rel, ':')]
		if m := manPath.FindStringSubmatch(rel); m != nil {
			pkg, _, _ := strings.Cut(strings.TrimPrefix(r.Source, "debian:"), "@")
			recs[i].Server, recs[i].Tool = "fetch", "fetch"
			recs[i].Arguments = mustJSON(map[string]any{"url": "https://manpages.debian.org/bookworm/" + pkg + "/" + m[2] + "." + m[1] + ".en.html"})
		} else {
			recs[i].Server, recs[i].Tool = "files", "read_file"
			recs[i].Arguments = mustJSON(map[string]any{"path": "/" + strings.TrimSuffix(rel, ".gz")})
		}
	}
	sortRecords(recs)
	return recs, dropped
}

// errDebNotOffered: apt's sources on this host do not offer the pinned version (a Debian point
// release or security update replaced it on the mirror, or apt's lists were never fetched).
var errDebNotOffered = errors.New("the pinned version is not offered by this host's apt sources")

// notOffered reports whether apt-get's output says the package or its version is not there.
func notOffered(out string) bool {
	return strings.Contains(out, "was not found") || strings.Contains(out, "Unable to locate package")
}

// fetchDeb downloads p with apt-get into cache/deb (once) and unpacks it with dpkg-deb there;
// it returns the folder holding the package's files.
func fetchDeb(cache string, p debPackage) (string, error) {
	base := filepath.Join(cache, "deb")
	ver := strings.ReplaceAll(p.Version, ":", "%3a") // apt-get download's file name
	dir := filepath.Join(base, p.Name+"_"+ver)
	if _, err := os.Stat(filepath.Join(dir, ".unpacked")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(base, p.Name+"_"+ver+"_*.deb"))
	if len(debs) == 0 {
		cmd := exec.Command("apt-get", "download", "-q", p.Name+"="+p.Version)
		cmd.Dir = base
		if out, err := cmd.CombinedOutput(); err != nil {
			if notOffered(string(out)) {
				err = errDebNotOffered
			}
			return "", fmt.Errorf("apt-get download %s=%s: %w\n%s", p.Name, p.Version, err, out)
		}
		debs, _ = filepath.Glob(filepath.Join(base, p.Name+"_"+ver+"_*.deb"))
		if len(debs) != 1 {
			return "", fmt.Errorf("apt-get download %s=%s: no single .deb in %s", p.Name, p.Version, base)
		}
	}
	os.RemoveAll(dir)
	if out, err := exec.Command("dpkg-deb", "-x", debs[0], dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %w\n%s", debs[0], err, out)
	}
	return dir, os.WriteFile(filepath.Join(dir, ".unpacked"), nil, 0o644)
}

// manPath matches an English manual page of section 1, 5 or 8: its section and name.
var manPath = regexp.MustCompile(`^usr/share/man/man([158])/([^/]+)\.[158][a-z]*(\.gz)?$`)

// shellBuiltins are the words that start a command without a manual page of their own.
var shellBuiltins = map[string]bool{"cd": true, "echo": true, "export": true, "set": true, "source": true,
	"alias": true, "printf": true, "read": true, "test": true, "exec": true, "kill": true, "ulimit": true,
	"umask": true, "wait": true, "command": true, "unset": true, "eval": true, "trap": true}

// knownCommands are the names of the set's pages of sections 1 and 8 (and the builtins).
func knownCommands(dirs map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range shellBuiltins {
		out[k] = true
	}
	for _, dir := range dirs {
		for _, s := range []string{"1", "8"} {
			fs, _ := filepath.Glob(filepath.Join(dir, "usr/share/man/man"+s, "*"))
			for _, f := range fs {
				if m := manPath.FindStringSubmatch("usr/share/man/man" + s + "/" + filepath.Base(f)); m != nil {
					out[m[2]] = true
				}
			}
		}
	}
	return out
}

// readMaybeGz reads a file, gunzipping a .gz one.
func readMaybeGz(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil || !strings.HasSuffix(p, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// docName matches the package documents taken as doc_output.
var docName = regexp.MustCompile(`(?i)^(README|NEWS)([._-][\w.-]*)?$`)

// debCandidates are the shell, prose and doc_output candidates of one unpacked package.
func debCandidates(p debPackage, dir string, commands map[string]bool, promptedParas bool) ([]candidate, error) {
	var out []candidate
	mod := goModule{Path: "debian:" + p.Name, Version: p.Version, License: p.License, Name: p.Name}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel := filepath.ToSlash(must(filepath.Rel(dir, path)))
		add := func(kind, text string, line int) {
			out = append(out, candidate{kind: kind, text: text, mod: mod, rel: rel,
				source: fmt.Sprintf("debian:%s@%s/%s:%d", p.Name, p.Version, rel, line),
				group:  "debian:" + p.Name + "/" + rel})
		}
		m := manPath.FindStringSubmatch(rel)
		isDoc := strings.HasPrefix(rel, "usr/share/doc/"+p.Name+"/") && docName.MatchString(strings.TrimSuffix(d.Name(), ".gz"))
		if m == nil && !isDoc {
			return nil
		}
		b, err := readMaybeGz(path)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			return nil
		}
		src := string(b)
		if isDoc {
			if t := strings.TrimSpace(src); t != "" {
				add("doc_output", truncateLines(t+"\n", maxOutputBytes), 1)
			}
			return nil
		}
		if strings.HasPrefix(src, ".so ") {
			return nil // a page that only includes another
		}
		manPage(parseRoff(src, m[2]), commands, promptedParas, add)
		return nil
	})
	return out, err
}

// exampleSection names the sections whose literal and bold lines are example commands.
var exampleSection = regexp.MustCompile(`^(EXAMPLES?|USAGE EXAMPLES?|EXAMPLES? OF USE|EXAMPLE USAGE)$`)

// placeholder matches a <placeholder> word or an ellipsis: text to fill in, not a command.
var placeholder = regexp.MustCompile(`<[A-Za-z][\w-]*>|\.\.\.|\x{2026}`)

// manPage adds the page's example commands, description paragraphs and its text. With
// promptedParas, a one-line paragraph outside EXAMPLES that is a prompted command ("$ " or
// "# ", as option lists write their examples after "Example:" and .br) is a command too.
func manPage(blocks []roffBlock, commands map[string]bool, promptedParas bool, add func(kind, text string, line int)) {
	if len(blocks) == 0 {
		return
	}
	if t := plainText(blocks); strings.TrimSpace(t) != "" {
		add("doc_output", truncateLines(t, maxOutputBytes), 1)
	}
	for _, b := range blocks {
		if !b.ok {
			continue
		}
		switch {
		case b.kind == "para" && b.section == "DESCRIPTION":
			text := strings.Join(strings.Fields(strings.Join(b.lines, " ")), " ")
			if len(strings.Fields(text)) >= 12 {
				add("prose", text, b.line)
			}
		case exampleSection.MatchString(b.section) && (b.kind == "literal" || b.kind == "para"):
			for _, c := range exampleCommands(b, commands, false) {
				add("shell", c.text, c.line)
			}
		case promptedParas && b.kind == "para" && len(b.lines) == 1:
			if c, ok := commandLine(strings.TrimSpace(b.lines[0]), commands, true); ok {
				add("shell", c, b.line)
			}
		case b.kind == "literal":
			// elsewhere, a literal block's prompted lines only
			for _, c := range exampleCommands(b, commands, true) {
				add("shell", c.text, c.line)
			}
		}
	}
}

// continued matches a line the next one goes on: a backslash, a pipe, && or || at its end.
var continued = regexp.MustCompile(`(\\|\||&&)\s*$`)

// callout matches the numbers Asciidoc pages put after an example line to refer to it.
var callout = regexp.MustCompile(`(\s+(\(\d+\)|<\d+>))+\s*$`)

// manHeredoc finds a heredoc operator and its delimiter (quoted, \-escaped or bare; <<- too).
var manHeredoc = regexp.MustCompile(`<<-?\s*\\?['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

type exampleLine struct {
	text string
	line int
}

// exampleCommands are the command lines of an example block: in a literal block, every line
// that is a command (with its backslash continuations), only the prompted ones when some line
// has a prompt; in a paragraph, its first line when that line is all bold and a command. With onlyPrompted,
// only prompted lines are taken, from literal blocks. A line ending in a pipe, && or || goes on
// on the next line; a callout that numbers the line for the text below ("  (2)", "  <2>") is
// taken off.
func exampleCommands(b roffBlock, commands map[string]bool, onlyPrompted bool) []exampleLine {
	var out []exampleLine
	if b.kind == "para" && !onlyPrompted {
		if b.bold[0] {
			if c, ok := commandLine(strings.TrimSpace(b.lines[0]), commands, false); ok {
				out = append(out, exampleLine{c, b.line})
			}
		}
		return out
	}
	if b.kind != "literal" {
		return nil
	}
	prompted := onlyPrompted
	for _, l := range b.lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "$ ") || strings.HasPrefix(t, "% ") {
			prompted = true
		}
	}
	for i := 0; i < len(b.lines); i++ {
		start := i
		text := strings.TrimSpace(b.lines[i])
		for continued.MatchString(text) && i+1 < len(b.lines) {
			i++
			text += "\n" + strings.TrimRight(b.lines[i], " \t")
		}
		text = callout.ReplaceAllString(text, "")
		if continued.MatchString(text) {
			continue
		}
		if m := manHeredoc.FindStringSubmatch(text); m != nil {
			// the body goes with the line that opens it, up to its delimiter (in a prompted
			// block, the "> " of the continuation prompt taken off)
			var body []string
			for i+1 < len(b.lines) {
				i++
				l := b.lines[i]
				if prompted {
					l = strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
				}
				body = append(body, l)
				if strings.TrimSpace(l) == m[1] {
					break
				}
			}
			text += "\n" + strings.Join(body, "\n")
		}
		if c, ok := commandLine(text, commands, prompted); ok {
			out = append(out, exampleLine{c, b.line + start})
		}
	}
	return out
}

// envAssign matches a VAR=value word before a command.
var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// commandLine takes a prompt off text and says whether the rest is a command: its first word,
// after VAR=value words and sudo, names a known command; with mustPrompt, only a prompted line
// is one.
func commandLine(text string, commands map[string]bool, mustPrompt bool) (string, bool) {
	prompt := false
	for _, p := range []string{"$ ", "% ", "# "} {
		if strings.HasPrefix(text, p) {
			text, prompt = strings.TrimSpace(text[len(p):]), true
			break
		}
	}
	if (mustPrompt && !prompt) || text == "" || placeholder.MatchString(text) {
		return "", false
	}
	f := strings.Fields(text)
	i := 0
	for i < len(f) && (envAssign.MatchString(f[i]) || f[i] == "sudo") {
		i++
	}
	if i >= len(f) || !commandStart.MatchString(f[0]) {
		return "", false
	}
	w := f[i]
	if j := strings.LastIndexByte(w, '/'); j >= 0 && strings.HasPrefix(w, "/") {
		w = w[j+1:]
	}
	return text, commands[w]
}
