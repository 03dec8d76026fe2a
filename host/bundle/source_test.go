package bundle_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/nats-io/nats.go"
)

// waitVersion polls until the manager's current bundle has version v.
func waitVersion(t *testing.T, m *bundle.Manager, v string) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, "bundle version "+v, func() bool {
		cur, ok := m.Current()
		return ok && cur.Version == v
	})
}

func run(t *testing.T, f *fixture, s bundle.Source) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx, f.m) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestObjectStoreSource(t *testing.T) {
	srv := testenv.StartNATS(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	f := newFixture(t, false)
	ctx := context.Background()
	a := f.signed(t, "alpha", "1.0.0", alphaStages(), "allow")
	if _, e, err := bundle.Push(ctx, nc, "", "", a); err != nil || e.Version != "1.0.0" {
		t.Fatalf("push: %+v %v", e, err)
	}
	run(t, f, &bundle.ObjectStoreSource{Conn: nc, Resync: time.Hour})
	waitVersion(t, f.m, "1.0.0") // a gateway started after the push picks up the current bundle
	arc := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := bundle.PackFile(f.signed(t, "beta", "2.0.0", betaStages(), "deny"), arc); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bundle.Push(ctx, nc, "", "", arc); err != nil {
		t.Fatal(err)
	}
	waitVersion(t, f.m, "2.0.0")
	// A bad bundle pushed to the fleet is rejected; the current one keeps serving.
	bad := f.signed(t, "beta", "3.0.0", betaStages(), "deny")
	appendByte(t, filepath.Join(bad, "plugins", "rules.wasm"))
	if _, _, err := bundle.Push(ctx, nc, "", "", bad); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "the tampered bundle's rejection", func() bool { return len(f.rec.kind("bundle.rejected")) > 0 })
	if cur, _ := f.m.Current(); cur.Version != "2.0.0" {
		t.Fatalf("current %s after a rejected push", cur.Version)
	}
}

func TestDirSource(t *testing.T) {
	f := newFixture(t, false)
	dir := filepath.Join(t.TempDir(), "live")
	if err := os.Rename(f.signed(t, "alpha", "1.0.0", alphaStages(), "allow"), dir); err != nil {
		t.Fatal(err)
	}
	// The debounce is what keeps a half-written folder from being tried: it must outlast the
	// gap between two of the writes below, which on a loaded machine (a full test run beside a
	// CPU hog) once exceeded 100 ms.
	run(t, f, &bundle.DirSource{Path: dir, Interval: 20 * time.Millisecond, Debounce: time.Second})
	waitVersion(t, f.m, "1.0.0")
	// Replace the folder's content with beta's, file by file.
	b := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
	for _, name := range []string{"bundle.yaml", "plugins/rules.wasm", "fixtures/basic.json", "signature.json"} {
		data, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitVersion(t, f.m, "2.0.0")
	if n := len(f.rec.kind("bundle.rejected")); n != 0 {
		t.Fatalf("%d rejections: a half-written bundle was tried", n)
	}
}

func TestHTTPSource(t *testing.T) {
	f := newFixture(t, false)
	var body atomic.Value
	var served, notModified atomic.Int64
	pack := func(dir string) {
		arc := filepath.Join(t.TempDir(), "b.tar.gz")
		if err := bundle.PackFile(dir, arc); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(arc)
		body.Store(b)
	}
	pack(f.signed(t, "alpha", "1.0.0", alphaStages(), "allow"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := body.Load().([]byte)
		sum := sha256.Sum256(b)
		tag := fmt.Sprintf("%q", hex.EncodeToString(sum[:8]))
		if r.Header.Get("If-None-Match") == tag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		served.Add(1)
		w.Header().Set("ETag", tag)
		w.Write(b)
	}))
	defer ts.Close()
	src := &bundle.HTTPSource{URL: ts.URL + "/bundle.tar.gz"}
	ctx := context.Background()
	if changed, err := src.Poll(ctx, f.m); err != nil || !changed {
		t.Fatalf("first poll: %v %v", changed, err)
	}
	if changed, err := src.Poll(ctx, f.m); err != nil || changed || notModified.Load() != 1 {
		t.Fatalf("second poll: changed=%v err=%v 304s=%d", changed, err, notModified.Load())
	}
	pack(f.signed(t, "beta", "2.0.0", betaStages(), "deny"))
	if changed, err := src.Poll(ctx, f.m); err != nil || !changed {
		t.Fatalf("poll after change: %v %v", changed, err)
	}
	waitVersion(t, f.m, "2.0.0")
	if served.Load() != 2 {
		t.Fatalf("served the archive %d times, want 2", served.Load())
	}
}
