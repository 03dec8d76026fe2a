package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The extra benign shell set (issue 26, fifth round): a calib-only source for tuning the shell
// rules on developer and ops commands beyond the main and wide sets, written by `-shell-extra`.
// It has no test split. Commands come from shellExtraModules' docs (shell blocks), Makefile
// recipes, GitHub Actions `run:` steps and shell scripts (Debian maintainer scripts included),
// each placed as a Claude Code Bash call like the main set's benign shell. A command the main
// or the wide set already has (calib or test, same text) is dropped by the tool without being
// written anywhere: COUNTS.md gives only the count, so the extra set neither counts a command
// twice nor shows what a test split holds.

// shellExtraModules are projects whose files are in none of goModules, wideModules or the other
// extra sets: Kubernetes and container tooling, packagers, databases, policy engines, CLIs,
// picked for their CI workflows, Makefiles, scripts and command-line docs.
var shellExtraModules = []goModule{
	{"github.com/goreleaser/nfpm/v2", "v2.45.2", "MIT", "nfpm"},
	{"github.com/hashicorp/terraform-plugin-sdk/v2", "v2.40.1", "MPL-2.0", "terraform-plugin-sdk"},
	{"github.com/k3s-io/kine", "v0.17.5", "Apache-2.0", "kine"},
	{"github.com/minio/minio-go/v7", "v7.4.1", "Apache-2.0", "minio-go"},
	{"github.com/cilium/ebpf", "v0.22.0", "MIT", "ebpf"},
	{"oras.land/oras", "v1.3.6", "Apache-2.0", "oras"},
	{"sigs.k8s.io/kubebuilder/v4", "v4.16.0", "Apache-2.0", "kubebuilder"},
	{"sigs.k8s.io/krew", "v0.4.3", "Apache-2.0", "krew"},
	{"github.com/stern/stern", "v1.33.0", "Apache-2.0", "stern"},
	{"github.com/mikefarah/yq/v4", "v4.54.3", "MIT", "yq"},
	{"github.com/go-delve/delve", "v1.27.2", "MIT", "delve"},
	{"github.com/dgraph-io/badger/v4", "v4.9.6", "Apache-2.0", "badger"},
	{"github.com/open-policy-agent/opa", "v1.22.3", "Apache-2.0", "opa"},
	{"github.com/anchore/syft", "v1.57.1", "Apache-2.0", "syft"},
	{"github.com/bufbuild/buf", "v1.75.0", "Apache-2.0", "buf"},
	{"github.com/influxdata/influxdb", "v1.13.2", "MIT", "influxdb"},
	{"github.com/ory/hydra/v2", "v2.3.0", "Apache-2.0", "hydra"},
	{"vitess.io/vitess", "v0.24.4", "Apache-2.0", "vitess"},
}

// shellExtraCap caps the set's shell records (the lowest salted hash, as kindCap does).
var shellExtraCap = map[string]int{"shell": 4000}

// inOtherSet is the drop reason of a command the main or wide set already has.
const inOtherSet = "in data/heldout or data/heldout/wide, calib or test (same command; not written here)"

// generateShellExtra writes out/calib.jsonl and out/COUNTS.md: the shell commands of
// shellExtraModules, less those of the benign sets in others (JSONL files; a missing one is an
// error), sampled and placed as the main set's benign shell.
func generateShellExtra(out string, others []string, stdout io.Writer) error {
	var cands []candidate
	for _, m := range shellExtraModules {
		dir, err := fetchGo(m)
		if err != nil {
			return err
		}
		cs, err := shellCandidates(m, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
		cands = append(cands, cs...)
	}
	known := map[string]bool{}
	for _, p := range others {
		if err := shellTexts(p, known); err != nil {
			return err
		}
	}
	var kept []candidate
	dropped := map[string]bool{}
	for _, c := range cands {
		if known[c.text] {
			dropped[c.text] = true
			continue
		}
		kept = append(kept, c)
	}
	recs := placeBenign(sample(kept, shellExtraCap))
	sortRecords(recs)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "calib.jsonl"), recs); err != nil {
		return err
	}
	counts := countsMarkdown("# Extra benign shell set (calib only): counts\n\nWritten by `make heldout-shell-extra`",
		map[string][]Record{"calib": recs}, nil)
	counts += fmt.Sprintf("\n## Left out\n\n| reason | commands |\n|---|---:|\n| %s | %d |\n", inOtherSet, len(dropped))
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(counts), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, counts)
	return nil
}

// shellCandidates is extractModule's shell (docs, Makefiles, workflows) plus the command lines
// of the module's shell scripts.
func shellCandidates(m goModule, dir string) ([]candidate, error) {
	cs, err := extractModule(m, dir)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, c := range cs {
		if c.kind == "shell" {
			out = append(out, c)
		}
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !isScript(p) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		script(string(b), func(text string, line int) {
			if f := strings.Fields(text); len(f) > 0 && commandStart.MatchString(f[0]) {
				out = append(out, candidate{kind: "shell", text: text, mod: m, rel: rel,
					source: fmt.Sprintf("%s@%s/%s:%d", m.Path, m.Version, rel, line),
					group:  m.Path + "/" + rel})
			}
		})
		return nil
	})
	return out, err
}

// maintainerScript names Debian maintainer scripts (deb-postinst(5) and its siblings) and the
// package scripts packagers such as nfpm take: run as root when a package is installed.
var maintainerScript = regexp.MustCompile(`(^|[._-])(preinst|postinst|prerm|postrm|preinstall|postinstall|preremove|postremove|preupgrade|postupgrade)(\.sh)?$`)

func isScript(p string) bool {
	base := filepath.Base(p)
	switch filepath.Ext(base) {
	case ".sh", ".bash":
		return true
	}
	return maintainerScript.MatchString(base)
}

// scriptSyntax matches a line that is shell syntax rather than a command: a keyword that opens
// or closes a compound command, a function header, a case pattern or its end.
var scriptSyntax = regexp.MustCompile(`^(if|then|else|elif|fi|for|while|until|do|done|case|esac|function|select|in|\{|\}|\(|\)|;;)(\s|;|$)|^[\w.-]+\s*\(\)|^[^\s(]*\)(\s|$)|;;\s*$|(\bthen|\bdo|\{|\|\||&&|\|)\s*$`)

// heredocStart finds a heredoc operator and its delimiter (quoted or not, <<- allowed).
var heredocStart = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// script calls add with each simple command line of a shell script: backslash continuations
// joined, comments, blank lines and shell syntax (if/for/case lines, function headers) left
// out, heredoc bodies skipped (the line that opens one is kept with its body, as a reader
// would run it).
func script(src string, add func(text string, line int)) {
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i := 0; i < len(lines); i++ {
		start := i + 1
		cmd := strings.TrimSpace(lines[i])
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = cmd + "\n" + strings.TrimRight(lines[i], " \t")
		}
		if m := heredocStart.FindStringSubmatch(cmd); m != nil {
			var body []string
			for i+1 < len(lines) {
				i++
				body = append(body, lines[i])
				if strings.TrimSpace(lines[i]) == m[1] {
					break
				}
			}
			cmd += "\n" + strings.Join(body, "\n")
		}
		if cmd == "" || strings.HasPrefix(cmd, "#") || scriptSyntax.MatchString(cmd) {
			continue
		}
		add(cmd, start)
	}
}

// shellTexts adds the text of every benign shell record of the JSONL file at path to keys.
func shellTexts(path string, keys map[string]bool) error {
	return recordKeys(path, keys, func(r Record) (string, bool) {
		return r.Text, r.Label == "benign" && r.Kind == "shell"
	})
}
