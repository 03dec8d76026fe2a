package bundle_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/chain"
)

// shadowManager returns a manager of f's active slot with a shadow slot, trusting f's key.
func shadowManager(t *testing.T, f *fixture) (*bundle.Manager, *chain.Active) {
	t.Helper()
	slot := &chain.Active{}
	m, err := bundle.NewManager(bundle.ManagerOptions{
		Active: f.active, Shadow: slot, Build: bundle.BuildOptions{Runtime: f.rt}, DataDir: t.TempDir(),
		Keys: bundle.KeySet{bundle.KeyID(f.pub): f.pub}, Recorder: f.rec, Gateway: "gw-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c := slot.Swap(nil); c != nil {
			c.CloseWhenDrained(context.Background())
		}
		m.Close(context.Background())
	})
	return m, slot
}

// TestShadowFromObjectStore: the fleet path feeds the shadow slot too (`bundles.shadow:
// nats://PALISADE_BUNDLES/shadow`): the operator pushes to another object of the bundles
// bucket and the gateway identity's source loads it as the shadow, leaving the active bundle
// alone; the same object again is a no-op.
func TestShadowFromObjectStore(t *testing.T) {
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
	m, _ := shadowManager(t, f)
	v1, v2 := f.sequenced(t, "1.0.0", 1), f.sequenced(t, "2.0.0", 2)
	if _, _, err := m.Activate(ctx, v2, "dir:v2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bundle.Push(ctx, admin, "", "shadow", v1); err != nil {
		t.Fatal(err)
	}
	src := &bundle.ObjectStoreSource{Conn: gw, Object: "shadow"}
	if changed, err := src.Sync(ctx, m.ShadowTarget()); err != nil || !changed {
		t.Fatalf("Sync into the shadow: changed=%v %v", changed, err)
	}
	if e, ok := m.Shadow(); !ok || e.Version != "1.0.0" || !strings.HasPrefix(e.Source, "nats:PALISADE_BUNDLES/shadow") {
		t.Fatalf("shadow %+v %v", e, ok)
	}
	if cur, _ := m.Current(); cur.Version != "2.0.0" {
		t.Fatalf("the shadow source changed the active bundle to %s", cur.Version)
	}
	if changed, err := src.Sync(ctx, m.ShadowTarget()); err != nil || changed {
		t.Fatalf("the same object again: changed=%v %v, want a no-op", changed, err)
	}
}

// TestShadowSlot: a shadow is loaded whatever its sequence, verified like any bundle (a bad
// signature is refused with ErrBadSignature and leaves the loaded shadow), never touches the
// active slot, and is promoted only through the activation path: an older one is refused with
// ErrOlder, a newer one becomes active with a bundle.activated event and empties the slot.
func TestShadowSlot(t *testing.T) {
	f := newFixture(t, false)
	m, slot := shadowManager(t, f)
	ctx := context.Background()
	v1, v2, v3 := f.sequenced(t, "1.0.0", 1), f.sequenced(t, "2.0.0", 2), f.sequenced(t, "3.0.0", 3)
	bad := f.sequenced(t, "4.0.0", 4)
	rewriteSig(t, bad, func(s *bundle.Signature) {
		raw, _ := base64.StdEncoding.DecodeString(s.Signature)
		raw[0] ^= 0xff
		s.Signature = base64.StdEncoding.EncodeToString(raw)
	})

	if _, err := m.ClearShadow(ctx); !errors.Is(err, bundle.ErrNoShadow) {
		t.Fatalf("ClearShadow with none: %v, want ErrNoShadow", err)
	}
	if _, _, err := m.PromoteShadow(ctx); !errors.Is(err, bundle.ErrNoShadow) {
		t.Fatalf("PromoteShadow with none: %v, want ErrNoShadow", err)
	}
	if _, _, err := m.Activate(ctx, v2, "dir:v2"); err != nil {
		t.Fatal(err)
	}
	active := f.active.Load()
	e, changed, err := m.LoadShadow(ctx, v1, "dir:v1")
	if err != nil || !changed || e.Version != "1.0.0" || slot.Load() == nil || f.active.Load() != active {
		t.Fatalf("LoadShadow(older v1) = %+v %v %v; the shadow's sequence is not checked and the active slot is left alone", e, changed, err)
	}
	if _, changed, err := m.LoadShadow(ctx, v1, "dir:v1"); err != nil || changed {
		t.Fatalf("the same shadow again: changed=%v %v, want a no-op", changed, err)
	}
	if _, _, err := m.LoadShadow(ctx, bad, "dir:bad"); !errors.Is(err, bundle.ErrBadSignature) || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("badly signed shadow: %v, want ErrBadSignature", err)
	}
	if rej := f.rec.kind(audit.KindBundleRejected); len(rej) != 1 || !strings.Contains(string(rej[0].Detail), `"slot":"shadow"`) || !strings.Contains(string(rej[0].Detail), "bad_signature") {
		t.Fatalf("rejections %+v, want one bad_signature in the shadow slot", rej)
	}
	if e, ok := m.Shadow(); !ok || e.Version != "1.0.0" {
		t.Fatalf("shadow after a refused one: %+v %v, want v1", e, ok)
	}
	if _, _, err := m.PromoteShadow(ctx); !errors.Is(err, bundle.ErrOlder) {
		t.Fatalf("promote an older shadow: %v, want ErrOlder", err)
	}
	if cur, _ := m.Current(); cur.Version != "2.0.0" || f.active.Load() != active {
		t.Fatalf("a refused promote changed the active bundle to %+v", cur)
	}
	if _, _, err := m.LoadShadow(ctx, v3, "dir:v3"); err != nil {
		t.Fatal(err)
	}
	e, changed, err = m.PromoteShadow(ctx)
	if err != nil || !changed || e.Version != "3.0.0" || !strings.HasPrefix(e.Source, "promote-shadow (dir:v3") {
		t.Fatalf("PromoteShadow = %+v %v %v", e, changed, err)
	}
	if cur, _ := m.Current(); cur.Version != "3.0.0" || f.active.Load() == active {
		t.Fatalf("active after promote %+v", cur)
	}
	if _, ok := m.Shadow(); ok || slot.Load() != nil {
		t.Fatal("the shadow slot is not empty after promote")
	}
	act := f.rec.kind(audit.KindBundleActivated)
	if last := act[len(act)-1]; last.Bundle.Version != "3.0.0" || !strings.Contains(string(last.Detail), "promote-shadow") {
		t.Fatalf("last bundle.activated %+v", last)
	}
	if sh := f.rec.kind(audit.KindBundleShadow); len(sh) != 3 || !strings.Contains(string(sh[2].Detail), `"promoted":true`) {
		t.Fatalf("bundle.shadow events %d, want loaded v1, loaded v3, promoted", len(sh))
	}

	if _, _, err := f.m.LoadShadow(ctx, v3, "dir:v3"); !errors.Is(err, bundle.ErrNoShadowSlot) {
		t.Fatalf("a manager without a shadow slot: %v, want ErrNoShadowSlot", err)
	}
}

// TestShadowKeptAcrossRestart: a shadow loaded through the manager (the admin API, `tune
// --shadow`) judges again after a restart, checked again; one cleared stays cleared.
func TestShadowKeptAcrossRestart(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	data := t.TempDir()
	open := func() (*bundle.Manager, *chain.Active) {
		slot := &chain.Active{}
		m, err := bundle.NewManager(bundle.ManagerOptions{Active: &chain.Active{}, Shadow: slot, Build: bundle.BuildOptions{Runtime: f.rt},
			DataDir: data, Keys: bundle.KeySet{bundle.KeyID(f.pub): f.pub}, Recorder: f.rec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if c := slot.Swap(nil); c != nil {
				c.CloseWhenDrained(ctx)
			}
			m.Close(ctx)
		})
		return m, slot
	}
	m, _ := open()
	if _, err := m.RestoreShadow(ctx); !errors.Is(err, bundle.ErrNoShadow) {
		t.Fatalf("restore with nothing kept: %v, want ErrNoShadow", err)
	}
	v1 := f.sequenced(t, "1.0.0", 1)
	loaded, _, err := m.LoadShadow(ctx, v1, "upload")
	if err != nil {
		t.Fatal(err)
	}
	m2, slot2 := open() // the restart
	e, err := m2.RestoreShadow(ctx)
	if err != nil || e.Digest != loaded.Digest || slot2.Load() == nil || e.Source != "restore (upload)" {
		t.Fatalf("restored %+v %v, want %s from upload", e, err, loaded.Digest)
	}
	m3, _ := open() // a second restart names the origin once
	if e, err := m3.RestoreShadow(ctx); err != nil || e.Source != "restore (upload)" {
		t.Fatalf("restored again %+v %v", e, err)
	}
	if _, err := m3.ClearShadow(ctx); err != nil {
		t.Fatal(err)
	}
	m4, slot4 := open()
	if _, err := m4.RestoreShadow(ctx); !errors.Is(err, bundle.ErrNoShadow) || slot4.Load() != nil {
		t.Fatalf("a cleared shadow came back: %v", err)
	}
}
