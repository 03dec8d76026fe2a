package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startGateway runs a gateway with the given bundle in front of upstreams, on a random port,
// auditing to the NATS server at natsURL.
func startGateway(t *testing.T, natsURL, bundleDir string, ups ...config.Upstream) *gateway.Gateway {
	return startGatewayTB(t, natsURL, bundleDir, ups...)
}

func startGatewayTB(t testing.TB, natsURL, bundleDir string, ups ...config.Upstream) *gateway.Gateway {
	t.Helper()
	return startGatewayExt(t, natsURL, bundleDir, "", ups...)
}

// startGatewayExt is startGateway with extra config sections (YAML, such as
// "approvals: {disabled: true}") beside the local LLM provider.
func startGatewayExt(t testing.TB, natsURL, bundleDir, extra string, ups ...config.Upstream) *gateway.Gateway {
	t.Helper()
	cfg := config.Config{
		Listen:    "127.0.0.1:0",
		DataDir:   t.TempDir(),
		Bundle:    bundleDir,
		Upstreams: ups,
		NATS:      config.NATS{URL: natsURL},
		Limits:    config.Limits{BodyBytes: 64 << 10, UpstreamTimeout: config.Duration(10 * time.Second)},
		Plugins:   config.Plugins{CacheDir: testenv.CacheDir()},
	}
	ext, err := gateway.ParseFile([]byte("llm: {providers: [{name: local, kind: local}], preference: [local]}\n" + extra))
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

func connect(t *testing.T, endpoint string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "palisade-test-client", Version: "1.0.0"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// deniedCode returns the JSON-RPC code and data of a CallTool error.
func denied(t *testing.T, err error) pmcp.DenyData {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	if we.Code != pmcp.CodeDenied {
		t.Fatalf("code %d (%s), want %d", we.Code, we.Message, pmcp.CodeDenied)
	}
	var d pmcp.DenyData
	if err := json.Unmarshal(we.Data, &d); err != nil {
		t.Fatalf("deny data %s: %v", we.Data, err)
	}
	return d
}

// events reads every audit event stored so far whose kind is decision.
func events(t *testing.T, natsURL string, want int) []audit.Event {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out []audit.Event
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := js.Stream(ctx, "PALISADE_AUDIT")
		if err == nil {
			cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"palisade.audit.decision.>"}})
			if err == nil {
				info, _ := s.Info(ctx)
				n := int(info.State.Msgs)
				for n > 0 {
					batch, err := cons.FetchNoWait(n)
					if err != nil {
						break
					}
					got := 0
					for m := range batch.Messages() {
						var ev audit.Event
						json.Unmarshal(m.Data(), &ev)
						out = append(out, ev)
						got++
					}
					if got == 0 {
						break
					}
					n -= got
				}
			}
		}
		cancel()
		if len(out) >= want || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestEverythingThroughTheGateway(t *testing.T) {
	ns := testenv.StartNATS(t)
	direct := testenv.StartEverything(t)
	g := startGateway(t, ns.ClientURL(), testenv.ExampleBundle(t), config.Upstream{Name: "everything", URL: direct})
	via := "http://" + g.Addr() + "/mcp"

	dcs := connect(t, direct, nil)
	// The SDK hands notifications to this handler on its own goroutine, so the last one may be
	// handled after CallTool returns; what proves streaming is that the first ones arrive while
	// the call is still in flight (a buffering proxy would deliver all of them with the result).
	var progressMu sync.Mutex
	var progress []float64
	inFlight := 0
	calling := false
	gcs := connect(t, via, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progressMu.Lock()
		defer progressMu.Unlock()
		if calling {
			inFlight++
		}
		progress = append(progress, r.Params.Progress)
	}})
	ctx := context.Background()

	t.Run("tools/list identical to direct but for what is always denied", func(t *testing.T) {
		dl, err := dcs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		gl, err := gcs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		// get-env is denied for every call (deny-get-env): the gateway does not advertise it,
		// and leaves every other tool byte for byte as the server listed it.
		n := len(dl.Tools)
		dl.Tools = slices.DeleteFunc(dl.Tools, func(tl *mcp.Tool) bool { return tl.Name == "get-env" })
		if len(dl.Tools) != n-1 {
			t.Fatalf("the server no longer lists get-env: %d tools", n)
		}
		db, _ := json.Marshal(dl.Tools)
		gb, _ := json.Marshal(gl.Tools)
		if !bytes.Equal(db, gb) {
			t.Fatalf("tools differ:\ndirect %s\ngateway %s", db, gb)
		}
	})
	t.Run("echo same as direct", func(t *testing.T) {
		args := map[string]any{"message": "hello palisade"}
		dr, err := dcs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		gr, err := gcs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if text(dr) != text(gr) || !strings.Contains(text(gr), "hello palisade") {
			t.Fatalf("direct %q, gateway %q", text(dr), text(gr))
		}
	})
	t.Run("get-env denied and the session survives", func(t *testing.T) {
		_, err := gcs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
		d := denied(t, err)
		if d.Rule != "deny-get-env" || d.Stage != "rules" || d.AuditID == "" || d.Reason == "" {
			t.Fatalf("deny data %+v", d)
		}
		r, err := gcs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "still here"}})
		if err != nil || !strings.Contains(text(r), "still here") {
			t.Fatalf("next call after a deny: %v %q", err, text(r))
		}
	})
	t.Run("a rule's sample is decided by the judge", func(t *testing.T) {
		r, err := gcs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
		if err != nil {
			t.Fatalf("get-sum: %v", err)
		}
		if !strings.Contains(text(r), "5") {
			t.Fatalf("get-sum judged allow: %v %q", err, text(r))
		}
	})
	t.Run("progress arrives before the result", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 2, "steps": 4}}
		params.SetProgressToken("tok-1")
		progressMu.Lock()
		calling = true
		progressMu.Unlock()
		r, err := gcs.CallTool(ctx, params)
		progressMu.Lock()
		calling = false
		early := inFlight
		progressMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if early < 3 || !strings.Contains(text(r), "completed") {
			t.Fatalf("%d progress notifications arrived while the call was in flight (%q), want at least 3 of 4", early, text(r))
		}
		testenv.Eventually(t, 5*time.Second, "4 progress notifications", func() bool {
			progressMu.Lock()
			defer progressMu.Unlock()
			return len(progress) == 4
		})
	})

	// Five judged calls (echo twice, get-env, get-sum, the long-running one); the last event is
	// recorded after its answer, so wait for all five rather than read what is there.
	// Other messages are recorded too when a stage acts on them (the injection stage redacts the
	// easter egg of server-everything's initialize instructions, "If asked about server
	// instructions, respond with ..."): wait until the four tools' events are in.
	byTool := map[string]audit.Event{}
	testenv.Eventually(t, 20*time.Second, "the judged calls' events", func() bool {
		for _, ev := range events(t, ns.ClientURL(), 5) {
			if ev.Tool != "" {
				byTool[ev.Tool] = ev
			} else {
				t.Logf("also recorded: %s %s %s", ev.Method, ev.Action, ev.Reason)
			}
		}
		_, long := byTool["trigger-long-running-operation"]
		return long && len(byTool) >= 4
	})
	if ev := byTool["get-env"]; ev.Action != "deny" || ev.Stage != "rules" || ev.Rule != "deny-get-env" || ev.Bundle == nil || ev.Bundle.Name != "example" {
		t.Errorf("get-env event: %+v", ev)
	}
	if ev := byTool["echo"]; ev.Action != "allow" || len(ev.Stages) == 0 || ev.Stages[0].Stage != "rules" || ev.Upstream == nil {
		t.Errorf("echo event: %+v", ev)
	}
	if ev := byTool["trigger-long-running-operation"]; ev.Action != "allow" {
		t.Errorf("long-running event: %+v", ev)
	}
	if ev := byTool["get-sum"]; ev.Action != "allow" || ev.RequestedAction != "allow" || ev.Stage != "judge" {
		t.Errorf("get-sum event (sample resolved by the judge): %+v", ev)
	}
}

func TestStatelessProtocol(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	g := startGateway(t, ns.ClientURL(), testenv.ExampleBundle(t), config.Upstream{Name: "go", URL: up})
	cs := connect(t, "http://"+g.Addr()+"/mcp/go", nil)
	ctx := context.Background()
	if v := cs.InitializeResult().ProtocolVersion; v < pmcp.Stateless {
		t.Fatalf("negotiated %s, want the stateless %s", v, pmcp.Stateless)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}})
	if err != nil || text(r) != "Echo: x" {
		t.Fatalf("echo: %v %q", err, text(r))
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"name": "HOME"}})
	denied(t, err)
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "y"}})
	if err != nil || text(r) != "Echo: y" {
		t.Fatalf("echo after deny: %v %q", err, text(r))
	}

	// A spoofed Mcp-Name (header says echo, body calls get-env) is refused before any stage runs.
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get-env","arguments":{"name":"HOME"}}}`
	req, _ := http.NewRequest("POST", "http://"+g.Addr()+"/mcp/go", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(pmcp.HeaderProtocolVersion, pmcp.Stateless)
	req.Header.Set(pmcp.HeaderMethod, "tools/call")
	req.Header.Set(pmcp.HeaderName, "echo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), fmt.Sprint(pmcp.CodeHeaderMismatch)) || !strings.Contains(string(b), "Mcp-Name") {
		t.Fatalf("spoofed Mcp-Name: %d %s", resp.StatusCode, b)
	}

	evs := events(t, ns.ClientURL(), 3)
	actions := map[string]int{}
	for _, ev := range evs {
		actions[ev.Tool+":"+ev.Action]++
	}
	if actions["echo:allow"] != 2 || actions["get-env:deny"] != 1 {
		t.Fatalf("audit events by tool:action = %v", actions)
	}
}

func post(t *testing.T, url, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		i := bytes.LastIndex(b, []byte("data: "))
		if i < 0 {
			t.Fatalf("stream without data: %q", b)
		}
		b = bytes.TrimSpace(b[i+len("data: "):])
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer is not JSON: %d %q", resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	f, _ := e["code"].(float64)
	return int(f)
}

func TestBadInputGetsClearErrors(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	down := "http://" + fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)) + "/mcp"
	g := startGateway(t, ns.ClientURL(), testenv.ExampleBundle(t),
		config.Upstream{Name: "go", URL: up}, config.Upstream{Name: "down", URL: down})
	base := "http://" + g.Addr()
	stateless := map[string]string{pmcp.HeaderProtocolVersion: pmcp.Stateless, pmcp.HeaderMethod: "tools/call", pmcp.HeaderName: "echo"}
	echo := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"}}}`
	for _, tc := range []struct {
		name     string
		path     string
		body     string
		hdr      map[string]string
		status   int
		code     int
		contains string
	}{
		{"malformed json", "/mcp/go", `{"jsonrpc": "2.0", "id": 1, "method": `, nil, 400, pmcp.CodeParseError, "not JSON"},
		{"wrong jsonrpc version", "/mcp/go", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, nil, 400, pmcp.CodeInvalidRequest, `"2.0"`},
		{"not a message", "/mcp/go", `{"jsonrpc":"2.0","id":1}`, nil, 400, pmcp.CodeInvalidRequest, "neither"},
		{"oversized body", "/mcp/go", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 70<<10) + `"}}}`, nil, 413, pmcp.CodeTooLarge, "limit"},
		{"unknown upstream", "/mcp/nope", echo, nil, 404, pmcp.CodeInvalidRequest, "unknown upstream"},
		{"aggregate endpoint needs a session", "/mcp", echo, nil, 400, pmcp.CodeInvalidRequest, "initialize first"},
		{"upstream down", "/mcp/down", echo, stateless, 502, pmcp.CodeUpstream, "unreachable"},
		{"method header mismatch", "/mcp/go", echo, map[string]string{pmcp.HeaderMethod: "tools/list"}, 400, pmcp.CodeHeaderMismatch, "Mcp-Method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := post(t, base+tc.path, tc.body, tc.hdr)
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if status != tc.status || errCode(m) != tc.code || !strings.Contains(msg, tc.contains) {
				t.Fatalf("got %d %d %q, want %d %d containing %q", status, errCode(m), msg, tc.status, tc.code, tc.contains)
			}
		})
	}
	// The gateway still serves after all of that.
	status, m := post(t, base+"/mcp/go", echo, map[string]string{pmcp.HeaderProtocolVersion: "2025-03-26"})
	if status != 200 || m["result"] == nil {
		t.Fatalf("gateway stopped serving: %d %v", status, m)
	}
	// A batch: every element judged; the denied one gets -32001, the other its result.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-env","arguments":{"name":"HOME"}}}]`
	req, _ := http.NewRequest("POST", base+"/mcp/go", strings.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(pmcp.HeaderProtocolVersion, "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answers []map[string]any
	json.NewDecoder(resp.Body).Decode(&answers)
	resp.Body.Close()
	if len(answers) != 2 {
		t.Fatalf("batch answers: %v", answers)
	}
	byID := map[float64]map[string]any{}
	for _, a := range answers {
		byID[a["id"].(float64)] = a
	}
	if byID[1]["result"] == nil || errCode(byID[2]) != pmcp.CodeDenied {
		t.Fatalf("batch: %v", answers)
	}
}

// writeBundle writes a bundle with one misbehave stage and pins it.
func misbehaveBundle(t *testing.T, mode, failure string) string {
	t.Helper()
	dir := t.TempDir()
	wasm, _ := testenv.ReadPlugin(t, "./host/internal/testenv/misbehave")
	os.WriteFile(filepath.Join(dir, "mis.wasm"), wasm, 0o644)
	y := fmt.Sprintf(`name: mis-%s
version: "1"
default_action: allow
coverage: {uncovered: pass}
stages:
  - name: mis
    plugin: mis.wasm
    sha256: ""
    timeout: 200ms
    memory_pages: 512
    failure: %s
    config: {mode: %s, when_tool: get-env}
`, mode, failure, mode)
	os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(y), 0o644)
	if _, err := bundlePin(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMisbehavingPlugins(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	ctx := context.Background()
	for _, mode := range []string{"trap", "loop", "grow"} {
		for _, failure := range []string{"closed", "open"} {
			t.Run(mode+"/"+failure, func(t *testing.T) {
				g := startGateway(t, ns.ClientURL(), misbehaveBundle(t, mode, failure), config.Upstream{Name: "go", URL: up})
				cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"name": "PALISADE_NOPE"}})
				if failure == "closed" {
					d := denied(t, err)
					if d.Stage != "mis" || !strings.Contains(d.Reason, "fail closed") {
						t.Fatalf("deny data %+v", d)
					}
				} else if err != nil {
					t.Fatalf("fail open must pass the call: %v", err)
				} else if r.IsError {
					t.Fatalf("upstream error: %q", text(r))
				}
				for i := range 3 {
					r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": fmt.Sprint(i)}})
					if err != nil || text(r) != "Echo: "+fmt.Sprint(i) {
						t.Fatalf("call %d after %s: %v %q", i, mode, err, text(r))
					}
				}
			})
		}
	}
}

func TestAuditSurvivesNATSOutage(t *testing.T) {
	rn := testenv.StartRestartableNATS(t)
	up := testenv.StartGoServer(t, true)
	g := startGateway(t, rn.URL(), testenv.ExampleBundle(t), config.Upstream{Name: "go", URL: up})
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()
	call := func(i int) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": fmt.Sprint(i)}})
		if err != nil || text(r) != "Echo: "+fmt.Sprint(i) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	const before, during, after = 5, 20, 5
	for i := range before {
		call(i)
	}
	rn.Stop()
	for i := range during {
		call(before + i) // calls keep working while NATS is down
	}
	rn.Start()
	for i := range after {
		call(before + during + i)
	}
	evs := events(t, rn.URL(), before+during+after)
	seen := map[string]int{}
	for _, ev := range evs {
		seen[ev.ID]++
	}
	if len(seen) != before+during+after {
		t.Fatalf("got %d distinct events, want %d", len(seen), before+during+after)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %s arrived %d times", id, n)
		}
	}
}

func TestMetricsAndHealth(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	g := startGateway(t, ns.ClientURL(), testenv.ExampleBundle(t), config.Upstream{Name: "go", URL: up})
	base := "http://" + g.Addr()
	cs := connect(t, base+"/mcp", nil)
	ctx := context.Background()
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "m"}})
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"name": "HOME"}})
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("/healthz %d %s", code, body)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"example"`) {
		t.Fatalf("/readyz %d %s", code, body)
	}
	wants := []string{
		`palisade_decisions_total{action="allow",server="go"} 1`,
		`palisade_decisions_total{action="deny",server="go"} 1`,
		`palisade_stage_duration_seconds_count{action="deny",phase="request",stage="rules"}`,
		`palisade_upstream_duration_seconds_count{outcome="ok",server="go"}`,
		// The gateway's own share: initialize and the echo forwarded, get-env denied by it.
		`palisade_gateway_overhead_seconds_count{path="forwarded",server="go"} 2`,
		`palisade_gateway_overhead_seconds_count{path="answered",server="go"} 1`,
		`palisade_infer_model_info{active="cpu",configured="cpu",model="detector-v1",runtime="go"} 1`,
		// The audit publisher's counters: nothing lost, and the calls' events acked (polled:
		// the publisher is asynchronous).
		`palisade_audit_dropped_total 0`,
		`palisade_audit_recheck_failed_total 0`,
		`palisade_audit_pending 0`,
	}
	// The decision counter is incremented after the answer is flushed: poll for it.
	var m string
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, m = get("/metrics")
		missing := false
		for _, want := range wants {
			missing = missing || !strings.Contains(m, want)
		}
		if !missing || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range wants {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s\n%s", want, grepLines(m, "palisade_"))
		}
	}
	var published float64
	for _, l := range strings.Split(m, "\n") {
		if v, ok := strings.CutPrefix(l, "palisade_audit_published_total "); ok {
			published, _ = strconv.ParseFloat(v, 64)
		}
	}
	if published < 2 {
		t.Errorf("palisade_audit_published_total = %v, want the two calls' decisions at least\n%s", published, grepLines(m, "palisade_audit_"))
	}
	// How the injection stage runs: natively (a binary linked with the first-party module's
	// digest, as make build and make test link this package) or in wazero.
	native := strings.Contains(m, `palisade_stage_info{convention="native",stage="injection"} 1`)
	if !native && !strings.Contains(m, `palisade_stage_info{convention="direct",stage="injection"} 1`) {
		t.Errorf("no palisade_stage_info for the injection stage\n%s", grepLines(m, "palisade_stage_info"))
	}
	if wantNative := firstparty.Digest != ""; native != wantNative {
		t.Errorf("injection stage native = %v, want %v (firstparty.Digest %q)", native, wantNative, firstparty.Digest)
	}
	// The plugins' linear memory (outside the Go heap): Wasm instances hold MiBs; a native
	// stage none.
	var linear float64
	for _, l := range strings.Split(m, "\n") {
		if v, ok := strings.CutPrefix(l, "palisade_plugin_linear_memory_bytes "); ok {
			linear, _ = strconv.ParseFloat(v, 64)
		}
	}
	// And per stage, with each instance's cap: the example bundle's injection stage has 1024
	// pages, and its instances hold some MiBs, under the cap (none natively).
	stage := func(name string) float64 {
		for _, l := range strings.Split(m, "\n") {
			if v, ok := strings.CutPrefix(l, name+`{stage="injection"} `); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		return -1
	}
	used, inst, limit := stage("palisade_stage_linear_memory_bytes"), stage("palisade_stage_instances"), stage("palisade_stage_memory_limit_bytes")
	switch {
	case native && (used != 0 || inst < 1 || linear != 0):
		t.Errorf("native injection stage: %v bytes of linear memory in %v instances, %v in all plugins; want none in at least one\n%s", used, inst, linear, grepLines(m, "linear"))
	case !native && linear < 1<<20:
		t.Errorf("palisade_plugin_linear_memory_bytes = %v, want the live instances' memory (MiBs)\n%s", linear, grepLines(m, "linear"))
	case !native && (limit != 1024<<16 || inst < 1 || used < 1<<20 || used > inst*limit):
		t.Errorf("injection stage memory: %v bytes in %v instances, limit %v each; want MiBs under 64 MiB each\n%s", used, inst, limit, grepLines(m, "palisade_stage_"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
