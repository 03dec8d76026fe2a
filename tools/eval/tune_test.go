//go:build heldout

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/tune"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestTuneFromFalsePositives is issue 25's "feedback that tunes", measured: 50 real benign calls
// of the held-out calib split (the tuning side: no source of it is in the test split) that the
// served example chain flags by its detecting stages are labelled false positive, as a
// reviewer would from the dashboard (audit.arguments: full, so the label carries the call);
// `tune` proposes a bundle from those labels; the proposal, built as `serve` builds it (its
// fixtures, which include the labelled calls, must pass), flags none of the 50, and on the
// test split blocks every attack the active bundle blocks. When the detector's texts are among
// the labels, the same labels with the training data retrain its model.
func TestTuneFromFalsePositives(t *testing.T) {
	dir := os.Getenv("PALISADE_HELDOUT_BUNDLE")
	if dir == "" {
		t.Fatal("PALISADE_HELDOUT_BUNDLE is not set: run `make test-heldout` (it builds the bundle)")
	}
	ctx := context.Background()
	calib, err := LoadHeldout("../../data/heldout/calib.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	test, err := LoadHeldout("../../data/heldout/test.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	active, err := NewServedChain(ctx, dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer active.Close(ctx)

	var benign []HeldoutRecord
	for _, r := range calib {
		if r.Label == "benign" && r.Phase != abi.PhaseResponse {
			benign = append(benign, r)
		}
	}
	blocked, _, err := RunServed(ctx, active, benign, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The labels: the first 50 false positives a detecting stage flagged, each a label event
	// repeating its decision (as the gateway writes it, arguments included).
	const want = 50
	var fps []HeldoutRecord
	var events []audit.Event
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	flaggedBy := map[string]int{}
	for i, r := range benign {
		if !blocked[i] || len(fps) == want {
			continue
		}
		env, err := envelopeOf(r)
		if err != nil {
			t.Fatal(err)
		}
		o, err := active.engine.Request(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		ev := o.Event()
		o.Finish(ctx)
		if ev.Stage != "injection" && ev.Stage != "detector" || !quick(ev.Stages) {
			// Flagged by a rule or the risk matrix (not a detector's false positive), or by a
			// stage that took long enough to time out when the fixtures replay it on a loaded
			// machine (issue 26: long texts and the stage's time budget).
			continue
		}
		flaggedBy[ev.Stage]++
		ev.Arguments = r.Arguments
		label := ev
		label.ID, label.Kind, label.Time = audit.NewID(), audit.KindLabel, now
		label.Label = &audit.Label{Ref: ev.ID, Verdict: audit.LabelFalsePositive, By: "approver:reviewer"}
		events = append(events, label)
		fps = append(fps, r)
	}
	if len(fps) < want {
		t.Fatalf("the calib split gave %d false positives of the detecting stages, want %d", len(fps), want)
	}
	out := filepath.Join(t.TempDir(), "proposal")
	// Check: the proposal is built and its fixtures run; an exclusion that lets one of the
	// bundle's own denied or asked fixtures through is left out (one label's `sudo apt install
	// ./x.deb` would exclude every sudo finding of Bash).
	check := func(ctx context.Context, d string) error {
		s, err := NewServedChain(ctx, d, t.TempDir())
		if err != nil {
			return err
		}
		defer s.Close(ctx)
		return s.FixtureErr
	}
	rep, err := tune.Propose(ctx, events, tune.Options{Bundle: dir, Out: out, Now: now, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("labels %d (false positives %d; flagged by %v): %d exclusions, %d rules, %d fixtures, version %s",
		rep.Labels, rep.FalsePositives, flaggedBy, len(rep.Exclusions), len(rep.Rules), rep.Fixtures, rep.Version)
	for _, u := range rep.Unused {
		t.Logf("unused: %s", u)
	}
	if rep.Fixtures != want-len(rep.LeftOut) || len(rep.Exclusions) == 0 {
		t.Fatalf("report %+v", rep)
	}

	proposal, err := NewServedChain(ctx, out, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer proposal.Close(ctx)
	if proposal.FixtureErr != nil {
		t.Fatalf("the proposal fails its fixtures (the labelled calls): %v", proposal.FixtureErr)
	}
	if len(rep.LeftOut) > want/5 {
		t.Errorf("%d of %d labels' exclusions left out for failing the bundle's fixtures: %v", len(rep.LeftOut), want, rep.Unused)
	}
	still, _, err := RunServed(ctx, proposal, fps, 0)
	if err != nil {
		t.Fatal(err)
	}
	leftOut := map[string]bool{}
	for i, ev := range events {
		if slices.Contains(rep.LeftOut, ev.Label.Ref) {
			leftOut[fps[i].ID] = true
		}
	}
	for i, b := range still {
		if b != leftOut[fps[i].ID] {
			t.Errorf("flagged by the proposal %v, left out %v: %s (%s)", b, leftOut[fps[i].ID], fps[i].ID, proposal.Why(ctx, fps[i]))
		}
	}

	var attacks []HeldoutRecord
	for _, r := range test {
		if r.Label != "benign" {
			attacks = append(attacks, r)
		}
	}
	before, _, err := RunServed(ctx, active, attacks, 0)
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := RunServed(ctx, proposal, attacks, 0)
	if err != nil {
		t.Fatal(err)
	}
	nb, na := 0, 0
	for i := range attacks {
		if before[i] {
			nb++
		}
		if after[i] {
			na++
		}
		if before[i] && !after[i] {
			t.Errorf("the proposal lets through an attack the active bundle blocks: %s %s", attacks[i].ID, attacks[i].Label)
		}
	}
	t.Logf("test-split attacks blocked: active %d/%d, proposal %d/%d", nb, len(attacks), na, len(attacks))
	if nb == 0 || !slices.Contains(before, true) {
		t.Fatal("the active bundle blocks no attack: nothing was measured")
	}

	// The same labels with the training data: the detector's texts among them retrain its model.
	if flaggedBy["detector"] == 0 {
		// `make model` trains the detector on calib itself (tools/train -extra-heldout), so it
		// may flag none of calib's benign calls: then tune has no detector text to learn and
		// there is nothing to retrain. host/tune's retrain tests cover retraining on a small
		// set; this leg runs again when a bundle's detector flags real calib calls.
		t.Logf("no labelled call was flagged by the detector (it is trained on calib): the retrain leg has nothing to retrain")
		return
	}
	out2 := filepath.Join(t.TempDir(), "retrained")
	rep2, err := tune.Propose(ctx, events, tune.Options{Bundle: dir, Out: out2, Now: now, TrainData: "../../data/split",
		ExtraBenign:  []string{"../../models/data/benign_short.txt", "../../models/data/benign_outputs.jsonl", "../../models/data/benign_long.jsonl", "../../models/data/benign_llm_docs.jsonl"},
		ExtraHeldout: "../../data/heldout/calib.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	d := rep2.Detector
	if d == nil || d.Skipped != "" {
		t.Fatalf("the detector was not retrained: %+v", d)
	}
	t.Logf("retrained %s in %.1fs with %d benign texts: threshold %.4f → %.4f; at the stage's %.2f the model flags %d → %d of them",
		d.Model, d.TrainSeconds, d.AddedBenign, d.OldThreshold, d.NewThreshold, d.StageThreshold, d.FPFlaggedBefore, d.FPFlaggedAfter)
	tprAfter := map[string]float64{}
	for _, m := range d.After {
		tprAfter[m.Category] = m.TPR
	}
	for _, m := range d.Before {
		t.Logf("  %-18s TPR %.4f → %.4f  FPR %.4f", m.Category, m.TPR, tprAfter[m.Category], m.FPR)
	}
	if d.FPFlaggedAfter > d.FPFlaggedBefore {
		t.Errorf("the retrained model flags more of the labelled false positives (%d) than the old (%d)", d.FPFlaggedAfter, d.FPFlaggedBefore)
	}
	retrained, err := NewServedChain(ctx, out2, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer retrained.Close(ctx)
	if retrained.FixtureErr != nil {
		t.Fatalf("the retrained proposal fails its fixtures: %v", retrained.FixtureErr)
	}
	after2, _, err := RunServed(ctx, retrained, attacks, 0)
	if err != nil {
		t.Fatal(err)
	}
	nr, lost := 0, 0
	for i := range attacks {
		if after2[i] {
			nr++
		}
		if before[i] && !after2[i] {
			lost++
		}
	}
	t.Logf("test-split attacks blocked: active %d/%d, retrained proposal %d/%d (%d the active blocks let through)", nb, len(attacks), nr, len(attacks), lost)
}

// quick reports whether every stage decided without an error and well inside the example
// bundle's shortest stage timeout (250 ms).
func quick(stages []abi.StageResult) bool {
	for _, s := range stages {
		if s.Error != "" || s.LatencyUS > 25_000 {
			return false
		}
	}
	return true
}
