package bundle_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/added060/palisade/host/bundle"
)

// TestFixtureMemo: fixtures that passed for a digest on this host version are not run again
// (the one-process modes start often); another digest or another host version runs them.
func TestFixtureMemo(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t)
	memoPath := filepath.Join(t.TempDir(), "fixtures-passed.json")
	build := func(dir string, memo *bundle.FixtureMemo) error {
		b, err := bundle.Build(ctx, dir, bundle.BuildOptions{Runtime: rt, Fixtures: memo})
		if err == nil {
			b.Chain.CloseWhenDrained(ctx)
		}
		return err
	}
	good := writeBundle(t, t.TempDir(), "good", "1", betaStages(), "deny")
	memo := &bundle.FixtureMemo{Path: memoPath, Host: "v1"}
	if err := build(good, memo); err != nil {
		t.Fatal(err)
	}
	digest, err := bundle.Digest(good)
	if err != nil {
		t.Fatal(err)
	}
	if !memo.Passed(digest) {
		t.Fatal("passing fixtures were not remembered")
	}
	// A bundle whose fixtures fail, marked as passed for this host: not run again. (In use
	// only a passing run marks a digest; marking it here shows the run is skipped.)
	bad := writeBundle(t, t.TempDir(), "bad", "1", alphaStages(), "deny")
	if err := build(bad, nil); !errors.Is(err, bundle.ErrFixture) {
		t.Fatalf("failing fixtures without a memo: %v", err)
	}
	badDigest, _ := bundle.Digest(bad)
	memo.Record(badDigest)
	if err := build(bad, memo); err != nil {
		t.Fatalf("remembered digest: fixtures ran again: %v", err)
	}
	if err := build(bad, &bundle.FixtureMemo{Path: memoPath, Host: "v2"}); !errors.Is(err, bundle.ErrFixture) {
		t.Fatalf("another host version did not rerun the fixtures: %v", err)
	}
}
