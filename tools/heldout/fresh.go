package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The fresh benign set (issue 26): the wide set's calib split had been tuned on for several
// rounds and no longer predicted its test split, because both splits hold files of the same 16
// projects. This set takes 16 other projects (freshModules) and splits them by module: every
// record of a module is in calib or every record is in test (freshCalib), so no source feeds
// both tuning and test. Extraction, caps (wideCap), sampling and placement are the wide set's.

// generateFresh writes out/{calib,test}.jsonl and out/COUNTS.md (with the records per module
// and the split each is in): freshModules' records, sampled and placed as the wide set's, split
// by module.
func generateFresh(out string, stdout io.Writer) error {
	cands, err := benignCandidates(freshModules)
	if err != nil {
		return err
	}
	recs := placeBenign(sample(cands, wideCap))
	var counts strings.Builder
	head := "# Held-out set, fresh benign sources split by module: counts\n\nWritten by `make heldout-fresh`"
	if err := writeSplits(out, recs, freshSplit, head, nil, &counts); err != nil {
		return err
	}
	text := counts.String() + freshModuleCounts(recs)
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, text)
	return nil
}

// recordModule is the module path a benign record's source names (path@version/file:line).
func recordModule(r Record) string {
	p, _, _ := strings.Cut(r.Source, "@")
	return p
}

// freshSplit puts a record in the split of its module: calib if freshCalib names it, else test.
func freshSplit(r Record) string {
	if freshCalib[recordModule(r)] {
		return "calib"
	}
	return "test"
}

// freshModuleCounts is COUNTS.md's table of records per module, per kind, and the split the
// module feeds.
func freshModuleCounts(recs []Record) string {
	n := map[string]map[string]int{}
	kindSet := map[string]bool{}
	for _, r := range recs {
		m := recordModule(r)
		if n[m] == nil {
			n[m] = map[string]int{}
		}
		n[m][r.Kind]++
		n[m][""]++
		kindSet[r.Kind] = true
	}
	kinds := slices.Sorted(maps.Keys(kindSet))
	mods := make([]string, 0, len(freshModules))
	for _, m := range freshModules {
		mods = append(mods, m.Path)
	}
	sort.Strings(mods)
	var b strings.Builder
	b.WriteString("\n## Records per module (each module wholly in one split)\n\n| module | split | security | " +
		strings.Join(kinds, " | ") + " | records |\n|---|---|---|" + strings.Repeat("---:|", len(kinds)+1) + "\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "| %s | %s | %v |", m, freshSplit(Record{Source: m + "@"}), securityModules[m])
		for _, k := range kinds {
			fmt.Fprintf(&b, " %d |", n[m][k])
		}
		fmt.Fprintf(&b, " %d |\n", n[m][""])
	}
	return b.String()
}
