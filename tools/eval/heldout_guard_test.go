//go:build heldout

package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// TestHeldoutGuard is the held-out regression guard `make test-heldout` runs: the guard sample
// of data/heldout/test.jsonl through the served chain of PALISADE_HELDOUT_BUNDLE must block no
// fewer attacks and no more benign calls than data/heldout/baseline.json records (each figure
// may move by GuardSlack). After a deliberate change, `make eval-baseline` rewrites the baseline.
func TestHeldoutGuard(t *testing.T) {
	dir := os.Getenv("PALISADE_HELDOUT_BUNDLE")
	if dir == "" {
		t.Fatal("PALISADE_HELDOUT_BUNDLE is not set: run `make test-heldout` (it builds the bundle)")
	}
	dataDir := os.Getenv("PALISADE_HELDOUT_DATA_DIR")
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	recs, err := LoadHeldout("../../data/heldout/test.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../data/heldout/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	var base Baseline
	if err := json.Unmarshal(raw, &base); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc, err := NewServedChain(ctx, dir, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close(ctx)
	if sc.FixtureErr != nil {
		t.Logf("the bundle fails its own fixtures (measured without them): %v", sc.FixtureErr)
	}
	sample := GuardSample(recs)
	blocked, failed, err := RunServed(ctx, sc, sample, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := figuresOf("served chain, guard sample", sample, blocked, failed)
	for _, k := range sortedKeys(got.TPR) {
		t.Logf("TPR %-20s %d/%d", k, got.TPR[k].Hits, got.TPR[k].N)
	}
	for _, k := range sortedKeys(got.FPR) {
		t.Logf("FPR %-20s %d/%d", k, got.FPR[k].Hits, got.FPR[k].N)
	}
	t.Logf("decided by a stage's failure mode: %v", got.Failed)
	for _, r := range Regressions(base.Sample, got, GuardSlack) {
		t.Error(r)
	}
}
