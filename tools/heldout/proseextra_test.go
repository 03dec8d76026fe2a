package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The prose-extra set's sources are in no other set, and each is pinned with its licence.
func TestProseExtraModulesAreNew(t *testing.T) {
	used := map[string]bool{libinjectionModule.Path: true}
	for _, m := range slices.Concat(goModules, wideModules, shellExtraModules, queryExtraGoModules) {
		used[m.Path] = true
	}
	checkNewModules(t, proseExtraModules, used, "already a source of another held-out set")
}

// TestProseExtraRecords: only prose, documentation pages and links are kept, a text another set
// holds is dropped (and counted once), and each kind is placed as the wide set places it.
func TestProseExtraRecords(t *testing.T) {
	m := goModule{Path: "example.com/docs", Version: "v1.0.0", Name: "docs"}
	c := func(kind, text string) candidate {
		return candidate{kind: kind, text: text, mod: m, rel: "docs/ops.md", source: kind + ":" + text, group: "g"}
	}
	cands := []candidate{
		c("prose", "Rotate the signing key before it expires, then restart every replica one at a time."),
		c("prose", "This paragraph is already in the wide set, so it must not be written here again."),
		c("prose", "This paragraph is already in the wide set, so it must not be written here again."),
		c("doc_output", "# Runbook\n\nWhen the alert fires, check the queue depth first.\n"),
		c("url", "https://example.com/docs/runbook"),
		c("shell", "kubectl get pods"),
		c("path", "docs/ops.md"),
	}
	known := map[string]bool{"This paragraph is already in the wide set, so it must not be written here again.": true}
	recs, dropped := proseExtraRecords(cands, known)
	if dropped != 1 {
		t.Errorf("dropped = %d, want 1", dropped)
	}
	want := map[string]string{"doc_output": "fetch/fetch response", "prose": "slack/post_message request", "url": "fetch/fetch request"}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(recs), len(want), recs)
	}
	for _, r := range recs {
		if got := r.Server + "/" + r.Tool + " " + r.Phase; got != want[r.Kind] || r.Label != "benign" {
			t.Errorf("%s placed as %s (label %s), want %s", r.Kind, got, r.Label, want[r.Kind])
		}
	}
	if recs[0].Kind != "doc_output" || recs[0].Result == "" {
		t.Errorf("first record %+v: want the documentation page as the fetch tool's result", recs[0])
	}
}

// TestProseExtraByteIdentical: the committed prose-extra set is what the generator writes (it
// fetches 11 modules through the Go module proxy; skipped with -short).
func TestProseExtraByteIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches 11 Go modules")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	heldout := filepath.Join("..", "..", "data", "heldout")
	out := t.TempDir()
	var log bytes.Buffer
	if err := generateProseExtra(out, proseExtraOthers(heldout), &log); err != nil {
		t.Fatal(err)
	}
	checkRegenerated(t, out, heldout, "prose-extra", "heldout-prose-extra")
}
