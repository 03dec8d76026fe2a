package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startAggregate runs a gateway in front of ups with aggregate.names set to names.
func startAggregate(t *testing.T, natsURL, bundleDir, names string, ups ...config.Upstream) *gateway.Gateway {
	t.Helper()
	cfg := config.Config{
		Listen:    "127.0.0.1:0",
		DataDir:   t.TempDir(),
		Bundle:    bundleDir,
		Upstreams: ups,
		Aggregate: config.Aggregate{Names: names},
		NATS:      config.NATS{URL: natsURL},
		Limits:    config.Limits{BodyBytes: 64 << 10, UpstreamTimeout: config.Duration(10 * time.Second)},
		Plugins:   config.Plugins{CacheDir: testenv.CacheDir()},
	}
	ext, err := gateway.ParseFile([]byte("llm: {providers: [{name: local, kind: local}], preference: [local]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: ext.Sections})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	r, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// One client session on /mcp lists and calls the tools of server-everything (npm, HTTP) and a Go
// SDK server through one gateway with the example bundle; policy applies per server (a tool it
// always denies is not advertised, and denied when called anyway), and the audit events name
// the server and the tool as that server knows it.
func TestAggregateEndpoint(t *testing.T) {
	ns := testenv.StartNATS(t)
	everything := testenv.StartEverything(t)
	goURL := testenv.StartGoServer(t, false)
	g := startAggregate(t, ns.ClientURL(), testenv.ExampleBundle(t), "",
		config.Upstream{Name: "everything", URL: everything}, config.Upstream{Name: "go", URL: goURL})
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()

	if info := cs.InitializeResult(); info.ServerInfo.Name != "palisade" || info.ServerInfo.Version == "" || info.Capabilities.Tools == nil {
		t.Fatalf("initialize answered by %+v, capabilities %+v", info.ServerInfo, info.Capabilities)
	}
	names := toolNames(t, cs)
	for _, want := range []string{"everything__echo", "go__echo", "go__progress"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	// get-env is denied on every server for everyone (deny-get-env): not advertised.
	for _, hidden := range []string{"everything__get-env", "go__get-env"} {
		if slices.Contains(names, hidden) {
			t.Fatalf("tools/list advertises %s, which the policy always denies: %v", hidden, names)
		}
	}
	for _, tc := range []struct{ tool, want string }{
		{"go__echo", "Echo: hello palisade"},
		{"everything__echo", "hello palisade"},
	} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"message": strings.TrimPrefix(tc.want, "Echo: ")}})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if !strings.Contains(text(r), tc.want) {
			t.Fatalf("%s: %q", tc.tool, text(r))
		}
	}
	for _, tool := range []string{"go__get-env", "everything__get-env"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"name": "HOME"}})
		if d := denied(t, err); d.Rule != "deny-get-env" {
			t.Fatalf("%s: deny data %+v", tool, d)
		}
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nowhere__echo", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "names no upstream") {
		t.Fatalf("a name without a server: %v", err)
	}
	// A prompt and a resource of server-everything, routed by name and by URI.
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 || !strings.HasPrefix(prompts.Prompts[0].Name, "everything__") {
		t.Fatalf("prompts/list: %v %+v", err, prompts)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__simple-prompt"}); err != nil && !strings.Contains(err.Error(), "argument") {
		t.Fatalf("prompts/get: %v", err)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI}); err != nil || len(r.Contents) == 0 {
		t.Fatalf("resources/read %s: %v", res.Resources[0].URI, err)
	}

	evs := events(t, ns.ClientURL(), 4)
	seen := map[string]string{}
	for _, ev := range evs {
		seen[ev.Server+" "+ev.Tool] = ev.Action
	}
	for k, want := range map[string]string{"go echo": "allow", "everything echo": "allow", "go get-env": "deny", "everything get-env": "deny"} {
		if seen[k] != want {
			t.Errorf("audit %q: %q, want %q (all: %v)", k, seen[k], want, seen)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close (DELETE): %v", err)
	}
}

// A rule keyed on the server applies on /mcp to that server's tool only.
func TestAggregatePolicyPerServer(t *testing.T) {
	ns := testenv.StartNATS(t)
	orig, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "examples", "bundle", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules := append(orig, []byte(`
  - id: deny-echo-on-b
    priority: 10
    action: deny
    reason: echo on b is off limits
    when: {tool: [echo], server: [b]}
`)...)
	files := testenv.ExampleModels(t)
	files["rules.yaml"] = rules
	dir := testenv.StageBundleWith(t, "examples/bundle", testenv.ExamplePlugins(), files)
	g := startAggregate(t, ns.ClientURL(), dir, "prefix",
		config.Upstream{Name: "a", URL: testenv.StartGoServer(t, false)}, config.Upstream{Name: "b", URL: testenv.StartGoServer(t, false)})
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "x"}}); err != nil || text(r) != "Echo: x" {
		t.Fatalf("a__echo: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__echo", Arguments: map[string]any{"message": "x"}})
	if d := denied(t, err); d.Rule != "deny-echo-on-b" {
		t.Fatalf("b__echo: %+v", d)
	}
}

// With aggregate.names: refuse, names are the servers' own, and a name two servers offer fails
// the list, naming both servers.
func TestAggregateNameCollision(t *testing.T) {
	ns := testenv.StartNATS(t)
	bundle := testenv.ExampleBundle(t)
	t.Run("refuse", func(t *testing.T) {
		g := startAggregate(t, ns.ClientURL(), bundle, "refuse",
			config.Upstream{Name: "one", URL: testenv.StartGoServer(t, false)}, config.Upstream{Name: "two", URL: testenv.StartGoServer(t, false)})
		cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
		_, err := cs.ListTools(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), `"one"`) || !strings.Contains(err.Error(), `"two"`) || !strings.Contains(err.Error(), `"echo"`) {
			t.Fatalf("tools/list with a shared name: %v", err)
		}
		_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}})
		if err == nil || !strings.Contains(err.Error(), "both") {
			t.Fatalf("a call to a shared name: %v", err)
		}
	})
	t.Run("refuse without a collision", func(t *testing.T) {
		other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
		mcp.AddTool(other, &mcp.Tool{Name: "shout"}, func(_ context.Context, _ *mcp.CallToolRequest, in testenv.EchoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Message)}}}, nil, nil
		})
		g := startAggregate(t, ns.ClientURL(), bundle, "refuse",
			config.Upstream{Name: "go", URL: testenv.StartGoServer(t, false)}, config.Upstream{Name: "other", URL: testenv.ServeGo(t, other, false)})
		cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
		if names := toolNames(t, cs); !slices.Contains(names, "echo") || !slices.Contains(names, "shout") {
			t.Fatalf("tools: %v", names)
		}
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"message": "hi"}})
		if err != nil || text(r) != "HI" {
			t.Fatalf("shout: %v", err)
		}
	})
	t.Run("prefix", func(t *testing.T) {
		g := startAggregate(t, ns.ClientURL(), bundle, "prefix",
			config.Upstream{Name: "one", URL: testenv.StartGoServer(t, false)}, config.Upstream{Name: "two", URL: testenv.StartGoServer(t, false)})
		cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
		if names := toolNames(t, cs); !slices.Contains(names, "one__echo") || !slices.Contains(names, "two__echo") {
			t.Fatalf("tools: %v", names)
		}
	})
}

// Killing one upstream mid-session: the other keeps serving on the same session, the dead one's
// tools leave the list, and /readyz names it (200: one upstream still serves).
func TestAggregateUpstreamDies(t *testing.T) {
	ns := testenv.StartNATS(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testenv.NewGoServer() }, nil)
	dying := httptest.NewServer(h)
	t.Cleanup(dying.Close)
	g := startAggregate(t, ns.ClientURL(), testenv.ExampleBundle(t), "",
		config.Upstream{Name: "live", URL: testenv.StartGoServer(t, false)}, config.Upstream{Name: "dying", URL: dying.URL + "/mcp"})
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()
	if names := toolNames(t, cs); !slices.Contains(names, "dying__echo") {
		t.Fatalf("tools before: %v", names)
	}
	dying.CloseClientConnections()
	dying.Close()

	names := toolNames(t, cs)
	if slices.Contains(names, "dying__echo") || !slices.Contains(names, "live__echo") {
		t.Fatalf("tools after the kill: %v", names)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "live__echo", Arguments: map[string]any{"message": "still"}}); err != nil || text(r) != "Echo: still" {
		t.Fatalf("live__echo after the kill: %v", err)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dying__echo", Arguments: map[string]any{"message": "x"}})
	if err == nil {
		t.Fatal("a call to the dead upstream succeeded")
	}
	resp, err := http.Get("http://" + g.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Status    string   `json:"status"`
		Down      []string `json:"upstreams_down"`
		Upstreams map[string]struct {
			Status string `json:"status"`
		} `json:"upstreams"`
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !slices.Equal(st.Down, []string{"dying"}) || st.Upstreams["live"].Status != "up" || st.Upstreams["dying"].Status != "down" {
		t.Fatalf("/readyz %d %+v", resp.StatusCode, st)
	}
}

// An upstream that is down when the client connects, and comes up later: the probe sees it
// back, the client's session opens one on it, and the client is told its lists changed
// (notifications/tools/list_changed on its GET stream); its next tools/list has the newcomer's
// tools and they answer. No reconnect.
func TestAggregateUpstreamComesBack(t *testing.T) {
	ns := testenv.StartNATS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	g := startAggregate(t, ns.ClientURL(), testenv.ExampleBundle(t), "",
		config.Upstream{Name: "live", URL: testenv.StartGoServer(t, false)}, config.Upstream{Name: "late", URL: "http://" + addr + "/mcp"})
	changed := make(chan struct{}, 4)
	cs := connect(t, "http://"+g.Addr()+"/mcp", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if names := toolNames(t, cs); slices.Contains(names, "late__echo") || !slices.Contains(names, "live__echo") {
		t.Fatalf("tools while late is down: %v", names)
	}

	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testenv.NewGoServer() }, nil)
	late := &http.Server{Handler: h}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	go late.Serve(ln)
	t.Cleanup(func() { late.Close() })

	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed after the upstream came back")
	}
	if names := toolNames(t, cs); !slices.Contains(names, "late__echo") {
		t.Fatalf("tools after late came back: %v", names)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "late__echo", Arguments: map[string]any{"message": "back"}})
	if err != nil || text(r) != "Echo: back" {
		t.Fatalf("late__echo: %v %v", err, r)
	}
}
