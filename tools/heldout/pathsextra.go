package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
)

// The extra sensitive-path set (issue 26): a calib-only source for tuning the sensitive-path
// rules beyond CRS's lfi-os-files.data and restricted-files.data, written by `-paths-extra`.
// It has no test split. A path already in the main set, calib or test, is dropped by the tool
// without being written anywhere (dropped.jsonl gives no text for it, COUNTS.md its count), so
// the extra set neither counts a payload twice nor shows what the test split holds.

// banSensitiveFiles ships git-deny-patterns.json: gitrob's signatures of files that must not be
// committed (keys, credentials, histories, client configs), each a literal or a regexp on a
// file's name, extension or path.
var banSensitiveFiles = npmPackage{"ban-sensitive-files", "1.10.11", "MIT"}

// ccSafetyNet is a coding-agent hook that blocks reading secret files; its bundle names the
// credential files of cloud and coding CLIs as `~/...` paths.
var ccSafetyNet = npmPackage{"cc-safety-net", "2.4.5", "MIT"}

// ccSafetyNetChunk is the file of cc-safety-net's bundle that holds its secret-path tables.
const ccSafetyNetChunk = "dist/chunks/index-7v0rebpp.js"

// generatePathsExtra writes out/calib.jsonl, out/dropped.jsonl and out/COUNTS.md: the paths
// of both packages, placed as Claude Code Read calls like the main set's sensitive paths.
func generatePathsExtra(out, cache string, mainSets []string, stdout io.Writer) error {
	var attacks []attack
	dir, err := fetchNPM(cache, banSensitiveFiles)
	if err != nil {
		return err
	}
	a, err := denyPatternPaths(filepath.Join(dir, "git-deny-patterns.json"),
		banSensitiveFiles.Name+"@"+banSensitiveFiles.Version+"/git-deny-patterns.json")
	if err != nil {
		return err
	}
	attacks = append(attacks, a...)
	dir, err = fetchNPM(cache, ccSafetyNet)
	if err != nil {
		return err
	}
	a, err = homePaths(filepath.Join(dir, ccSafetyNetChunk), ccSafetyNet.Name+"@"+ccSafetyNet.Version+"/"+ccSafetyNetChunk)
	if err != nil {
		return err
	}
	attacks = append(attacks, a...)
	inMain := map[string]bool{}
	for _, p := range mainSets {
		if err := sensitivePathKeys(p, inMain); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	recs, dropped := placeAttacks(attacks, func(a attack) string {
		k := strings.ToLower(a.text)
		switch {
		case inMain[k]:
			return inMainSet
		case seen[k]:
			return "duplicate of an earlier path"
		}
		seen[k] = true
		return ""
	})
	for i := range dropped {
		if dropped[i].Reason == inMainSet {
			dropped[i].Text, dropped[i].Source = "", "" // test records stay unseen
		}
	}
	return writeExtraSet(out, "# Extra sensitive-path set (calib only): counts\n\nWritten by `make heldout-paths-extra`", recs, dropped, stdout)
}

// inMainSet is the drop reason of a path the main held-out set (calib or test) already has.
const inMainSet = "in data/heldout/calib.jsonl or test.jsonl (same path; not written here)"

// denyPatternPaths reads gitrob's signatures from path: each filename or path signature whose
// pattern names finitely many files (a literal, or an anchored regexp without repetition) gives
// every name it matches, under the home folder. Extension-only signatures name no file, and
// "contains word" signatures match any name: both are skipped.
func denyPatternPaths(path, source string) ([]attack, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sigs []struct{ Part, Type, Pattern, Caption string }
	if err := json.Unmarshal(b, &sigs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []attack
	for i, s := range sigs {
		if s.Part != "filename" && s.Part != "path" {
			continue
		}
		var names []string
		switch s.Type {
		case "match":
			names = []string{s.Pattern}
		case "regex":
			if !strings.HasSuffix(s.Pattern, `\z`) {
				continue // "contains word": not a file name
			}
			// In a home folder these files are dotfiles: an optional leading dot is taken.
			re := strings.TrimPrefix(strings.TrimSuffix(s.Pattern, `\z`), `\A`)
			if r, ok := strings.CutPrefix(re, `\.?`); ok {
				re = `\.` + r
			}
			names = expandRegexp(re)
		}
		for _, n := range names {
			out = append(out, attack{label: "sensitive_paths", text: home + "/" + n, source: fmt.Sprintf("%s[%d]", source, i)})
		}
	}
	return out, nil
}

// expandRegexp lists the strings re matches when it matches at most 16 without repetition;
// otherwise (a star, a plus, a wide class) nil.
func expandRegexp(re string) []string {
	r, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil
	}
	var walk func(r *syntax.Regexp) []string
	walk = func(r *syntax.Regexp) []string {
		switch r.Op {
		case syntax.OpLiteral:
			return []string{string(r.Rune)}
		case syntax.OpEmptyMatch:
			return []string{""}
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpQuest:
			s := walk(r.Sub[0])
			if s == nil {
				return nil
			}
			return append([]string{""}, s...)
		case syntax.OpAlternate:
			var out []string
			for _, sub := range r.Sub {
				s := walk(sub)
				if s == nil {
					return nil
				}
				out = append(out, s...)
			}
			return out
		case syntax.OpConcat:
			out := []string{""}
			for _, sub := range r.Sub {
				s := walk(sub)
				if s == nil || len(out)*len(s) > 16 {
					return nil
				}
				var next []string
				for _, a := range out {
					for _, b := range s {
						next = append(next, a+b)
					}
				}
				out = next
			}
			return out
		case syntax.OpCharClass:
			var out []string
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if r.Rune[i+1]-r.Rune[i] > 4 {
					return nil
				}
				for c := r.Rune[i]; c <= r.Rune[i+1]; c++ {
					out = append(out, string(c))
				}
			}
			return out
		}
		return nil
	}
	out := walk(r)
	if len(out) > 16 {
		return nil
	}
	return out
}

// ccRule is one of cc-safety-net's secret-path rules with explicit paths; ccHome one of its
// home-folder rules.
var (
	ccRule = regexp.MustCompile(`category:"([^"]+)",label:"[^"]*",paths:\[([^\]]*)\]`)
	ccHome = regexp.MustCompile(`category:"Home path",label:"~/([^"]+)"`)
	ccPath = regexp.MustCompile(`"~/([^"<>*]+)"`)
)

// homePaths reads cc-safety-net's credential rules from its bundle at path: the paths of each
// "Coding CLI credential" rule and the home-folder rules (`~/.ssh`, `~/.aws`,
// `~/.kube/config`...), under the home folder. Its "Coding CLI config" rules (settings files,
// off by default there) and paths with a placeholder (`<project>`) are left out. Each is
// listed: the package blocks it as a credential.
func homePaths(path, source string) ([]attack, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []attack
	add := func(p string) {
		out = append(out, attack{label: "sensitive_paths", text: home + "/" + p, source: source, listed: true})
	}
	for _, m := range ccRule.FindAllStringSubmatch(string(b), -1) {
		if m[1] != "Coding CLI credential" {
			continue
		}
		for _, p := range ccPath.FindAllStringSubmatch(m[2], -1) {
			add(p[1])
		}
	}
	for _, m := range ccHome.FindAllStringSubmatch(string(b), -1) {
		add(m[1])
	}
	return out, nil
}

// sensitivePathKeys adds the lower-cased text of every sensitive_paths record in the JSONL at
// path to keys; it never prints them.
func sensitivePathKeys(path string, keys map[string]bool) error {
	return recordKeys(path, keys, func(r Record) (string, bool) {
		return strings.ToLower(r.Text), r.Label == "sensitive_paths"
	})
}

// filesKeys is recordKeys over every file of paths, into one new set.
func filesKeys(paths []string, key func(Record) (string, bool)) (map[string]bool, error) {
	keys := map[string]bool{}
	for _, p := range paths {
		if err := recordKeys(p, keys, key); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// textKey keys a record by its text as it is; normTextKey by its text normalized (normKey).
func textKey(r Record) (string, bool) { return r.Text, r.Text != "" }

func normTextKey(r Record) (string, bool) {
	return normKey(strings.TrimSpace(r.Text)), r.Text != ""
}

// recordKeys adds key(r) to keys for every record r of the JSONL file at path that key takes.
func recordKeys(path string, keys map[string]bool, key func(Record) (string, bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if k, ok := key(r); ok {
			keys[k] = true
		}
	}
	return sc.Err()
}
