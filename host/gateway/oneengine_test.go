package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/policytest"
	"github.com/added060/palisade/host/proxy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oneEngineStages is the bundle every way in decides with: one misbehave stage per row, each
// acting only for its own tool (when_tool), so one bundle serves the whole table. Every response
// stage fails closed: an answer the gateway cannot judge is denied.
const oneEngineStages = `
  - name: rules
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-allow, verdict: {action: allow, rule: allow-rule, reason: explicitly allowed}}
  - name: denier
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-deny, verdict: {action: deny, rule: deny-rule, reason: denied by rule}}
  - name: asker
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-ask, verdict: {action: ask, rule: ask-rule, reason: a person decides}}
  - name: sampler
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-sample, verdict: {action: sample, rule: sample-rule, reason: a judge decides}}
  - name: unsure
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-uncertain, verdict: {action: uncertain, rule: unsure-rule, reason: a reviewer would ask}}
  - name: trap-closed
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: closed
    config: {mode: trap, when_tool: t-trap-closed}
  - name: trap-open
    plugin: mis.wasm
    sha256: MIS
    phase: request
    timeout: 10s
    failure: open
    config: {mode: trap, when_tool: t-trap-open}
  - name: resp-deny
    plugin: mis.wasm
    sha256: MIS
    phase: response
    match:
      methods: ["tools/call"]
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-resp-deny, verdict: {action: deny, rule: resp-rule, reason: the answer leaks}}
  - name: redact
    plugin: mis.wasm
    sha256: MIS
    phase: response
    match:
      methods: ["tools/call"]
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: t-redact, verdict: {action: allow, reason: redacted, result: {content: [{type: text, text: "[REDACTED]"}]}}}
`

// oneEngineBundle writes and pins the table's bundle: default allow; ask and sample that no
// person or judge resolves fall back to deny; an uncertain stage asks in the hook (Claude Code's
// prompt) and denies on every other way in.
func oneEngineBundle(t *testing.T) string {
	t.Helper()
	mis, sum := testenv.ReadPlugin(t, "./host/internal/testenv/misbehave")
	dir := t.TempDir()
	y := "name: one-engine\nversion: 0.0.1\nabi: \"1.0\"\ndefault_action: allow\nfallback: {ask: deny, sample: deny}\nuncertain: {default: deny, hook: ask}\ncoverage: {uncovered: pass}\nstages:" +
		strings.ReplaceAll(oneEngineStages, "MIS", sum)
	for name, b := range map[string][]byte{"bundle.yaml": []byte(y), "mis.wasm": mis} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bundlePin(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// oneEngineTools are the upstream's tools, one per row: each answers "ok <name>"; t-dup answers
// a JSON-RPC response with two "result" keys (the first harmless, the last not), which no
// transport may pass on unjudged.
var oneEngineTools = []string{"t-allow", "t-deny", "t-ask", "t-uncertain", "t-sample", "t-none", "t-trap-closed", "t-trap-open", "t-resp-deny", "t-redact", "t-dup"}

// dupAnswer is the ambiguous answer to the request with id: readers disagree on its result.
func dupAnswer(id json.RawMessage) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"fine"}]},"result":{"content":[{"type":"text","text":"SMUGGLED"}]}}`)
}

// oneEngineServer is the real Go SDK server behind every transport.
func oneEngineServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "one-engine-upstream", Version: "1.0.0"}, nil)
	for _, name := range oneEngineTools {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Answers ok."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + name}}}, nil, nil
			})
	}
	return s
}

// dupCall reports whether body is a tools/call of t-dup and returns its id.
func dupCall(body []byte) (json.RawMessage, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || m.Params.Name != "t-dup" {
		return nil, false
	}
	return m.ID, true
}

// stdioServerEnv makes this test binary, started as a child, serve oneEngineServer on stdio.
const stdioServerEnv = "PALISADE_ONE_ENGINE_STDIO_SERVER"

func init() {
	if os.Getenv(stdioServerEnv) == "1" {
		os.Exit(serveStdio(os.Stdin, os.Stdout))
	}
}

// lockedWriter writes whole lines under a lock (the SDK and the t-dup shortcut share stdout).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// serveStdio runs oneEngineServer over newline-delimited stdio; a t-dup call is answered with
// dupAnswer directly, every other line goes to the SDK server.
func serveStdio(in io.Reader, out io.Writer) int {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if id, ok := dupCall(line); ok {
				w.Write(append(dupAnswer(id), '\n'))
				continue
			}
			pw.Write(append(append([]byte(nil), line...), '\n'))
		}
		pw.Close()
	}()
	if err := oneEngineServer().Run(context.Background(), &mcp.IOTransport{Reader: pr, Writer: w}); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "stdio server:", err)
		return 1
	}
	return 0
}

// startOneEngineHTTP serves oneEngineServer over Streamable HTTP (JSON answers), answering a
// t-dup call with dupAnswer.
func startOneEngineHTTP(t *testing.T) string {
	t.Helper()
	s := oneEngineServer()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if id, ok := dupCall(body); ok {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set(pmcp.HeaderSessionID, r.Header.Get(pmcp.HeaderSessionID))
				w.Write(dupAnswer(id))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sdk.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// outcome is what a caller sees, in the same words for every way in: "allow" (the upstream's
// answer, given as text), "deny" (with the rule, when the transport says it), "ask", "none" (the
// hook's no-decision: Claude Code's own flow applies) or "n/a".
type outcome struct {
	Action string
	Rule   string
	Text   string
	Reason string // not compared: logged, and checked where a row says why
}

// callOutcome maps a Go SDK client's CallTool answer to an outcome.
func callOutcome(t *testing.T, cs *mcp.ClientSession, tool string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("%s: %v", tool, err)
		}
		if we.Code != pmcp.CodeDenied {
			t.Fatalf("%s: error %d %s, want %d", tool, we.Code, we.Message, pmcp.CodeDenied)
		}
		var d pmcp.DenyData
		json.Unmarshal(we.Data, &d)
		return outcome{Action: "deny", Rule: d.Rule, Reason: we.Message + " " + d.Reason}
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, text(res))
	}
	return outcome{Action: "allow", Text: text(res)}
}

// TestOneEngineEveryWayIn runs one table of fixtures through every way into Palisade: HTTP (a
// gateway in front of a Go SDK server, a Go SDK client), stdio (the stdio proxy around this test
// binary serving the same tools, a Go SDK client), the Claude Code hook (the gateway's
// /v1/hook) and `policy test` (host/policytest). Each must reach the row's decision.
func TestOneEngineEveryWayIn(t *testing.T) {
	dir := oneEngineBundle(t)
	ctx := context.Background()

	// HTTP: the gateway with approvals off, so ask resolves by the bundle's fallback as it does
	// in the one-process modes (which have no approver). With approvals on, the gateway holds an
	// ask for a person on every route, /v1/hook included: HookClient's 2s timeout then ends the
	// exchange and `palisade hook` decides in process (ask) while the held call waits.
	ns := testenv.StartNATS(t)
	g := startGatewayExt(t, ns.ClientURL(), dir, "approvals: {disabled: true}\n", config.Upstream{Name: "up", URL: startOneEngineHTTP(t)})
	httpCS := connect(t, "http://"+g.Addr()+"/mcp/up", nil)

	// stdio: the one-process engine (as `palisade proxy`) around this binary as the server; the
	// in-process hook (`palisade hook` without a gateway) decides with the same engine, knowing
	// the upstream "up" from the config as the gateway does.
	local, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: config.Config{Bundle: dir, DataDir: t.TempDir(),
		Upstreams: []config.Upstream{{Name: "up", URL: "http://127.0.0.1:1/mcp"}}, Plugins: config.Plugins{CacheDir: testenv.CacheDir()}}, Name: "stdio", NoAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close(context.Background()) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cliToProxy, proxyIn := io.Pipe()
	proxyOut, proxyToCli := io.Pipe()
	stdioDone := make(chan error, 1)
	go func() {
		_, err := proxy.RunStdio(ctx, proxy.StdioOptions{Engine: local.Engine, Command: self, Args: []string{"-test.run=^$"},
			Env: append(os.Environ(), stdioServerEnv+"=1"), Server: "up", Stdin: cliToProxy, Stdout: proxyToCli, Grace: 2 * time.Second})
		proxyToCli.Close()
		stdioDone <- err
	}()
	stdioClient := mcp.NewClient(&mcp.Implementation{Name: "palisade-test-client", Version: "1.0.0"}, nil)
	stdioCS, err := stdioClient.Connect(ctx, &mcp.IOTransport{Reader: proxyOut, Writer: proxyIn}, nil)
	if err != nil {
		t.Fatalf("stdio connect: %v", err)
	}
	t.Cleanup(func() {
		stdioCS.Close()
		proxyIn.Close()
		select {
		case err := <-stdioDone:
			if err != nil {
				t.Errorf("stdio proxy: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the stdio proxy did not end after its client closed")
		}
	})

	// policy test: the same Core build `palisade policy test` uses.
	core, err := gateway.NewCore(ctx, gateway.CoreOptions{Config: config.Config{Bundle: dir, Plugins: config.Plugins{CacheDir: testenv.CacheDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close(context.Background()) })

	na := outcome{Action: "n/a"}
	deny := func(rule string) outcome { return outcome{Action: "deny", Rule: rule} }
	ok := func(tool string) outcome { return outcome{Action: "allow", Text: "ok " + tool} }
	rows := []struct {
		name, tool string
		// mcp is the answer over HTTP and stdio; hook and policy what the hook (through the
		// gateway and in process) and policy test say. The hook runs before the tool and never
		// sees its answer (no response phase): for the response rows it must give the request
		// phase's answer, no decision ("none"), and the rows assert exactly that.
		mcp, hook, policy outcome
		// result is a response-phase fixture's upstream result (policy test), "" = request phase.
		result string
		// why is a substring of the HTTP and stdio deny reason ("" = any).
		why string
	}{
		{name: "allow", tool: "t-allow", mcp: ok("t-allow"), hook: outcome{Action: "allow"}, policy: outcome{Action: "allow", Rule: "allow-rule"}},
		{name: "deny", tool: "t-deny", mcp: deny("deny-rule"), hook: deny("deny-rule"), policy: deny("deny-rule")},
		{name: "ask", tool: "t-ask", mcp: deny("ask-rule"), hook: outcome{Action: "ask", Rule: "ask-rule"}, policy: outcome{Action: "ask", Rule: "ask-rule"}},
		// The bundle maps uncertain per way in: ask in the hook, deny elsewhere (policy test's
		// fixtures come in as "fixture", which takes default).
		{name: "uncertain", tool: "t-uncertain", mcp: deny("unsure-rule"), hook: outcome{Action: "ask", Rule: "unsure-rule"}, policy: deny("unsure-rule")},
		{name: "sample", tool: "t-sample", mcp: deny("sample-rule"), hook: deny("sample-rule"), policy: outcome{Action: "sample", Rule: "sample-rule"}},
		{name: "no opinion", tool: "t-none", mcp: ok("t-none"), hook: outcome{Action: "none"}, policy: outcome{Action: "allow"}},
		{name: "trap fails closed", tool: "t-trap-closed", mcp: deny(""), hook: deny(""), policy: deny(""), why: "stage trap-closed failed (fail closed)"},
		{name: "trap fails open", tool: "t-trap-open", mcp: ok("t-trap-open"), hook: outcome{Action: "none"}, policy: outcome{Action: "allow"}},
		{name: "response deny", tool: "t-resp-deny", mcp: deny("resp-rule"), hook: outcome{Action: "none"}, policy: deny("resp-rule"),
			result: `{"content":[{"type":"text","text":"ok t-resp-deny"}]}`},
		{name: "redaction", tool: "t-redact", mcp: outcome{Action: "allow", Text: "[REDACTED]"}, hook: outcome{Action: "none"}, policy: outcome{Action: "allow"},
			result: `{"content":[{"type":"text","text":"ok t-redact"}]}`},
		// policy test judges envelopes, not upstream bytes: there is no answer to be unjudgeable.
		{name: "unjudgeable response", tool: "t-dup", mcp: deny(""), hook: outcome{Action: "none"}, policy: na, why: `the key "result" twice`},
	}
	// policy test runs every fixture in one go, as `palisade policy test --fixture-dir` does.
	var fixtures []map[string]any
	for _, tc := range rows {
		if tc.policy != na {
			fixtures = append(fixtures, policyFixture(tc.tool, tc.result))
		}
	}
	policy := policyOutcomes(t, core, dir, fixtures)
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			check := func(way string, got, want outcome) {
				t.Helper()
				if got.Action != want.Action || (want.Rule != "" && got.Rule != want.Rule) || got.Text != want.Text {
					t.Errorf("%s: got %+v, want %+v", way, got, want)
				}
			}
			for way, cs := range map[string]*mcp.ClientSession{"http": httpCS, "stdio": stdioCS} {
				got := callOutcome(t, cs, tc.tool)
				check(way, got, tc.mcp)
				if !strings.Contains(got.Reason, tc.why) {
					t.Errorf("%s: deny reason %q does not say %q", way, got.Reason, tc.why)
				}
			}
			check("hook (gateway)", hookOutcome(t, g, nil, tc.tool), tc.hook)
			check("hook (in process)", hookOutcome(t, nil, local.Engine, tc.tool), tc.hook)
			if tc.policy != na {
				check("policy test", policy[tc.tool], tc.policy)
			}
		})
	}
}

// hookOutcome asks about Claude Code calling the MCP tool up/tool: the gateway's hook endpoint
// (g), or, as `palisade hook` without a gateway does, the one-process engine e.
func hookOutcome(t *testing.T, g *gateway.Gateway, e *engine.Engine, tool string) outcome {
	t.Helper()
	in := fmt.Sprintf(`{"session_id":"one-engine","hook_event_name":"PreToolUse","tool_name":"mcp__up__%s","tool_input":{},"cwd":%q}`, tool, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out engine.HookOutput
	var err error
	if g != nil {
		out, err = proxy.HookClient{URL: "http://" + g.Addr()}.Decide(ctx, []byte(in))
	} else {
		var hin *engine.HookInput
		if hin, err = engine.ParseHookInput([]byte(in)); err == nil {
			out, err = e.Hook(ctx, hin)
		}
	}
	if err != nil {
		t.Fatalf("hook %s: %v", tool, err)
	}
	o := outcome{Action: out.Decision()}
	if o.Action == "" {
		o.Action = "none"
	}
	if _, refs, found := strings.Cut(out.Reason(), "(rule "); found {
		o.Rule = strings.TrimRight(strings.Fields(refs)[0], ",)")
	}
	return o
}

// policyFixture is the fixture for a call of tool: a request, or with result a response-phase
// envelope carrying the upstream's result.
func policyFixture(tool, result string) map[string]any {
	if result == "" {
		return map[string]any{"name": tool, "method": "tools/call", "server": "up", "params": map[string]any{"name": tool, "arguments": map[string]any{}}}
	}
	return map[string]any{"name": tool, "envelope": map[string]any{"phase": "response", "method": "tools/call", "server": "up", "tool": tool,
		"arguments": map[string]any{}, "result": json.RawMessage(result)}}
}

// policyOutcomes runs the fixtures through policytest.Run with the Core's build, as `palisade
// policy test` does, and returns each fixture's outcome by name.
func policyOutcomes(t *testing.T, core *gateway.Core, dir string, fixtures []map[string]any) map[string]outcome {
	t.Helper()
	b, _ := json.Marshal(fixtures)
	p := filepath.Join(t.TempDir(), "fixtures.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := policytest.Run(context.Background(), policytest.Options{Bundle: dir, Fixtures: []string{p},
		Build: func(ctx context.Context, dir string) (*bundle.Bundle, error) { return core.Build(ctx, dir, true) }})
	if err != nil || len(rs) != len(fixtures) {
		t.Fatalf("policy test: %v %+v", err, rs)
	}
	out := map[string]outcome{}
	for _, r := range rs {
		out[r.Fixture] = outcome{Action: r.Decision, Rule: r.Rule}
	}
	return out
}
