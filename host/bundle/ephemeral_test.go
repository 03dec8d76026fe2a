package bundle_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
)

// The manager of the one-process modes keeps nothing on disk but its sequences file: each
// bundle is built from a private copy that goes with its chain, and an older sequence accepted
// by another process is refused.
func TestEphemeralManager(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	staging, data := t.TempDir(), t.TempDir()
	seq := &bundle.Sequences{Path: filepath.Join(data, "sequences.json")}
	active := &chain.Active{}
	newEph := func() *bundle.Manager {
		m, err := bundle.NewManager(bundle.ManagerOptions{Active: active, Build: bundle.BuildOptions{Runtime: f.rt}, Ephemeral: true,
			StagingDir: staging, Sequences: seq, Keys: bundle.KeySet{bundle.KeyID(f.pub): f.pub}, Recorder: f.rec, Gateway: "hook@test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := newEph()
	v1, v2 := f.sequenced(t, "1.0.0", 1), f.sequenced(t, "2.0.0", 2)
	if _, _, err := m.Activate(ctx, v1, "dir:v1"); err != nil {
		t.Fatal(err)
	}
	b1 := m.Bundle()
	if b1 == nil || b1.Manifest.Version != "1.0.0" || !strings.HasPrefix(b1.Dir, staging) {
		t.Fatalf("bundle = %+v, want v1 built from a copy under %s", b1, staging)
	}
	if _, _, err := m.Activate(ctx, v2, "dir:v2"); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil { // v1's chain drained and closed
		t.Fatal(err)
	}
	if _, err := os.Stat(b1.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("v1's staged copy %s is still there after its chain closed: %v", b1.Dir, err)
	}
	if ents, _ := os.ReadDir(staging); len(ents) != 1 {
		t.Fatalf("staging holds %d folders, want v2's only", len(ents))
	}
	// Nothing kept: no rollback, no restore.
	if _, err := m.Rollback(ctx); !errors.Is(err, bundle.ErrNoPrevious) {
		t.Fatalf("rollback: %v, want ErrNoPrevious", err)
	}
	if _, _, err := m.ActivateKept(ctx, "1.0.0"); !errors.Is(err, bundle.ErrNotKept) {
		t.Fatalf("activate kept: %v, want ErrNotKept", err)
	}
	if ents, _ := os.ReadDir(data); len(ents) != 1 || ents[0].Name() != "sequences.json" {
		t.Fatalf("data dir holds %v, want sequences.json only", ents)
	}
	// Another process (a new manager) refuses v1: the sequences file remembers v2.
	if _, _, err := newEph().Activate(ctx, v1, "dir:v1"); !errors.Is(err, bundle.ErrOlder) {
		t.Fatalf("older bundle in a new process: %v, want ErrOlder", err)
	}
	if act, rej := f.rec.kind(audit.KindBundleActivated), f.rec.kind(audit.KindBundleRejected); len(act) != 2 || len(rej) != 1 ||
		act[1].Gateway != "hook@test" || !strings.Contains(string(rej[0].Detail), "older_sequence") {
		t.Fatalf("events: activated %+v rejected %+v", act, rej)
	}
	if ents, _ := os.ReadDir(staging); len(ents) != 1 {
		t.Fatalf("a refused bundle left its copy: staging holds %d folders", len(ents))
	}
	if c := active.Swap(nil); c != nil {
		c.CloseWhenDrained(ctx)
	}
	if ents, _ := os.ReadDir(staging); len(ents) != 0 {
		t.Fatalf("staging holds %d folders after the last chain closed", len(ents))
	}
	if _, err := bundle.NewManager(bundle.ManagerOptions{Active: active, Build: bundle.BuildOptions{Runtime: f.rt}, Ephemeral: true, Shadow: &chain.Active{}}); err == nil {
		t.Fatal("an ephemeral manager with a shadow slot was accepted")
	}
}
