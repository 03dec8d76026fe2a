package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/auditsink/pgtest"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterLoad is how many tools/call the failover test sends through each gateway.
const (
	clusterSessions = 4  // MCP sessions per gateway, each calling in sequence
	clusterCalls    = 50 // calls per session: 2 × 4 × 50 = 400 calls
)

// TestReplicatedBusFailover runs two gateways on a three-server JetStream cluster set up with
// `nats setup --replicas 3`, and the PostgreSQL sink on its audit stream. Under load through
// both gateways it kills the server leading the audit stream. Then: every answered call has
// exactly one row in PostgreSQL (none lost, none doubled), a call held for approval across the
// failover is still decided by an approver and returns, and a bundle pushed after the failover
// reaches both gateways.
func TestReplicatedBusFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-server NATS cluster, PostgreSQL and two gateways")
	}
	started := time.Now()
	cl := testenv.StartCluster(t, 3)
	pg := pgtest.Start(t)
	up := testenv.StartGoServer(t, false)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	key := func(role string) (string, *bus.Identity) {
		t.Helper()
		id, err := bus.LoadIdentity(cl.DataDir(), role, "")
		if err != nil {
			t.Fatal(err)
		}
		return bus.KeyPath(cl.DataDir(), role), id
	}
	dial := func(role string) *nats.Conn {
		t.Helper()
		_, id := key(role)
		nc, err := bus.Dial(cl.URLs(), id, nats.Name("cluster-test "+role), nats.MaxReconnects(-1),
			nats.ReconnectWait(50*time.Millisecond), nats.RetryOnFailedConnect(true))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	gwCreds, gwID := key(bus.RoleGateway)
	apprCreds, apprID := key(bus.RoleApprover)

	// The operator's set-up: everything R3, the gateway key registered as an audit signer.
	adm := dial(bus.RoleAdmin)
	// On a loaded machine the meta leader can count a peer offline for a moment after the
	// cluster was ready ("no suitable peers for placement"): SetupNATS asks again until its
	// time runs out.
	setupCtx, setupCancel := context.WithTimeout(ctx, time.Minute)
	setupErr := gateway.SetupNATS(setupCtx, adm, gateway.NATSSetup{Replicas: 3, Signers: []audit.Signer{gwID}, Gateway: "cluster-test"})
	setupCancel()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	js, _ := jetstream.New(adm)
	for _, s := range []string{audit.DefaultStream, "KV_" + audit.DefaultSignersBucket, "KV_" + approval.DefaultBucket, "OBJ_" + bundle.DefaultBucket} {
		st, err := js.Stream(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if r := st.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("stream %s has %d replicas, want 3", s, r)
		}
	}

	// The server to stop leads the audit stream, and the approvals and bundle buckets with it,
	// before the gateways start: their watches' consumers (one server each, not replicated) are
	// placed there, and are lost with it.
	leader := cl.WaitStreamLeader(audit.DefaultStream)
	for _, s := range []string{"KV_" + approval.DefaultBucket, "OBJ_" + bundle.DefaultBucket} {
		cl.LeadOn(s, leader)
	}

	// Bundle 1 is in the bucket before the gateways start.
	v1 := clusterBundle(t, "1.0.0")
	if _, _, err := bundle.Push(ctx, adm, "", "", v1); err != nil {
		t.Fatal(err)
	}
	gws := []*gateway.Gateway{
		clusterGateway(t, "gw-a", cl.URLs(), gwCreds, apprCreds, up),
		clusterGateway(t, "gw-b", cl.URLs(), gwCreds, apprCreds, up),
	}
	for _, g := range gws {
		testenv.Eventually(t, time.Minute, g.Instance()+" on bundle 1.0.0", func() bool { return clusterVersion(g) == "1.0.0" })
	}

	// The PostgreSQL sink reads the audit stream as the sink identity.
	sink, err := auditsink.New(ctx, auditsink.Options{DSN: pg.DSN(), Conn: dial(bus.RoleSink), BatchSize: 100,
		BatchWait: 50 * time.Millisecond, AckWait: 5 * time.Second, TrustedKeys: []string{gwID.PublicKey()}})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	var swg sync.WaitGroup
	swg.Go(func() { _ = sink.Run(sctx) })
	t.Cleanup(func() { scancel(); swg.Wait(); sink.Close() })

	// A call held for approval on gw-a, before the failover.
	held := callAsync(ctx, mcpSession(t, gws[0], nil), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hold through failover"}})
	pending := waitHeld(t, gws[0], "hold through failover")

	// Load through both gateways; the audit stream's leader dies a third of the way in.
	var (
		answered sync.Map // message → true
		done     atomic.Int64
		failed   atomic.Int64
		lwg      sync.WaitGroup
	)
	for gi, g := range gws {
		for si := range clusterSessions {
			cs := mcpSession(t, g, nil)
			lwg.Go(func() {
				for ci := range clusterCalls {
					msg := fmt.Sprintf("load-%d-%d-%d", gi, si, ci)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
					done.Add(1)
					if err != nil || text(res) != "Echo: "+msg {
						failed.Add(1)
						t.Logf("%s: %s: %v %v", g.Instance(), msg, text(res), err)
						continue
					}
					answered.Store(msg, true)
				}
			})
		}
	}
	total := int64(len(gws) * clusterSessions * clusterCalls)
	testenv.Eventually(t, time.Minute, "a third of the load", func() bool { return done.Load() >= total/3 })
	if l := cl.StreamLeader(audit.DefaultStream); l != leader {
		t.Logf("the audit stream's leader moved to server %d under load; stopping that one", l+1)
		leader = cl.WaitStreamLeader(audit.DefaultStream)
	}
	killed := time.Now()
	cl.Stop(leader)
	t.Logf("stopped server %d, leader of %s, the approvals and the bundle bucket, after %d of %d calls", leader+1, audit.DefaultStream, done.Load(), total)
	newLeader := cl.WaitStreamLeader(audit.DefaultStream)
	t.Logf("server %d leads %s %v after the stop", newLeader+1, audit.DefaultStream, time.Since(killed).Round(time.Millisecond))
	lwg.Wait()
	t.Logf("load done %v after the stop", time.Since(killed).Round(time.Millisecond))
	if failed.Load() > 0 {
		t.Errorf("%d of %d calls got no answer", failed.Load(), total)
	}

	// The held call is decided after the failover by an approver and returns.
	op, err := approval.New(ctx, approval.Options{Conn: dial(bus.RoleApprover), Signer: apprID})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Decide(ctx, pending.ID, approval.Decision{Action: "allow", By: "failover-approver"}); err != nil {
		t.Fatal(err)
	}
	// The bounds below are the fixes' mechanisms, not performance: a watch that lost its consumer
	// with the leader stalls 15s or more until its heartbeats miss, and a stalled bundle read
	// used to wait out the 30s FetchTimeout; approval.Options.Recheck (1s) and the bundle source's
	// read timeout (5s for a small archive) each retry well within them.
	decided := time.Now()
	if r := wait(t, held); r.err != nil || text(r.res) != "Echo: hold through failover" {
		t.Fatalf("held call after the failover = %v %v", r.res, r.err)
	}
	if d := time.Since(decided); d > 10*time.Second {
		t.Errorf("held call returned %v after the decision: the decision waited for the watch", d)
	}
	t.Logf("held call returned %v after the decision", time.Since(decided).Round(time.Millisecond))

	// A bundle pushed after the failover, with the old leader still down, reaches both.
	if _, _, err := bundle.Push(ctx, adm, "", "", clusterBundle(t, "2.0.0")); err != nil {
		t.Fatal(err)
	}
	pushed := time.Now()
	for _, g := range gws {
		testenv.Eventually(t, time.Minute, g.Instance()+" on bundle 2.0.0", func() bool { return clusterVersion(g) == "2.0.0" })
	}
	if d := time.Since(pushed); d > 20*time.Second {
		t.Errorf("bundle 2.0.0 reached both gateways %v after the push: a stalled read waited out FetchTimeout", d)
	}
	t.Logf("bundle 2.0.0 on both gateways %v after the push", time.Since(pushed).Round(time.Millisecond))
	cl.Restart(leader)

	// Exactly once in PostgreSQL: one verified decision row per answered call.
	for _, g := range gws {
		if err := g.Audit().Flush(ctx); err != nil {
			t.Fatalf("%s audit flush: %v", g.Instance(), err)
		}
	}
	want := 0
	answered.Range(func(any, any) bool { want++; return true })
	db, err := pgxpool.New(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, distinct, verified int
	flushed := time.Now()
	deadline := time.Now().Add(time.Minute)
	for {
		err := db.QueryRow(ctx, `SELECT count(*), count(DISTINCT event->'arguments'->>'message'), count(*) FILTER (WHERE verified)
			FROM audit_events WHERE kind = 'decision' AND event->'arguments'->>'message' LIKE 'load-%'`).Scan(&rows, &distinct, &verified)
		if err != nil {
			t.Fatal(err)
		}
		if rows >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("PostgreSQL caught up %v after the flush", time.Since(flushed).Round(time.Millisecond))
	if rows != want || distinct != want || verified != want {
		var pubs []audit.Stats
		for _, g := range gws {
			pubs = append(pubs, g.Audit().Stats())
		}
		si, _ := js.Stream(ctx, audit.DefaultStream)
		t.Errorf("PostgreSQL holds %d load decisions (%d distinct calls, %d verified), want %d of each; sink %+v; publishers %+v; stream %+v",
			rows, distinct, verified, want, sink.Stats(), pubs, si.CachedInfo().State)
	}
	var stray int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE kind = 'decision' AND event->'arguments'->>'message' LIKE 'load-%'
		AND NOT (event->'arguments'->>'message' = ANY($1))`, answeredList(&answered)).Scan(&stray); err != nil || stray != 0 {
		t.Errorf("decision rows for calls that got no answer: %d, %v", stray, err)
	}
	st := sink.Stats()
	var pubs []audit.Stats
	for _, g := range gws {
		pubs = append(pubs, g.Audit().Stats())
	}
	t.Logf("%d calls answered; sink %+v; publishers %+v; test ran %v", want, st, pubs, time.Since(started).Round(time.Millisecond))
}

func answeredList(m *sync.Map) []string {
	var out []string
	m.Range(func(k, _ any) bool { out = append(out, k.(string)); return true })
	return out
}

// clusterBundle is the approvals test bundle (echo of "hold..." is held for a person) at version.
func clusterBundle(t *testing.T, version string) string {
	t.Helper()
	dir := approvalsBundle(t)
	p := filepath.Join(dir, "bundle.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "version: 1.0.0", "version: "+version, 1)
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// clusterGateway runs a gateway on the cluster at urls with the gateway and approver keys,
// following the bundle bucket.
func clusterGateway(t *testing.T, name, urls, creds, approverCreds, upstream string) *gateway.Gateway {
	t.Helper()
	y := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
bundle: nats://PALISADE_BUNDLES
upstreams: [{name: up, url: %q}]
nats: {url: %q, creds: %q, approver_creds: %q}
admin: {token: %s}
audit: {arguments: full}
approvals:
  timeout: 2m
bundles:
  allow_unsigned: true
  resync: 1s
  wait: 30s
`, t.TempDir(), upstream, urls, creds, approverCreds, approvalsToken)
	cfg, err := gateway.ParseFile([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins.CacheDir = testenv.CacheDir()
	g, err := gateway.New(t.Context(), gateway.Options{Config: cfg.Config, Sections: cfg.Sections, Instance: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

// clusterVersion is the version of the bundle g serves ("" = none).
func clusterVersion(g *gateway.Gateway) string {
	if ch := g.Active().Load(); ch != nil {
		return ch.Info().Version
	}
	return ""
}

// TestSetupNATSReplicas: on a three-server cluster, SetupNATS without Replicas creates the audit
// stream and the three buckets with one copy; Replicas 3 resizes all four; a later run without
// Replicas leaves them at three (a gateway's own set-up never shrinks them).
func TestSetupNATSReplicas(t *testing.T) {
	c := testenv.StartCluster(t, 3)
	id, err := bus.LoadIdentity(c.DataDir(), bus.RoleAdmin, "")
	if err != nil {
		t.Fatal(err)
	}
	gwID, err := bus.LoadIdentity(c.DataDir(), bus.RoleGateway, "")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := bus.Dial(c.URLs(), id, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for _, tc := range []struct {
		name     string
		replicas int
		want     int
	}{
		{"create", 0, 1},
		{"resize to 3", 3, 3},
		{"again without replicas", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Setup is idempotent: on a loaded machine a JetStream API call can time out while
			// the cluster's meta leader settles, so it is tried again, as an operator would.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			var err error
			for {
				actx, acancel := context.WithTimeout(ctx, 30*time.Second)
				err = gateway.SetupNATS(actx, nc, gateway.NATSSetup{Replicas: tc.replicas, Signers: []audit.Signer{gwID}})
				acancel()
				if err == nil || ctx.Err() != nil {
					break
				}
				t.Logf("setup: %v; again", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{audit.DefaultStream, "KV_" + audit.DefaultSignersBucket, "KV_" + approval.DefaultBucket, "OBJ_" + bundle.DefaultBucket} {
				st, err := js.Stream(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				if r := st.CachedInfo().Config.Replicas; r != tc.want {
					t.Errorf("stream %s has %d replicas, want %d", s, r, tc.want)
				}
			}
		})
	}
	if err := gateway.SetupNATS(t.Context(), nc, gateway.NATSSetup{Replicas: -1}); err == nil {
		t.Error("SetupNATS took replicas -1")
	}
}
