package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// swapBundle writes and signs a two-stage rules bundle; each stage's one rule is named
// "<name>-<n>" so a decision that mixed bundles would show it. Stages get a 10s timeout: CI
// machines run many tests on two cores (load average 16 seen here), and a starved verdict
// failing closed would be a latency finding, not a swap one.
func swapBundle(t testing.TB, priv string, name, version, act1, act2 string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	wasm, _ := testenv.ReadPlugin(t, "./plugins/rules")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	var y strings.Builder
	fmt.Fprintf(&y, "name: %s\nversion: %q\ncoverage: {uncovered: pass}\nstages:\n", name, version)
	for i, a := range []string{act1, act2} {
		fmt.Fprintf(&y, "  - name: s%d\n    plugin: rules.wasm\n    pool: 4\n    timeout: 10s\n    config: {rules: [{id: %s-%d, action: %s, reason: %s}]}\n", i+1, name, i+1, a, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatal(err)
	}
	k, _ := bundle.ParsePrivateKey(priv)
	if _, err := bundle.Sign(dir, k); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSwapThroughGateway: MCP clients call a tool through the gateway without pause while the
// active bundle swaps 100 times between one that allows (alpha) and one that denies (beta). No
// call fails or is dropped, each answer is wholly alpha's (the upstream's result) or beta's
// (a -32001 naming beta's rule), and each audit event names the bundle whose rules decided.
func TestSwapThroughGateway(t *testing.T) {
	swaps := 100
	if testing.Short() || bundlesRace {
		swaps = 30 // make test-bundles runs the 100 swaps without -race
	}
	pub, priv, _ := bundle.GenerateKey()
	privText := bundle.EncodePrivateKey(priv)
	alpha := swapBundle(t, privText, "alpha", "1", "allow", "allow")
	beta := swapBundle(t, privText, "beta", "2", "allow", "deny")

	ns := testenv.StartNATS(t)
	ext, err := gateway.ParseFile([]byte("bundles:\n  trusted_keys: ['" + bundle.EncodePublicKey(pub) + "']\n  watch: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Bundle: alpha,
		Upstreams: []config.Upstream{{Name: "files", URL: testenv.StartGoServer(t, false)}},
		NATS:      config.NATS{URL: ns.ClientURL()},
		Plugins:   config.Plugins{CacheDir: filepath.Join(os.TempDir(), "palisade-test-wazero-cache")}, // shared with host/bundle's tests
	}
	ctx := context.Background()
	g, err := gateway.New(ctx, gateway.Options{Config: cfg, Sections: ext.Sections})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	m := gateway.BundleManager(g)
	if cur, ok := m.Current(); !ok || cur.Name != "alpha" || cur.KeyID != bundle.KeyID(pub) {
		t.Fatalf("first bundle %+v", cur)
	}

	var (
		stop          atomic.Bool
		calls, allows atomic.Int64
		denies        atomic.Int64
		wg            sync.WaitGroup
		errMu         sync.Mutex
		errs          []string
	)
	fail := func(format string, a ...any) {
		errMu.Lock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, a...))
		}
		errMu.Unlock()
	}
	for w := range 4 {
		c := mcp.NewClient(&mcp.Implementation{Name: "swap-client", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + g.Addr() + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				msg := fmt.Sprintf("w%d-%d", w, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
				calls.Add(1)
				var we *jsonrpc.Error
				switch {
				case err == nil:
					if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "Echo: "+msg {
						fail("allowed call answered %+v", res)
					}
					allows.Add(1)
				case errors.As(err, &we) && we.Code == pmcp.CodeDenied:
					var d pmcp.DenyData
					_ = json.Unmarshal(we.Data, &d)
					if d.Rule != "beta-2" || d.AuditID == "" {
						fail("deny from %+v", d)
					}
					denies.Add(1)
				default:
					fail("call failed: %v", err)
				}
			}
		})
	}
	for i := range swaps {
		dir := beta
		if i%2 == 1 {
			dir = alpha
		}
		if _, changed, err := m.Activate(ctx, dir, "test"); err != nil || !changed {
			t.Fatalf("swap %d: changed=%v %v", i, changed, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d calls during %d swaps: %d allowed, %d denied, %d problems", calls.Load(), swaps, allows.Load(), denies.Load(), len(errs))
	for _, e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		t.FailNow()
	}
	if allows.Load() == 0 || denies.Load() == 0 {
		t.Fatalf("allows %d, denies %d: both bundles must have decided calls", allows.Load(), denies.Load())
	}

	// Audit: one decision event per call, naming the bundle whose rules decided it.
	evs := echoEvents(t, ns.ClientURL(), int(calls.Load()))
	if len(evs) != int(calls.Load()) {
		t.Fatalf("%d echo decision events for %d calls", len(evs), calls.Load())
	}
	for _, ev := range evs {
		want := map[string]string{"alpha": "allow", "beta": "deny"}[ev.Bundle.Name]
		if ev.Action != want || len(ev.Stages) == 0 {
			t.Fatalf("event %s: bundle %s action %s", ev.ID, ev.Bundle.Name, ev.Action)
		}
		for _, s := range ev.Stages {
			if !strings.HasPrefix(s.Rule, ev.Bundle.Name+"-") {
				t.Fatalf("event %s names bundle %s but stage %s rule %s decided", ev.ID, ev.Bundle.Name, s.Stage, s.Rule)
			}
		}
	}
	t.Logf("%d swaps under load: %d calls (%d allowed by alpha, %d denied by beta), 0 failed; %d audit events all consistent",
		swaps, calls.Load(), allows.Load(), denies.Load(), len(evs))
}

// echoEvents reads the decision events for the echo tool from the audit stream, polling until
// want have arrived or a deadline passes.
func echoEvents(t *testing.T, natsURL string, want int) []audit.Event {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var out []audit.Event
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cons, err := js.OrderedConsumer(ctx, audit.DefaultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"palisade.audit.decision.*.*.echo"}})
		if err == nil {
			for {
				batch, err := cons.FetchNoWait(1000)
				if err != nil {
					break
				}
				got := 0
				for msg := range batch.Messages() {
					var ev audit.Event
					if json.Unmarshal(msg.Data(), &ev) == nil {
						out = append(out, ev)
					}
					got++
				}
				if got == 0 {
					break
				}
			}
		}
		cancel()
		if len(out) >= want || time.Now().After(deadline) {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
}
