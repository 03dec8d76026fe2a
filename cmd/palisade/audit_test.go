package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

// TestAuditCreds: `audit creds` writes the reader's key (0600) from the data dir, and a plain
// NATS client with it (nats.go's NkeyOptionFromSeed, what `nats --nkey FILE` uses) subscribes to
// the audit subjects of the embedded, authenticated server, while one without a key is refused.
func TestAuditCreds(t *testing.T) {
	data := t.TempDir()
	b, err := bus.Start(context.Background(), bus.Options{DataDir: data, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	out := filepath.Join(t.TempDir(), "reader.nk")
	code, stdout, errs := runKong(t, []string{"audit", "creds", "--role", "reader", "-o", out, "--data-dir", data}, nil)
	if code != exitOK || !strings.Contains(stdout, "nats sub") || !strings.Contains(stdout, "--nkey "+out) {
		t.Fatalf("audit creds: exit %d stdout %q stderr %q", code, stdout, errs)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, mode %v; want 0600", out, err, fi.Mode().Perm())
	}
	if code, _, errs := runKong(t, []string{"audit", "creds", "-o", out, "--data-dir", data}, nil); code != exitFail || !strings.Contains(errs, "exists") {
		t.Errorf("second write without --force: exit %d, stderr %q; want 1, file exists", code, errs)
	}
	if code, _, errs := runKong(t, []string{"audit", "creds", "-o", out, "--force", "--data-dir", data}, nil); code != exitOK {
		t.Errorf("--force: exit %d, stderr %q", code, errs)
	}
	if _, err := nats.Connect(b.ClientURL(), nats.Timeout(2*time.Second)); err == nil {
		t.Fatal("a client without a key connected")
	}
	opt, err := nats.NkeyOptionFromSeed(out)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(b.ClientURL(), opt, nats.Timeout(2*time.Second))
	if err != nil {
		t.Fatalf("connect with the written key: %v", err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("palisade.audit.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil || nc.LastError() != nil {
		t.Fatalf("subscribe palisade.audit.>: %v %v", err, nc.LastError())
	}
	gw, err := b.Connect("gw")
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if err := gw.Publish("palisade.audit.decision.deny.x", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || m.Subject != "palisade.audit.decision.deny.x" {
		t.Fatalf("reader got %v, %v", m, err)
	}
}
