package bundle_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

func decide(t testing.TB, f *fixture) (string, string) {
	t.Helper()
	ch, release := f.active.Acquire()
	if ch == nil {
		t.Fatal("no active chain")
	}
	defer release()
	env, err := mcp.NewEnvelope(&mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "tools/call", Params: json.RawMessage(`{"name":"fs/read","arguments":{}}`)}, mcp.Context{Transport: "test", Server: "files"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := ch.Evaluate(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return ch.Info().Name, d.Action
}

func TestActivateSwapAndNoop(t *testing.T) {
	f := newFixture(t, false)
	a := f.signed(t, "alpha", "1.0.0", alphaStages(), "allow")
	b := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
	ctx := context.Background()

	e, changed, err := f.m.Activate(ctx, a, "dir:a")
	if err != nil || !changed || e.Name != "alpha" || e.KeyID != bundle.KeyID(f.pub) {
		t.Fatalf("activate alpha: %+v %v %v", e, changed, err)
	}
	if name, act := decide(t, f); name != "alpha" || act != abi.ActionAllow {
		t.Fatalf("alpha decides %s %s", name, act)
	}
	first := f.active.Load()
	if _, changed, err := f.m.Activate(ctx, a, "dir:a"); err != nil || changed {
		t.Fatalf("same bundle again: changed=%v err=%v, want a no-op", changed, err)
	}
	if f.active.Load() != first {
		t.Fatal("a no-op activation swapped the chain")
	}
	if _, _, err := f.m.Activate(ctx, b, "dir:b"); err != nil {
		t.Fatal(err)
	}
	if name, act := decide(t, f); name != "beta" || act != abi.ActionDeny {
		t.Fatalf("beta decides %s %s", name, act)
	}
	select {
	case <-first.Closed():
	case <-t.Context().Done():
	}
	if f.m.Close(ctx) != nil {
		t.Fatal("close")
	}
	select {
	case <-first.Closed():
	default:
		t.Fatal("the swapped-out chain was not closed after draining")
	}
	act := f.rec.kind(audit.KindBundleActivated)
	if len(act) != 2 || act[1].Bundle.Name != "beta" || act[1].Bundle.Digest == "" || act[1].Subject() != "palisade.audit.bundle.activated" {
		t.Fatalf("activated events: %+v", act)
	}
}

func TestArchiveActivation(t *testing.T) {
	f := newFixture(t, false)
	a := f.signed(t, "alpha", "1.0.0", alphaStages(), "allow")
	arc := filepath.Join(t.TempDir(), "alpha.tar.gz")
	if err := bundle.PackFile(a, arc); err != nil {
		t.Fatal(err)
	}
	e, _, err := f.m.Activate(context.Background(), arc, "file")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := bundle.Digest(a)
	if e.Digest != want {
		t.Fatalf("archive digest %s, folder digest %s", e.Digest, want)
	}
	r, err := os.Open(arc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, changed, err := f.m.ActivateArchive(context.Background(), r, "upload"); err != nil || changed {
		t.Fatalf("same archive by reader: changed=%v err=%v", changed, err)
	}
}

func TestRejections(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		allowUnsigned bool
		make          func(t *testing.T, f *fixture) string
		want          error
		reason        string
	}{
		{"tampered wasm after signing", false, func(t *testing.T, f *fixture) string {
			d := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
			appendByte(t, filepath.Join(d, "plugins", "rules.wasm"))
			return d
		}, bundle.ErrDigestMismatch, "tampered"},
		{"tampered wasm unsigned", true, func(t *testing.T, f *fixture) string {
			d := writeBundle(t, t.TempDir(), "beta", "2.0.0", betaStages(), "deny")
			appendByte(t, filepath.Join(d, "plugins", "rules.wasm"))
			return d
		}, bundle.ErrHashMismatch, "hash_mismatch"},
		{"added file after signing", false, func(t *testing.T, f *fixture) string {
			d := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
			if err := os.WriteFile(filepath.Join(d, "extra.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, bundle.ErrDigestMismatch, "tampered"},
		{"bad signature", false, func(t *testing.T, f *fixture) string {
			d := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
			rewriteSig(t, d, func(s *bundle.Signature) {
				raw, _ := base64.StdEncoding.DecodeString(s.Signature)
				raw[0] ^= 0xff
				s.Signature = base64.StdEncoding.EncodeToString(raw)
			})
			return d
		}, bundle.ErrBadSignature, "bad_signature"},
		{"signature over another digest", false, func(t *testing.T, f *fixture) string {
			d := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
			rewriteSig(t, d, func(s *bundle.Signature) { s.Digest = "sha256:" + strings.Repeat("0", 64) })
			return d
		}, bundle.ErrBadSignature, "bad_signature"},
		{"untrusted key", false, func(t *testing.T, f *fixture) string {
			d := writeBundle(t, t.TempDir(), "beta", "2.0.0", betaStages(), "deny")
			_, other, _ := bundle.GenerateKey()
			if _, err := bundle.Sign(d, other); err != nil {
				t.Fatal(err)
			}
			return d
		}, bundle.ErrUntrustedKey, "untrusted_key"},
		{"unsigned", false, func(t *testing.T, f *fixture) string {
			return writeBundle(t, t.TempDir(), "beta", "2.0.0", betaStages(), "deny")
		}, bundle.ErrUnsigned, "unsigned"},
		{"fixtures fail", false, func(t *testing.T, f *fixture) string {
			return f.signed(t, "beta", "2.0.0", betaStages(), "allow") // beta denies
		}, bundle.ErrFixture, "fixture_failed"},
		{"plugin traps on load", false, func(t *testing.T, f *fixture) string {
			return f.signed(t, "trap", "3.0.0", []stageDef{{name: "s1", rules: [][2]string{{"t", "allow"}}}, {name: "boom", plugin: "./host/bundle/testdata/trapinit"}}, "")
		}, nil, "plugin_load_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.allowUnsigned)
			a := f.signed(t, "alpha", "1.0.0", alphaStages(), "allow")
			if _, _, err := f.m.Activate(ctx, a, "dir:a"); err != nil {
				t.Fatal(err)
			}
			before := f.active.Load()
			_, _, err := f.m.Activate(ctx, tc.make(t, f), "dir:bad")
			if err == nil {
				t.Fatal("bad bundle activated")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got := bundle.RejectReason(err); got != tc.reason {
				t.Fatalf("reason %q, want %q (err %v)", got, tc.reason, err)
			}
			t.Logf("rejected: %v", err)
			if f.active.Load() != before {
				t.Fatal("the active chain changed")
			}
			if name, act := decide(t, f); name != "alpha" || act != abi.ActionAllow {
				t.Fatalf("after rejection: %s %s, want alpha allow", name, act)
			}
			rej := f.rec.kind(audit.KindBundleRejected)
			if len(rej) != 1 || rej[0].Reason == "" || rej[0].Subject() != "palisade.audit.bundle.rejected" {
				t.Fatalf("rejected events: %+v", rej)
			}
			var detail map[string]any
			_ = json.Unmarshal(rej[0].Detail, &detail)
			if detail["reason"] != tc.reason {
				t.Fatalf("event detail %s, want reason %s", rej[0].Detail, tc.reason)
			}
			if cur, _ := f.m.Current(); cur.Name != "alpha" {
				t.Fatalf("current %+v", cur)
			}
		})
	}
}

func TestRollbackKeptAndRestore(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, false)
	dirs := map[string]string{}
	for _, v := range []string{"1", "2", "3"} {
		stages := alphaStages()
		stages[0].rules[0][0] = "alpha-v" + v
		dirs[v] = f.signed(t, "alpha", v, stages, "allow")
		if _, _, err := f.m.Activate(ctx, dirs[v], "dir"); err != nil {
			t.Fatal(err)
		}
	}
	if h := f.m.History(); len(h) != 3 || h[0].Version != "3" {
		t.Fatalf("history %+v", h)
	}
	if e, err := f.m.Rollback(ctx); err != nil || e.Version != "2" {
		t.Fatalf("rollback: %+v %v", e, err)
	}
	if f.active.Load().Info().Version != "2" {
		t.Fatalf("active %+v", f.active.Load().Info())
	}
	if e, _, err := f.m.ActivateKept(ctx, "1"); err != nil || e.Version != "1" {
		t.Fatalf("activate kept 1: %+v %v", e, err)
	}
	if _, _, err := f.m.ActivateKept(ctx, "9"); !errors.Is(err, bundle.ErrNotKept) {
		t.Fatalf("activate unknown: %v", err)
	}
	if e, err := f.m.Rollback(ctx); err != nil || e.Version != "2" {
		t.Fatalf("second rollback: %+v %v", e, err)
	}
	if _, err := f.m.Rollback(ctx); !errors.Is(err, bundle.ErrNoPrevious) {
		t.Fatalf("rollback past the last: %v", err)
	}

	// A restarted gateway restores what it served.
	f.m.Close(ctx)
	f.active.Swap(nil).CloseWhenDrained(ctx)
	m2 := f.manager(t, false)
	e, err := m2.Restore(ctx)
	if err != nil || e.Version != "2" || f.active.Load().Info().Version != "2" {
		t.Fatalf("restore: %+v %v", e, err)
	}
	f.m = m2

	// Keep bounds what stays on disk.
	for i := range bundle.DefaultKeep { // one kept (v2) + 5 new: one over Keep
		stages := alphaStages()
		stages[0].rules[0][0] = "k" + string(rune('a'+i))
		if _, _, err := m2.Activate(ctx, f.signed(t, "alpha", "k"+string(rune('a'+i)), stages, "allow"), "dir"); err != nil {
			t.Fatal(err)
		}
	}
	kept, _ := filepath.Glob(filepath.Join(f.data, "bundles", "[0-9a-f]*"))
	if len(m2.History()) != bundle.DefaultKeep || len(kept) != bundle.DefaultKeep {
		t.Fatalf("history %d, folders %d, want %d", len(m2.History()), len(kept), bundle.DefaultKeep)
	}
}

func appendByte(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rewriteSig(t *testing.T, dir string, f func(*bundle.Signature)) {
	t.Helper()
	s, err := bundle.ReadSignature(dir)
	if err != nil {
		t.Fatal(err)
	}
	f(s)
	b, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, bundle.SignatureFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
