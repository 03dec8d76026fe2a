package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A gateway on its embedded, authenticated NATS, as `make run` starts it: the dashboard's
// approval (admin API) still releases a held call and records the verified approver; the
// audit stream cannot be purged by the gateway identity; every event the gateway published
// verifies in audit tail; a client without a key is refused.
func TestEmbeddedBusEndToEnd(t *testing.T) {
	up := testenv.StartGoServer(t, false)
	data := t.TempDir()
	y := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
bundle: %s
upstreams: [{name: up, url: %q}]
nats: {port: -1}
admin: {token: %s}
approvals:
  timeout: 1m
`, data, approvalsBundle(t), up, approvalsToken)
	cfg, err := gateway.ParseFile([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins.CacheDir = testenv.CacheDir()
	g, err := gateway.New(t.Context(), gateway.Options{Config: cfg.Config, Sections: cfg.Sections, Instance: "gw-embedded"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	url := g.Bus().ClientURL()

	if nc, err := nats.Connect(url, nats.Timeout(5*time.Second)); err == nil {
		nc.Close()
		t.Fatal("connected to the gateway's NATS without a key")
	}

	cs := mcpSession(t, g, nil)
	ch := callAsync(t.Context(), cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold embedded"}})
	select {
	case r := <-ch:
		t.Fatalf("call returned before any decision: %v %v", r.res, r.err)
	case <-time.After(2 * time.Second):
	}
	held := waitHeld(t, g, "hold embedded")

	// A process holding the gateway's own NATS key writes an approval: ignored, audited.
	gwKey, err := bus.LoadIdentity(data, bus.RoleGateway, "")
	if err != nil {
		t.Fatal(err)
	}
	fc, err := nats.Connect(url, gwKey.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	fjs, _ := jetstream.New(fc)
	kv, err := fjs.KeyValue(t.Context(), approval.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), "decision."+held.ID, []byte(`{"action":"allow","decided_by":"approver:erin","approval_id":"`+held.ID+`"}`)); err != nil {
		t.Fatal(err)
	}
	forged := waitEvent(t, g, "approval.forged", func(ev audit.Event) bool {
		return ev.Approval != nil && ev.Approval.Decision == audit.ApprovalForged && ev.Approval.ID == held.ID
	})
	if forged.Approval.ClaimedBy != "approver:erin" || forged.Subject() != "palisade.audit.approval.forged" {
		t.Errorf("forged event = %+v", forged.Approval)
	}
	select {
	case r := <-ch:
		t.Fatalf("a forged approval released the call: %v %v", r.res, r.err)
	default:
	}
	if code := adminCall(t, g, "POST", "/approvals/"+held.ID+"/approve", map[string]any{"by": "erin"}, nil); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	if r := wait(t, ch); r.err != nil || text(r.res) != "Echo: hold embedded" {
		t.Fatalf("approved call = %v %v", r.res, r.err)
	}
	ev := waitEvent(t, g, "approval", func(ev audit.Event) bool {
		return ev.Kind == audit.KindApproval && ev.Approval != nil && ev.Approval.ID == held.ID
	})
	if ev.Approval.DecidedBy != "admin-token" || ev.Approval.Signer != g.Bus().Identity(bus.RoleApprover).PublicKey() {
		t.Errorf("approval event = %+v", ev.Approval)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	gwID, err := bus.LoadIdentity(data, bus.RoleGateway, "")
	if err != nil {
		t.Fatal(err)
	}
	gc, err := nats.Connect(url, gwID.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	js, _ := jetstream.New(gc)
	s, err := js.Stream(ctx, audit.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.CachedInfo().Config; !c.DenyPurge || !c.DenyDelete {
		t.Errorf("audit stream config deny_purge=%v deny_delete=%v", c.DenyPurge, c.DenyDelete)
	}
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	if err := s.Purge(pctx); err == nil {
		t.Error("the gateway identity purged the audit stream")
	}
	pcancel()

	if err := g.Audit().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := int(info.State.Msgs)
	rd, err := bus.LoadIdentity(data, bus.RoleReader, "")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := nats.Connect(url, rd.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out strings.Builder
	if err := audit.Tail(ctx, rc, audit.TailOptions{Verify: true, Last: n, Count: n}, &out); err != nil {
		t.Fatal(err)
	}
	if n < 3 || strings.Contains(out.String(), "FORGED") {
		t.Fatalf("tail of %d events:\n%s", n, out.String())
	}
}
