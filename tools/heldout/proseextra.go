package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// The extra benign prose set (issue 26): a calib-only source for tuning the rules and the
// detector's band on text and documentation, written by `-prose-extra`. It has no test split.
// The wide set's test split holds prose, documentation pages and URLs its calib split hardly
// has (its sources are CLIs whose docs are mostly commands); this set takes the same three
// kinds from projects whose docs are mostly words: security and operator manuals, runbooks,
// API and plugin references, design proposals, tutorials and changelogs. Extraction and
// placement are the wide set's (extractModule, placeBenign): a Markdown paragraph of 12 words or
// more is a Slack message (prose), a Markdown page (up to 6 KB) is a fetch tool's answer in the
// response phase (doc_output), a link is a fetch tool's URL (url). A text the other held-out
// sets already hold (main, wide or another extra set; calib, test or dropped; any kind, same
// text) is dropped by the tool without being written anywhere: COUNTS.md gives only the count.

// proseExtraModules are projects whose files are in none of goModules, wideModules or the other
// extra sets, picked for the amount and the styles of their prose documentation.
var proseExtraModules = []goModule{
	{"github.com/argoproj/argo-cd/v3", "v3.5.7", "Apache-2.0", "argo-cd"},
	{"github.com/coredns/coredns", "v1.15.0", "Apache-2.0", "coredns"},
	{"github.com/thanos-io/thanos", "v0.42.0", "Apache-2.0", "thanos"},
	{"google.golang.org/grpc", "v1.85.0", "Apache-2.0", "grpc-go"},
	{"sigs.k8s.io/cluster-api", "v1.14.2", "Apache-2.0", "cluster-api"},
	{"github.com/traefik/traefik/v3", "v3.7.13", "MIT", "traefik"},
	{"github.com/cert-manager/cert-manager", "v1.21.2", "Apache-2.0", "cert-manager"},
	{"github.com/open-policy-agent/gatekeeper/v3", "v3.23.1", "Apache-2.0", "gatekeeper"},
	{"github.com/sigstore/cosign/v2", "v2.6.5", "Apache-2.0", "cosign"},
	{"go.etcd.io/etcd/v3", "v3.6.8", "Apache-2.0", "etcd"},
	{"sigs.k8s.io/external-dns", "v0.20.0", "Apache-2.0", "external-dns"},
}

// proseExtraCap caps each kind by the lowest salted hash (sample, as kindCap does); the other
// kinds extractModule finds (shell, path, sql, code) are left out.
var proseExtraCap = map[string]int{"prose": 1500, "doc_output": 500, "url": 800}

// proseInOtherSet is the drop reason of a text another held-out set already holds.
const proseInOtherSet = "in another held-out set (main, wide or extra; calib, test or dropped; same text; not written here)"

// proseExtraOthers lists the JSONL files of every other held-out set under root.
func proseExtraOthers(root string) []string {
	var out []string
	for _, d := range []string{"", "wide", "sqli-extra", "paths-extra", "shell-extra", "query-extra"} {
		fs, _ := filepath.Glob(filepath.Join(root, d, "*.jsonl"))
		out = append(out, fs...)
	}
	sort.Strings(out)
	return out
}

// generateProseExtra writes out/calib.jsonl and out/COUNTS.md: the prose, documentation pages
// and URLs of proseExtraModules, less the texts of the JSONL files in others (a missing one is
// an error), sampled and placed as the wide set places them.
func generateProseExtra(out string, others []string, stdout io.Writer) error {
	var cands []candidate
	for _, m := range proseExtraModules {
		_, cs, err := moduleCandidates(m)
		if err != nil {
			return err
		}
		cands = append(cands, cs...)
	}
	return writeTextSet(out, "# Extra benign prose set (calib only): counts\n\nWritten by `make heldout-prose-extra`", cands, others, proseExtraRecords, nil, stdout)
}

// writeTextSet turns cands into records with records (given the texts of the JSONL files in
// others, a missing one an error), writes them to out/calib.jsonl and their counts to
// out/COUNTS.md (headed by head, then the count of texts dropped as another set's, then what more
// adds, if set) and prints the counts.
func writeTextSet(out, head string, cands []candidate, others []string,
	records func([]candidate, map[string]bool) ([]Record, int), more func([]Record) string, stdout io.Writer) error {
	known, err := filesKeys(others, textKey)
	if err != nil {
		return err
	}
	recs, dropped := records(cands, known)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "calib.jsonl"), recs); err != nil {
		return err
	}
	counts := countsMarkdown(head, map[string][]Record{"calib": recs}, nil)
	counts += fmt.Sprintf("\n## Left out\n\n| reason | texts |\n|---|---:|\n| %s | %d |\n", proseInOtherSet, dropped)
	if more != nil {
		counts += more(recs)
	}
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(counts), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, counts)
	return nil
}

// proseExtraRecords drops the candidates of the capped kinds whose text is known, samples the
// rest and places them; it returns the records, sorted, and how many distinct texts it dropped.
func proseExtraRecords(cands []candidate, known map[string]bool) ([]Record, int) {
	recs, dropped := placeUnknown(cands, known, proseExtraCap)
	sortRecords(recs)
	return recs, dropped
}

// placeUnknown drops the candidates of kinds caps does not name and those whose text is known,
// samples the rest by caps and places them (unsorted); it also returns how many distinct texts
// (by kind) it dropped as known.
func placeUnknown(cands []candidate, known map[string]bool, caps map[string]int) ([]Record, int) {
	var kept []candidate
	dropped := map[string]bool{}
	for _, c := range cands {
		if _, ok := caps[c.kind]; !ok {
			continue
		}
		if known[c.text] {
			dropped[c.kind+"\x00"+c.text] = true
			continue
		}
		kept = append(kept, c)
	}
	return placeBenign(sample(kept, caps)), len(dropped)
}
