package bundle_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/nats-io/nats.go/jetstream"
)

// sequenced writes and signs a bundle whose manifest carries sequence seq.
func (f *fixture) sequenced(t *testing.T, version string, seq int) string {
	t.Helper()
	dir := writeBundle(t, filepath.Join(t.TempDir(), "seq-"+version), "alpha", version, alphaStages(), "allow")
	y := filepath.Join(dir, bundle.ManifestFile)
	b, err := os.ReadFile(y)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(y, append(b, []byte("sequence: "+strconv.Itoa(seq)+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Sign(dir, f.priv); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOlderSequenceRefused(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	v2, v1 := f.sequenced(t, "2.0.0", 2), f.sequenced(t, "1.0.0", 1)
	if _, _, err := f.m.Activate(ctx, v2, "dir:v2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.Activate(ctx, v1, "dir:v1"); !errors.Is(err, bundle.ErrOlder) {
		t.Fatalf("older bundle: %v, want ErrOlder", err)
	}
	if rej := f.rec.kind("bundle.rejected"); len(rej) != 1 || !strings.Contains(string(rej[0].Detail), "older_sequence") {
		t.Fatalf("rejections = %+v", rej)
	}
	// A restarted manager remembers the last sequence: it refuses v1 before anything is active.
	m2 := f.manager(t, false)
	if _, _, err := m2.Activate(ctx, v1, "dir:v1"); !errors.Is(err, bundle.ErrOlder) {
		t.Fatalf("older bundle after restart: %v, want ErrOlder", err)
	}
	// Explicit rollback (the kept v2's predecessor does not exist: roll back by archive).
	arc := filepath.Join(t.TempDir(), "v1.tar.gz")
	if err := bundle.PackFile(v1, arc); err != nil {
		t.Fatal(err)
	}
	r, _ := os.Open(arc)
	defer r.Close()
	if e, changed, err := f.m.RollbackArchive(ctx, r, "rollback"); err != nil || !changed || e.Sequence != 1 {
		t.Fatalf("explicit rollback: %+v %v %v", e, changed, err)
	}
}

// The fleet path, on the authenticated embedded bus: gateways follow the bucket as the gateway
// identity (which may not write it); the operator pushes as admin. An older bundle is refused,
// an explicit rollback is taken.
func TestObjectStoreRefusesOlderUnlessRollback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	admin, err := b.ConnectAs(bus.RoleAdmin, "operator")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := b.Connect("gateway")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, false)
	v2, v1 := f.sequenced(t, "2.0.0", 2), f.sequenced(t, "1.0.0", 1)
	if _, _, err := bundle.Push(ctx, admin, "", "", v2); err != nil {
		t.Fatal(err)
	}
	run(t, f, &bundle.ObjectStoreSource{Conn: gw, Resync: 100 * time.Millisecond})
	waitVersion(t, f.m, "2.0.0")

	pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
	if _, _, err := bundle.Push(pctx, gw, "", "", v1); err == nil {
		t.Error("the gateway identity pushed a bundle")
	}
	pcancel()

	if _, _, err := bundle.Push(ctx, admin, "", "", v1); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "the older bundle's rejection", func() bool { return len(f.rec.kind("bundle.rejected")) > 0 })
	if rej := f.rec.kind("bundle.rejected")[0]; !strings.Contains(string(rej.Detail), "older_sequence") {
		t.Errorf("rejection = %s %s", rej.Reason, rej.Detail)
	}
	if cur, _ := f.m.Current(); cur.Version != "2.0.0" {
		t.Fatalf("current %s after an older push", cur.Version)
	}

	if _, _, err := bundle.PushRollback(ctx, admin, "", "", v1); err != nil {
		t.Fatal(err)
	}
	waitVersion(t, f.m, "1.0.0")
	// The manager makes 1.0.0 current before it records the activation: wait for the event.
	var last audit.Event
	testenv.Eventually(t, 60*time.Second, "the rollback's activation event", func() bool {
		act := f.rec.kind("bundle.activated")
		last = act[len(act)-1]
		return last.Bundle != nil && last.Bundle.Version == "1.0.0"
	})
	if !strings.Contains(string(last.Detail), `"rollback":true`) {
		t.Errorf("rollback activation detail = %s", last.Detail)
	}
}

// A put between the source's look at the object's info and its read of the object: the
// operator's rollback of v1 is replaced by an ordinary push of an older v1.5 while the gateway
// reads. The gateway must judge the bytes it read by their own info: v1.5 is an ordinary push
// with a lower sequence than the active v2, so it is refused. (Reading the info and the body in
// two calls took the rollback mark of one object for the body of the next and activated v1.5.)
func TestObjectStoreInfoMatchesBody(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	admin, err := b.ConnectAs(bus.RoleAdmin, "operator")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := b.Connect("gateway")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, false)
	v2, v1, v15 := f.sequenced(t, "2.0.0", 2), f.sequenced(t, "1.0.0", 1), f.sequenced(t, "1.5.0", 1)
	if _, _, err := bundle.Push(ctx, admin, "", "", v2); err != nil {
		t.Fatal(err)
	}
	var swapped atomic.Bool
	pushed := make(chan error, 1)
	src := &bundle.ObjectStoreSource{Conn: gw, Resync: 100 * time.Millisecond}
	bundle.SetAfterInfo(src, func(info *jetstream.ObjectInfo) {
		if info.Metadata[bundle.MetaRollback] == "true" && swapped.CompareAndSwap(false, true) {
			_, _, err := bundle.Push(ctx, admin, "", "", v15)
			pushed <- err
		}
	})
	run(t, f, src)
	waitVersion(t, f.m, "2.0.0")
	if _, _, err := bundle.PushRollback(ctx, admin, "", "", v1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-pushed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the source never read the rollback's info")
	}
	testenv.Eventually(t, 60*time.Second, "v1.5 decided", func() bool {
		cur, _ := f.m.Current()
		return cur.Version != "2.0.0" || len(f.rec.kind("bundle.rejected")) > 0
	})
	if cur, _ := f.m.Current(); cur.Version != "2.0.0" {
		t.Fatalf("current %s: the rollback mark of one object was applied to the next", cur.Version)
	}
	if rej := f.rec.kind("bundle.rejected")[0]; !strings.Contains(string(rej.Detail), "older_sequence") {
		t.Errorf("rejection = %s %s", rej.Reason, rej.Detail)
	}
}
