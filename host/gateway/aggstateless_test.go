package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessMeta is the _meta a 2026-07-28 request carries in place of a session.
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// statelessPost posts one stateless request to url and returns the response (the caller reads
// and closes it).
func statelessPost(t *testing.T, ctx context.Context, url, method, params string) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":{%s%s}}`, method, statelessMeta, params)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(pmcp.HeaderProtocolVersion, pmcp.Stateless)
	req.Header.Set(pmcp.HeaderMethod, method)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// sseMessages reads the data of each SSE event of r into the returned channel.
func sseMessages(r *bufio.Reader) <-chan map[string]any {
	ch := make(chan map[string]any, 16)
	go func() {
		defer close(ch)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:"); ok {
				var m map[string]any
				if json.Unmarshal([]byte(strings.TrimSpace(data)), &m) == nil {
					ch <- m
				}
			}
		}
	}()
	return ch
}

// statelessGateway starts a gateway with the example bundle over ups, with a 1 s
// limits.upstream_idle_timeout, and returns its /mcp URL.
func statelessGateway(t *testing.T, natsURL string, ups ...config.Upstream) string {
	t.Helper()
	cfg := config.Config{
		Listen:    "127.0.0.1:0",
		DataDir:   t.TempDir(),
		Bundle:    testenv.ExampleBundle(t),
		Upstreams: ups,
		NATS:      config.NATS{URL: natsURL},
		Limits: config.Limits{BodyBytes: 64 << 10, UpstreamTimeout: config.Duration(10 * time.Second),
			UpstreamIdleTimeout: config.Duration(time.Second)},
		Plugins: config.Plugins{CacheDir: testenv.CacheDir()},
	}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return "http://" + g.Addr() + "/mcp"
}

type discoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      map[string]json.RawMessage `json:"capabilities"`
	Instructions      string                     `json:"instructions"`
	Meta              map[string]json.RawMessage `json:"_meta"`
}

// discover sends server/discover as a raw stateless client does.
func discover(t *testing.T, ctx context.Context, url string) discoverResult {
	t.Helper()
	resp := statelessPost(t, ctx, url, "server/discover", "")
	defer resp.Body.Close()
	var disc struct {
		Result discoverResult `json:"result"`
		Error  *pmcp.Error    `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&disc); err != nil || disc.Error != nil {
		t.Fatalf("server/discover: %v %+v", err, disc.Error)
	}
	return disc.Result
}

// TestAggregateStateless: a client of the sessionless protocol (2026-07-28) on the aggregate /mcp
// discovers the gateway with server/discover (answered by the gateway: versions, merged
// capabilities, each server's instructions, the servers that did not answer), lists and calls
// tools of every server without a session (the Go SDK client negotiates it), and keeps one
// subscriptions/listen stream on which an upstream's tools/list_changed arrives, past the
// upstream idle limit that ends ordinary answer streams, and only the gateway's own
// acknowledgement.
func TestAggregateStateless(t *testing.T) {
	ns := testenv.StartNATS(t)
	live := mcp.NewServer(&mcp.Implementation{Name: "live", Version: "1"}, &mcp.ServerOptions{Instructions: "Tools come and go here."})
	mcp.AddTool(live, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "live: " + in.Message}}}, nil, nil
	})
	url := statelessGateway(t, ns.ClientURL(),
		config.Upstream{Name: "go", URL: testenv.StartGoServer(t, true)},
		config.Upstream{Name: "live", URL: testenv.ServeGo(t, live, true)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// server/discover, as a raw client sends it.
	r := discover(t, ctx, url)
	if !slices.Contains(r.SupportedVersions, pmcp.Stateless) || !slices.Contains(r.SupportedVersions, "2025-11-25") || r.Capabilities["tools"] == nil {
		t.Fatalf("discover: versions %v capabilities %s", r.SupportedVersions, r.Capabilities)
	}
	if !strings.Contains(r.Instructions, "live: Tools come and go here.") {
		t.Fatalf("discover instructions %q lack the live server's", r.Instructions)
	}
	if r.Meta["palisade/unavailable"] != nil || !strings.Contains(string(r.Meta["io.modelcontextprotocol/serverInfo"]), `"palisade"`) {
		t.Fatalf("discover _meta: %s", r.Meta)
	}

	// The Go SDK client negotiates the stateless protocol through discover.
	cs := connect(t, url, nil)
	if info := cs.InitializeResult(); info.ProtocolVersion != pmcp.Stateless || info.ServerInfo == nil || info.ServerInfo.Name != "palisade" {
		t.Fatalf("negotiated %+v", info)
	}
	names := toolNames(t, cs)
	for _, want := range []string{"go__echo", "live__echo"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "live__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || text(res) != "live: hi" {
		t.Fatalf("live__echo: %v %q", err, text(res))
	}

	// One listen stream over every upstream.
	lresp := statelessPost(t, ctx, url, "subscriptions/listen", `,"notifications":{"toolsListChanged":true}`)
	defer lresp.Body.Close()
	if ct := lresp.Header.Get("Content-Type"); lresp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("listen: %d %s", lresp.StatusCode, ct)
	}
	msgs := sseMessages(bufio.NewReader(lresp.Body))
	next := func() map[string]any {
		t.Helper()
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the listen stream ended")
			}
			return m
		case <-time.After(15 * time.Second):
			t.Fatal("nothing on the listen stream")
		}
		return nil
	}
	if m := next(); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first listen message %v, want the acknowledgement", m)
	}
	time.Sleep(1500 * time.Millisecond) // past limits.upstream_idle_timeout: the stream stays
	mcp.AddTool(live, &mcp.Tool{Name: "fresh", Description: "a new tool"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fresh"}}}, nil, nil
	})
	if m := next(); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("listen message %v, want tools/list_changed (and one acknowledgement only)", m)
	}
	if names := toolNames(t, cs); !slices.Contains(names, "live__fresh") {
		t.Fatalf("tools/list after list_changed lacks live__fresh: %v", names)
	}
}

// TestAggregateStatelessOnlyWhenEveryServerIs: a stateless client has no session for the
// gateway to open upstream sessions with, so when one upstream speaks only the session era (or
// is down), discover does not offer 2026-07-28, names the server that did not answer, and the
// Go SDK client initializes instead and sees the tools of every server that is up.
func TestAggregateStatelessOnlyWhenEveryServerIs(t *testing.T) {
	ns := testenv.StartNATS(t)
	url := statelessGateway(t, ns.ClientURL(),
		config.Upstream{Name: "new", URL: testenv.StartGoServer(t, true)},
		config.Upstream{Name: "old", URL: testenv.StartGoServer(t, false)},
		config.Upstream{Name: "down", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", testenv.FreePort(t))})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := discover(t, ctx, url)
	if slices.Contains(r.SupportedVersions, pmcp.Stateless) || !slices.Contains(r.SupportedVersions, "2025-11-25") {
		t.Fatalf("discover offers %v over a session-era upstream", r.SupportedVersions)
	}
	if u := string(r.Meta["palisade/unavailable"]); !strings.Contains(u, `"down"`) {
		t.Fatalf("discover's unavailable upstreams: %s", u)
	}
	cs := connect(t, url, nil)
	if v := cs.InitializeResult().ProtocolVersion; v >= pmcp.Stateless {
		t.Fatalf("negotiated %s", v)
	}
	names := toolNames(t, cs)
	for _, want := range []string{"new__echo", "old__echo"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
}
