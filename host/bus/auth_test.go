package bus_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func startAuthBus(t *testing.T) (*bus.Bus, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := bus.Start(context.Background(), bus.Options{DataDir: dir, Port: bus.RandomPort})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(b.Close)
	return b, dir
}

func connectAs(t *testing.T, b *bus.Bus, role string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(b.ClientURL(), append(b.Identity(role).Options(), nats.Timeout(5*time.Second))...)
	if err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// short bounds one request that permissions may drop (the client then hears nothing back).
func short(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestKeysGeneratedPrivate(t *testing.T) {
	_, dir := startAuthBus(t)
	for _, role := range bus.Roles {
		fi, err := os.Stat(bus.KeyPath(dir, role))
		if err != nil {
			t.Fatalf("%s key: %v", role, err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s key mode %04o, want 0600", role, m)
		}
	}
	if fi, _ := os.Stat(bus.AuthDir(dir)); fi.Mode().Perm() != 0o700 {
		t.Errorf("auth dir mode %04o, want 0700", fi.Mode().Perm())
	}
}

func TestLooseKeyModeRefused(t *testing.T) {
	dir := t.TempDir()
	if _, err := bus.EnsureKeys(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bus.KeyPath(dir, bus.RoleGateway), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := bus.Start(context.Background(), bus.Options{DataDir: dir, Port: bus.RandomPort})
	if !errors.Is(err, bus.ErrKeyMode) {
		t.Fatalf("Start with a 0644 key = %v, want ErrKeyMode", err)
	}
	if _, err := bus.LoadIdentity(dir, bus.RoleGateway, ""); !errors.Is(err, bus.ErrKeyMode) {
		t.Fatalf("LoadIdentity = %v, want ErrKeyMode", err)
	}
	creds := filepath.Join(dir, "x.creds")
	if err := os.WriteFile(creds, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.LoadIdentity("", bus.RoleGateway, creds); !errors.Is(err, bus.ErrKeyMode) {
		t.Fatalf("LoadIdentity(creds 0640) = %v, want ErrKeyMode", err)
	}
}

func TestKeysSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	a, err := bus.EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bus.EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range bus.Roles {
		if a[r].PublicKey() != b[r].PublicKey() {
			t.Errorf("%s key changed between starts", r)
		}
	}
}

// An agent with a shell and no key: neither nats.go nor a raw TCP client gets in.
func TestUnauthenticatedClientRefused(t *testing.T) {
	b, _ := startAuthBus(t)
	if nc, err := nats.Connect(b.ClientURL(), nats.Timeout(5*time.Second)); err == nil {
		nc.Close()
		t.Fatal("nats.go connected without credentials")
	} else if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("connect without credentials: %v, want an authorization error", err)
	}
	// A fresh nkey the server does not know is refused too.
	dir := t.TempDir()
	ids, err := bus.EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(b.ClientURL(), append(ids[bus.RoleApprover].Options(), nats.Timeout(5*time.Second))...); err == nil {
		nc.Close()
		t.Fatal("connected with an unknown nkey")
	}

	// Raw TCP, as bash with /dev/tcp would: CONNECT without credentials, then try to
	// subscribe to the approvals bucket.
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(b.ClientURL(), "nats://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(info, "INFO ") || !strings.Contains(info, `"auth_required":true`) {
		t.Fatalf("INFO = %q (%v), want auth_required", info, err)
	}
	if _, err := conn.Write([]byte("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB $KV.PALISADE_APPROVALS.> 1\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	line, _ := r.ReadString('\n')
	if !strings.Contains(line, "-ERR") || !strings.Contains(strings.ToLower(line), "authorization") {
		t.Fatalf("after CONNECT without credentials got %q, want -ERR 'Authorization Violation'", line)
	}
}

func TestGatewayCannotPurgeAuditStream(t *testing.T) {
	b, _ := startAuthBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The stream as host/audit creates it: deny_delete and deny_purge.
	admin, _ := jetstream.New(connectAs(t, b, bus.RoleAdmin))
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: bus.DefaultAuditStream, Subjects: []string{bus.DefaultAuditSubject + ".>"}, DenyDelete: true, DenyPurge: true}); err != nil {
		t.Fatal(err)
	}
	gw, _ := jetstream.New(connectAs(t, b, bus.RoleGateway), jetstream.WithDefaultTimeout(2*time.Second))
	ack, err := gw.Publish(ctx, bus.DefaultAuditSubject+".decision.x", []byte(`{}`))
	if err != nil {
		t.Fatalf("gateway publish audit: %v", err)
	}
	s, err := gw.Stream(ctx, bus.DefaultAuditStream)
	if err != nil {
		t.Fatalf("gateway stream info: %v", err)
	}
	if err := s.Purge(short(t)); err == nil {
		t.Fatal("gateway purged the audit stream")
	}
	if err := s.DeleteMsg(short(t), ack.Sequence); err == nil {
		t.Fatal("gateway deleted an audit message")
	}
	if err := gw.DeleteStream(short(t), bus.DefaultAuditStream); err == nil {
		t.Fatal("gateway deleted the audit stream")
	}
	if _, err := gw.UpdateStream(short(t), jetstream.StreamConfig{Name: bus.DefaultAuditStream, Subjects: []string{bus.DefaultAuditSubject + ".>"}, MaxMsgs: 1, DenyDelete: true, DenyPurge: true}); err == nil {
		t.Fatal("gateway changed the audit stream's limits")
	}
	// Nor can the reader, nor even admin (the stream's own deny_purge).
	rd, _ := jetstream.New(connectAs(t, b, bus.RoleReader), jetstream.WithDefaultTimeout(2*time.Second))
	if rs, err := rd.Stream(ctx, bus.DefaultAuditStream); err != nil {
		t.Fatalf("reader stream info: %v", err)
	} else if err := rs.Purge(short(t)); err == nil {
		t.Fatal("reader purged the audit stream")
	}
	as, _ := admin.Stream(ctx, bus.DefaultAuditStream)
	if err := as.Purge(short(t)); err == nil {
		t.Fatal("admin purged a deny_purge stream")
	}
	if info, err := as.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("audit stream state %+v (%v), want 1 message", info, err)
	}
}

// The gateway identity publishes and consumes what the admin identity set up, and manages
// nothing: every stream and bucket operation below is refused by the server, while the
// gateway's own work (audit publish, held-call writes and tombstones, a KV watch, reading the
// signers bucket) still goes through.
func TestGatewayLeastPrivilege(t *testing.T) {
	b, _ := startAuthBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, _ := jetstream.New(connectAs(t, b, bus.RoleAdmin))
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: bus.DefaultAuditStream, Subjects: []string{bus.DefaultAuditSubject + ".>"}, DenyDelete: true, DenyPurge: true}); err != nil {
		t.Fatal(err)
	}
	apprCfg := jetstream.KeyValueConfig{Bucket: bus.DefaultApprovalsBucket, History: 1}
	if _, err := admin.CreateKeyValue(ctx, apprCfg); err != nil {
		t.Fatal(err)
	}
	akv, err := admin.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bus.DefaultSignersBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := akv.Put(ctx, b.Identity(bus.RoleGateway).PublicKey(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}

	gw, _ := jetstream.New(connectAs(t, b, bus.RoleGateway), jetstream.WithDefaultTimeout(2*time.Second))
	// Its work.
	if _, err := gw.Publish(ctx, bus.DefaultAuditSubject+".decision.x", []byte(`{}`)); err != nil {
		t.Fatalf("gateway publish audit: %v", err)
	}
	kv, err := gw.KeyValue(ctx, bus.DefaultApprovalsBucket)
	if err != nil {
		t.Fatalf("gateway open approvals: %v", err)
	}
	rev, err := kv.Put(ctx, "pending.A1", []byte(`{}`))
	if err != nil {
		t.Fatalf("gateway hold: %v", err)
	}
	if err := kv.Delete(ctx, "pending.A1"); err != nil {
		t.Fatalf("gateway release (tombstone): %v", err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatalf("gateway watch: %v", err)
	}
	w.Stop()
	skv, err := gw.KeyValue(ctx, bus.DefaultSignersBucket)
	if err != nil {
		t.Fatalf("gateway open signers: %v", err)
	}
	if _, err := skv.Get(ctx, b.Identity(bus.RoleGateway).PublicKey()); err != nil {
		t.Fatalf("gateway read signers: %v", err)
	}

	// Management, refused.
	stream := jetstream.StreamConfig{Name: "AGENT_STREAM", Subjects: []string{"agent.>"}}
	approvals := "KV_" + bus.DefaultApprovalsBucket
	signers := "KV_" + bus.DefaultSignersBucket
	for _, tc := range []struct {
		name string
		do   func(context.Context) error
	}{
		{"create a stream", func(c context.Context) error { _, err := gw.CreateStream(c, stream); return err }},
		{"create a KV bucket", func(c context.Context) error {
			_, err := gw.CreateKeyValue(c, jetstream.KeyValueConfig{Bucket: "AGENT_KV"})
			return err
		}},
		{"create an object store", func(c context.Context) error {
			_, err := gw.CreateObjectStore(c, jetstream.ObjectStoreConfig{Bucket: "AGENT_OBJ"})
			return err
		}},
		{"update the approvals bucket", func(c context.Context) error {
			cfg := apprCfg
			cfg.History = 64
			_, err := gw.UpdateKeyValue(c, cfg)
			return err
		}},
		{"update the audit stream", func(c context.Context) error {
			_, err := gw.UpdateStream(c, jetstream.StreamConfig{Name: bus.DefaultAuditStream, Subjects: []string{bus.DefaultAuditSubject + ".>"}, MaxMsgs: 1, DenyDelete: true, DenyPurge: true})
			return err
		}},
		{"register an audit signer", func(c context.Context) error { _, err := skv.Put(c, "UFORGED", []byte(`{}`)); return err }},
		{"purge the approvals bucket", func(c context.Context) error {
			s, err := gw.Stream(ctx, approvals)
			if err != nil {
				return err // cannot even look: refused
			}
			return s.Purge(c)
		}},
		{"delete a held call's message", func(c context.Context) error {
			s, err := gw.Stream(ctx, approvals)
			if err != nil {
				return err
			}
			return s.DeleteMsg(c, rev)
		}},
		{"delete the approvals bucket", func(c context.Context) error { return gw.DeleteKeyValue(c, bus.DefaultApprovalsBucket) }},
		{"delete the signers bucket", func(c context.Context) error { return gw.DeleteStream(c, signers) }},
		{"purge the signers bucket", func(c context.Context) error {
			s, err := gw.Stream(ctx, signers)
			if err != nil {
				return err
			}
			return s.Purge(c)
		}},
		{"delete the audit stream", func(c context.Context) error { return gw.DeleteStream(c, bus.DefaultAuditStream) }},
	} {
		if err := tc.do(short(t)); err == nil {
			t.Errorf("gateway could %s", tc.name)
		}
	}
	// And nothing changed.
	if _, err := admin.Stream(ctx, "AGENT_STREAM"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("AGENT_STREAM exists after the refused create: %v", err)
	}
	if _, err := akv.Get(ctx, "UFORGED"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("forged signer registered: %v", err)
	}
	if s, err := admin.KeyValue(ctx, bus.DefaultApprovalsBucket); err != nil {
		t.Errorf("approvals bucket gone: %v", err)
	} else if st, _ := s.Status(ctx); st.History() != 1 {
		t.Errorf("approvals bucket history = %d, want 1", st.History())
	}
}

func TestReaderCannotSeeHeldCalls(t *testing.T) {
	b, _ := startAuthBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, _ := jetstream.New(connectAs(t, b, bus.RoleAdmin))
	if _, err := admin.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bus.DefaultApprovalsBucket}); err != nil {
		t.Fatal(err)
	}
	gw, _ := jetstream.New(connectAs(t, b, bus.RoleGateway))
	kv, err := gw.KeyValue(ctx, bus.DefaultApprovalsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "pending.A1", []byte(`{"tool":"rm"}`)); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{bus.RoleReader, bus.RoleSink} {
		js, _ := jetstream.New(connectAs(t, b, role), jetstream.WithDefaultTimeout(2*time.Second))
		if _, err := js.KeyValue(short(t), bus.DefaultApprovalsBucket); err == nil {
			t.Errorf("%s opened the approvals bucket", role)
		}
		nc := connectAs(t, b, role)
		errs := make(chan error, 1)
		nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err })
		if _, err := nc.SubscribeSync("$KV." + bus.DefaultApprovalsBucket + ".>"); err == nil {
			select {
			case err := <-errs:
				if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permission") {
					t.Errorf("%s subscribe: %v", role, err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("%s subscribed to the approvals bucket without a permissions violation", role)
			}
		}
	}
	// The approver reads it and writes decisions, not pending entries.
	ap, _ := jetstream.New(connectAs(t, b, bus.RoleApprover), jetstream.WithDefaultTimeout(2*time.Second))
	akv, err := ap.KeyValue(ctx, bus.DefaultApprovalsBucket)
	if err != nil {
		t.Fatalf("approver open bucket: %v", err)
	}
	if e, err := akv.Get(ctx, "pending.A1"); err != nil || string(e.Value()) != `{"tool":"rm"}` {
		t.Fatalf("approver get pending: %v", err)
	}
	if _, err := akv.Create(ctx, "decision.A1", []byte(`{"action":"allow"}`)); err != nil {
		t.Fatalf("approver decide: %v", err)
	}
	if _, err := akv.Put(short(t), "pending.A2", []byte(`{}`)); err == nil {
		t.Fatal("approver wrote a pending entry")
	}
}

// A creds path may be a bare seed file (nkey authentication) or a NATS creds file.
func TestSeedFileAsCreds(t *testing.T) {
	b, dir := startAuthBus(t)
	id, err := bus.LoadIdentity("", bus.RoleReader, bus.KeyPath(dir, bus.RoleReader))
	if err != nil {
		t.Fatal(err)
	}
	if id.Creds != "" || id.PublicKey() != b.Identity(bus.RoleReader).PublicKey() {
		t.Fatalf("seed file identity = %+v", id)
	}
	nc, err := nats.Connect(b.ClientURL(), id.Options()...)
	if err != nil {
		t.Fatalf("connect with a seed file: %v", err)
	}
	nc.Close()
}
