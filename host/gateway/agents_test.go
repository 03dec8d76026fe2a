package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/host/selfmcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
)

// agentsBundle writes the agents test bundle (host/proxy/testdata/agents).
func agentsBundle(t *testing.T) string {
	t.Helper()
	return testenv.AgentsBundle(t, nil)
}

func hookInput(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../proxy/testdata/agents/hook", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGatewayServesHook(t *testing.T) {
	ns := testenv.StartNATS(t)
	g := startGateway(t, ns.ClientURL(), agentsBundle(t), config.Upstream{Name: "none", URL: "http://127.0.0.1:1/mcp"}) // never called
	if g.Pinner() == nil {
		t.Error("the agents feature did not pin tools")
	}
	out, err := proxy.HookClient{URL: "http://" + g.Addr()}.Decide(context.Background(), hookInput(t, "bash_rm_rf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := out.HookSpecificOutput; d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "no-rm-rf-root") {
		t.Fatalf("gateway hook decision %+v", d)
	}
}

// collect subscribes to every audit subject.
func collect(t *testing.T, url string) func() []audit.Event {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	var evs []audit.Event
	if _, err := nc.Subscribe(audit.SubjectPrefix+".>", func(m *nats.Msg) {
		var ev audit.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			mu.Lock()
			evs = append(evs, ev)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() []audit.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]audit.Event(nil), evs...)
	}
}

func TestLocalSpoolsWhileNATSIsDownAndReplaysLater(t *testing.T) {
	ctx := context.Background()
	data, b := t.TempDir(), agentsBundle(t)
	in, err := engine.ParseHookInput(hookInput(t, "read_ssh_key.json"))
	if err != nil {
		t.Fatal(err)
	}
	// NATS unreachable: the event is spooled in this process's own directory.
	down := config.Config{Bundle: b, DataDir: data, NATS: config.NATS{URL: "nats://127.0.0.1:1"}, Plugins: config.Plugins{CacheDir: testenv.CacheDir()}}
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: down, Name: "hook"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Engine.Hook(ctx, in)
	if err != nil || out.HookSpecificOutput.PermissionDecision != "deny" {
		t.Fatalf("hook: %+v %v", out, err)
	}
	l.Close(ctx)
	left, _ := filepath.Glob(filepath.Join(data, "spool-local", "hook-*"))
	if len(left) != 1 {
		t.Fatalf("%d spool directories left, want 1", len(left))
	}
	// The next run with NATS up publishes what was left, and removes the directory.
	ns := testenv.StartNATS(t)
	events := collect(t, ns.ClientURL())
	up := down
	up.NATS.URL = ns.ClientURL()
	l2, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: up, Name: "hook"})
	if err != nil {
		t.Fatal(err)
	}
	l2.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		for _, ev := range events() {
			if ev.Transport == "hook" && ev.Tool == "Read" && ev.Action == "deny" && ev.Rule == "no-ssh-keys" {
				n++
				// No bus identity in the data dir: the event says it is unsigned.
				if !strings.Contains(string(ev.Detail), `"unsigned"`) {
					t.Fatalf("an event recorded without an identity does not say it is unsigned: %s", ev.Detail)
				}
			}
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replayed hook event not on NATS (%d matching of %d)", n, len(events()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "spool-local", "*")); len(left) != 0 {
		t.Errorf("spool directories left after replay: %v", left)
	}
}

func TestLocalWatchBundleSwapsOnChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := agentsBundle(t)
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: config.Config{Bundle: b, DataDir: t.TempDir(), Plugins: config.Plugins{CacheDir: testenv.CacheDir()}}, NoAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	in, err := engine.ParseHookInput(hookInput(t, "edit_benign.json"))
	if err != nil {
		t.Fatal(err)
	}
	decide := func() string {
		out, err := l.Engine.Hook(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out.HookSpecificOutput.PermissionDecision
	}
	if d := decide(); d != "allow" {
		t.Fatalf("before: %s", d)
	}
	go l.WatchBundle(ctx, 10*time.Millisecond)
	rules, _ := os.ReadFile(filepath.Join(b, "rules.yaml"))
	rules = []byte(strings.Replace(string(rules), "id: edits\n    priority: 50\n    action: allow", "id: edits\n    priority: 50\n    action: deny", 1))
	if err := os.WriteFile(filepath.Join(b, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the changed bundle to take effect", func() bool { return decide() == "deny" })
	// A broken bundle is refused and the last good one keeps serving.
	if err := os.WriteFile(filepath.Join(b, "bundle.yaml"), []byte("name: [broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := l.Active.Load()
	time.Sleep(100 * time.Millisecond) // several watch periods; the assertion is on state, not time
	if l.Active.Load() != first || decide() != "deny" {
		t.Error("a broken bundle replaced the working one")
	}
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestGatewayServesOwnMCPAndGuardsHook(t *testing.T) {
	ns := testenv.StartNATS(t)
	cfg, err := gateway.ParseFile([]byte("agents:\n  mcp_token: mcp-tok\n  hook_token: hook-tok\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen, cfg.DataDir, cfg.Bundle = "127.0.0.1:0", t.TempDir(), agentsBundle(t)
	cfg.Plugins.CacheDir = testenv.CacheDir()
	cfg.NATS = config.NATS{URL: ns.ClientURL()}
	cfg.Upstreams = []config.Upstream{{Name: "none", URL: "http://127.0.0.1:1/mcp"}} // never called
	cfg.Admin.Token = approvalsToken
	ctx := context.Background()
	g, err := gateway.New(ctx, gateway.Options{Config: cfg.Config, Sections: cfg.Sections})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	base := "http://" + g.Addr()

	raw := hookInput(t, "edit_benign.json")
	if out, err := (proxy.HookClient{URL: base}).Decide(ctx, raw); err != nil || out.Decision() != "deny" {
		t.Errorf("hook without its token: %+v %v, want a deny", out, err)
	}
	if out, err := (proxy.HookClient{URL: base, Token: "hook-tok"}).Decide(ctx, raw); err != nil || out.HookSpecificOutput.PermissionDecision != "allow" {
		t.Errorf("hook with its token: %+v %v", out, err)
	}

	connect := func(tok string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: base + gateway.SelfMCPPath, HTTPClient: &http.Client{Transport: bearerRT{tok}}, MaxRetries: -1}
		return mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	if cs, err := connect("wrong"); err == nil {
		cs.Close()
		t.Fatal("own MCP server accepted a wrong token")
	}
	cs, err := connect("mcp-tok")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getPolicy", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.StructuredContent)
	if !strings.Contains(string(b), `"agents-test"`) || !strings.Contains(string(b), "no-rm-rf-root") {
		t.Errorf("getPolicy through the gateway: %s", b)
	}
	// One ring of recent events: the hook's decision is in the dashboard's /decisions and in the
	// own MCP server's audit://recent, with the same id.
	ev := waitEvent(t, g, "hook decision", func(ev audit.Event) bool { return ev.Transport == "hook" && ev.Action == "allow" })
	testenv.Eventually(t, 20*time.Second, "the hook decision in audit://recent", func() bool {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: selfmcp.ResourceRecent})
		if err != nil {
			t.Fatal(err)
		}
		var evs []audit.Event
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &evs); err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.ID == ev.ID {
				return true
			}
		}
		return false
	})
	if g.Recent() == nil || len(g.Recent().Recent(0)) == 0 {
		t.Error("Gateway.Recent holds no events")
	}
}
