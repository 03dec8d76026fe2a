package approval

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// On the authenticated embedded bus, a held call is decided only by an approver identity:
// decisions written with the gateway's own NATS identity (unsigned, or signed with a key no one
// trusts, or a real approver signature moved from another call) are ignored and audited as
// approval.forged; the reader cannot write at all; the approver's signed decision releases the
// call and the audit names the verified identity.
func TestForgedDecisionIgnoredAndAudited(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	adminBucket(t, ctx, b)
	approver := b.Identity(bus.RoleApprover)
	trusted := map[string]string{approver.PublicKey(): "approver"}
	gwConn, err := b.Connect("gateway")
	if err != nil {
		t.Fatal(err)
	}
	rec := &events{}
	gw, err := New(ctx, Options{Conn: gwConn, Gateway: "gw", Recorder: rec, Timeout: time.Hour, Approvers: trusted})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	ch := startHold(ctx, gw, held("H1", "s1", "delete_repo", `{"r":1}`))
	testenv.Eventually(t, waitLimit, "held", listed(gw, "H1"))

	// The attacker holds the gateway's NATS identity (the strongest a compromised local
	// process could have short of the approver key).
	forger, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleGateway).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	js, _ := jetstream.New(forger)
	kv, err := js.KeyValue(ctx, DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	mallory := approverKey(t)
	forge := func(d Decision, signer audit.Signer) {
		t.Helper()
		if signer != nil {
			d.Signer = signer.PublicKey()
			sig, _ := signer.Sign(signedBytes(d))
			d.Sig = b64(sig)
		}
		raw, _ := json.Marshal(d)
		if _, err := kv.Put(ctx, keyDecision+"H1", raw); err != nil {
			t.Fatalf("forger put: %v", err)
		}
	}
	forge(Decision{Action: "allow", By: "admin", ID: "H1"}, nil)
	forge(Decision{Action: "allow", By: "approver", ID: "H1"}, mallory)
	forge(Decision{Action: "allow", By: "approver", ID: "OTHER"}, approver) // a real signature for another call
	testenv.Eventually(t, waitLimit, "three approval.forged events", func() bool { return len(forgedEvents(rec)) >= 3 })
	for i, want := range []string{forgedUnsigned, forgedUnsigned, forgedTarget} {
		ev := forgedEvents(rec)[i]
		if !strings.HasPrefix(ev.Reason, want) || ev.Approval.ID != "H1" || ev.Subject() != "palisade.audit.approval.forged" {
			t.Errorf("forged event %d = %+v %+v, want reason %q", i, ev, ev.Approval, want)
		}
	}
	if _, ok := gw.Get("H1"); !ok {
		t.Fatal("a forged decision released the held call")
	}

	// The reader identity may not write the bucket at all.
	rc, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleReader).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rjs, _ := jetstream.New(rc)
	sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
	if _, err := rjs.Publish(sctx, "$KV."+DefaultBucket+"."+keyDecision+"H1", []byte(`{"action":"allow"}`)); err == nil {
		t.Error("reader wrote a decision")
	}
	scancel()

	// The approver (palisade approvals --nats-url, as the approver identity) decides.
	ac, err := nats.Connect(b.ClientURL(), approver.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	op, err := New(ctx, Options{Conn: ac, Gateway: "cli", Signer: approver})
	if err != nil {
		t.Fatalf("approver opens the bucket: %v", err)
	}
	defer op.Close()
	testenv.Eventually(t, waitLimit, "approver sees the held call", listed(op, "H1"))
	if err := op.Decide(ctx, "H1", Decision{Action: "deny", By: "erin", Reason: "no"}); err != nil {
		t.Fatalf("approver decide over a forged entry: %v", err)
	}
	res := result(t, ch)
	if res.Action != abi.ActionDeny || res.DecidedBy != "approver:erin" {
		t.Fatalf("resolution = %+v, want deny by approver:erin", res)
	}
	var got *audit.Approval
	for _, ev := range rec.all() {
		if ev.Approval != nil && ev.Approval.Decision == audit.ApprovalDenied {
			got = ev.Approval
		}
	}
	if got == nil || got.DecidedBy != "approver:erin" || got.Signer != approver.PublicKey() || got.ClaimedBy != "erin" {
		t.Fatalf("approval event = %+v", got)
	}
}

func forgedEvents(r *events) []audit.Event {
	var out []audit.Event
	for _, ev := range r.all() {
		if ev.Approval != nil && ev.Approval.Decision == audit.ApprovalForged {
			out = append(out, ev)
		}
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// adminBucket creates the approvals bucket as the admin identity, as the gateway's bootstrap
// does: the gateway and approver identities may only use it.
func adminBucket(t *testing.T, ctx context.Context, b *bus.Bus) {
	t.Helper()
	nc, err := b.ConnectAs(bus.RoleAdmin, "setup")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := EnsureBucket(ctx, js, ""); err != nil {
		t.Fatal(err)
	}
}
