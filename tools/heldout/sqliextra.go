package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The extra SQL injection set (issue 26): a calib-only source for tuning the SQL rules beyond
// the CRS 942xxx tests and blns, written by `-sqli-extra`. It has no test split: every record
// goes to calib.jsonl, and lines that normalize (normKey) to a sql_injection line of the main
// calib are dropped, so the two do not count the same payload twice.

// libinjectionModule ships libinjection's tokenizer and fingerprint tests; test-sqli-*.txt hold
// one SQL injection input each.
var libinjectionModule = goModule{"github.com/corazawaf/libinjection-go", "v0.3.5", "BSD-3-Clause", "libinjection-go"}

// pattFiles are the PayloadsAllTheThings "SQL Injection/Intruder" lists vendored under
// data/heldout/sqli-extra/src (MIT), each at the commit it was read from.
var pattFiles = []struct{ Name, Commit string }{
	{"Auth_Bypass.txt", "404afd1d719b59c2a7600b83b5ed4583f8c822e9"},
	{"Generic_ErrorBased.txt", "82ec5f0314cc3238233154d6f0a4cd4e64c5dc12"},
	{"Generic_Fuzz.txt", "15f15583ac26670da867780f3672e34baa36fed1"},
	{"Generic_TimeBased.txt", "15f15583ac26670da867780f3672e34baa36fed1"},
	{"SQLi_Polyglots.txt", "a4a0bd04a917dcc4f413412f304149a182152b65"},
}

// generateSQLiExtra writes out/calib.jsonl, out/dropped.jsonl and out/COUNTS.md from the
// libinjection-go test inputs and the vendored PayloadsAllTheThings lists under src, dropping
// lines that `keep` drops and lines already in mainCalib (normalized).
func generateSQLiExtra(out, src, mainCalib string, stdout io.Writer) error {
	var attacks []attack
	dir, err := fetchGo(libinjectionModule)
	if err != nil {
		return err
	}
	a, err := libinjectionInputs(dir)
	if err != nil {
		return err
	}
	attacks = append(attacks, a...)
	for _, f := range pattFiles {
		a, err := lineAttacks(filepath.Join(src, "PayloadsAllTheThings", f.Name),
			"swisskyrepo/PayloadsAllTheThings@"+f.Commit[:12]+"/SQL Injection/Intruder/"+f.Name)
		if err != nil {
			return err
		}
		attacks = append(attacks, a...)
	}
	inCalib, err := sqlCalibKeys(mainCalib)
	if err != nil {
		return err
	}
	recs, dropped := placeAttacks(attacks, dropRepeats(inCalib, "in data/heldout/calib.jsonl (normalized)", func(attack) string { return "" }))
	return writeExtraSet(out, "# Extra SQL injection set (calib only): counts\n\nWritten by `make heldout-sqli-extra`", recs, dropped, stdout)
}

// writeExtraSet writes a calib-only extra set into out: calib.jsonl (records sorted),
// dropped.jsonl and COUNTS.md under heading, and prints the counts.
func writeExtraSet(out, heading string, recs []Record, dropped []Dropped, stdout io.Writer) error {
	sortRecords(recs)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "calib.jsonl"), recs); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(out, "dropped.jsonl"), dropped); err != nil {
		return err
	}
	counts := countsMarkdown(heading, map[string][]Record{"calib": recs}, dropped)
	if err := os.WriteFile(filepath.Join(out, "COUNTS.md"), []byte(counts), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, counts)
	return nil
}

// libinjectionInputs reads the --INPUT-- section of each tests/test-sqli-*.txt in dir.
func libinjectionInputs(dir string) ([]attack, error) {
	files, err := filepath.Glob(filepath.Join(dir, "tests", "test-sqli-*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []attack
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var in []string
		inside := false
		for _, l := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(l, "--INPUT--"):
				inside = true
			case strings.HasPrefix(l, "--EXPECTED--"):
				inside = false
			case inside:
				in = append(in, l)
			}
		}
		src := libinjectionModule.Path + "@" + libinjectionModule.Version + "/tests/" + filepath.Base(f)
		out = append(out, attack{label: "sql_injection", text: strings.Join(in, "\n"), source: src})
	}
	return out, nil
}

// lineAttacks reads one payload per line of path; lines starting with "# " are comments.
func lineAttacks(path, source string) ([]attack, error) {
	var out []attack
	err := scanLines(path, func(n int, l string) {
		if !strings.HasPrefix(l, "# ") {
			out = append(out, attack{label: "sql_injection", text: l, source: fmt.Sprintf("%s:%d", source, n)})
		}
	})
	return out, err
}

// sqlCalibKeys returns the normalized text of every sql_injection record in the JSONL at path.
func sqlCalibKeys(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if r.Label == "sql_injection" {
			keys[normKey(strings.TrimSpace(r.Text))] = true
		}
	}
	return keys, sc.Err()
}

// dropRepeats is a placeAttacks drop rule: a line whose normalized text (normKey) is in known
// is dropped with inKnown, a repeat of an earlier line as a duplicate, and any other goes to
// rest ("" keeps it).
func dropRepeats(known map[string]bool, inKnown string, rest func(attack) string) func(attack) string {
	seen := map[string]bool{}
	return func(a attack) string {
		k := normKey(strings.TrimSpace(a.text))
		switch {
		case known[k]:
			return inKnown
		case seen[k]:
			return "duplicate of an earlier line (normalized)"
		}
		seen[k] = true
		return rest(a)
	}
}
