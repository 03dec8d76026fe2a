package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// otlpSpan is one line of otlprecv's output (host/internal/otlprecv).
type otlpSpan struct {
	Service      string            `json:"service"`
	TraceID      string            `json:"trace_id"`
	SpanID       string            `json:"span_id"`
	ParentSpanID string            `json:"parent_span_id"`
	Name         string            `json:"name"`
	Attributes   map[string]string `json:"attributes"`
}

// startOTLPReceiver builds and runs host/internal/otlprecv, a real OTLP receiver process,
// and returns its URL and a function reading the spans it received so far.
// args are otlprecv's extra flags (-grpc).
func startOTLPReceiver(t *testing.T, args ...string) (string, func() []otlpSpan) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "otlprecv")
	build := exec.Command("go", "build", "-o", bin, "./host/internal/otlprecv")
	build.Dir = testenv.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build otlprecv: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "spans.jsonl")
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-out", out}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("otlprecv printed no URL: %v", err)
	}
	return strings.TrimSpace(line), func() []otlpSpan {
		b, _ := os.ReadFile(out)
		var spans []otlpSpan
		for _, l := range strings.Split(string(b), "\n") {
			var s otlpSpan
			if json.Unmarshal([]byte(l), &s) == nil {
				spans = append(spans, s)
			}
		}
		return spans
	}
}

// traceparentTransport sets the client's W3C trace context on every request, as a traced agent
// would.
type traceparentTransport struct{ traceparent string }

func (tt traceparentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", tt.traceparent)
	r.Header.Set("tracestate", "agent=1")
	return http.DefaultTransport.RoundTrip(r)
}

// TestTraceThroughTheGateway: with a telemetry section pointed at a real OTLP receiver process,
// a tools/call from a client inside a trace gives a gateway span in the client's trace (its
// span as parent), a stage span and an upstream span as its children, a traceparent on the
// upstream's request naming the upstream span, and an audit event carrying the trace id.
func TestTraceThroughTheGateway(t *testing.T) {
	const traceID, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	recv, spans := startOTLPReceiver(t)
	ns := testenv.StartNATS(t)

	// The upstream: the Go SDK server behind a middleware that records trace headers.
	var mu sync.Mutex
	var upHeaders []http.Header
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testenv.NewGoServer() }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upHeaders = append(upHeaders, r.Header.Clone())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	bdir := testenv.StageBundle(t, "tests/ui/bundle", map[string]string{"plugins/rules.wasm": "./plugins/rules"})
	g := startGatewayExt(t, ns.ClientURL(), bdir, fmt.Sprintf("telemetry: {otlp_endpoint: %q, service_name: palisade-test}\n", recv),
		config.Upstream{Name: "go", URL: srv.URL + "/mcp"})

	c := mcp.NewClient(&mcp.Implementation{Name: "traced-agent", Version: "1.0.0"}, nil)
	hc := &http.Client{Transport: traceparentTransport{"00-" + traceID + "-" + clientSpan + "-01"}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + g.Addr() + "/mcp/go", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "traced"}})
	if err != nil || text(r) != "Echo: traced" {
		t.Fatalf("echo: %v %q", err, text(r))
	}

	// The gateway's span of the call, in the client's trace.
	var call otlpSpan
	testenv.Eventually(t, 20*time.Second, "the gateway's tools/call span at the receiver", func() bool {
		for _, s := range spans() {
			if s.Name == "tools/call echo" {
				call = s
				return true
			}
		}
		return false
	})
	if call.TraceID != traceID || call.ParentSpanID != clientSpan {
		t.Fatalf("call span trace %s parent %s, want the client's %s and %s", call.TraceID, call.ParentSpanID, traceID, clientSpan)
	}
	if call.Service != "palisade-test" || call.Attributes["mcp.method.name"] != "tools/call" || call.Attributes["gen_ai.tool.name"] != "echo" ||
		call.Attributes["palisade.server"] != "go" || call.Attributes["palisade.action"] != "allow" || call.Attributes["palisade.audit_id"] == "" {
		t.Fatalf("call span: service %q attributes %v", call.Service, call.Attributes)
	}

	// Its children: the stage call and the upstream call (both end before the call span).
	var stage, upstream otlpSpan
	testenv.Eventually(t, 20*time.Second, "the stage and upstream spans", func() bool {
		for _, s := range spans() {
			switch {
			case s.ParentSpanID != call.SpanID:
			case s.Name == "palisade.stage rules":
				stage = s
			case s.Name == "upstream go":
				upstream = s
			}
		}
		return stage.SpanID != "" && upstream.SpanID != ""
	})
	if stage.TraceID != traceID || stage.Attributes["palisade.phase"] != "request" || stage.Attributes["palisade.action"] == "" || stage.Attributes["palisade.score"] == "" {
		t.Fatalf("stage span: %+v", stage)
	}
	if upstream.TraceID != traceID || upstream.Attributes["http.response.status_code"] != "200" {
		t.Fatalf("upstream span: %+v", upstream)
	}

	// The upstream got the gateway's trace context: same trace, the upstream span as parent.
	want := "00-" + traceID + "-" + upstream.SpanID + "-01"
	mu.Lock()
	var got []string
	for _, hdr := range upHeaders {
		got = append(got, hdr.Get("traceparent"))
	}
	mu.Unlock()
	found := false
	for _, tp := range got {
		found = found || tp == want
		if tp != "" && !strings.HasPrefix(tp, "00-"+traceID+"-") {
			t.Errorf("upstream traceparent %q is not in the client's trace", tp)
		}
	}
	if !found {
		t.Fatalf("upstream traceparents %q, want one %q", got, want)
	}

	// The audit event carries the trace id.
	for _, ev := range events(t, ns.ClientURL(), 1) {
		if ev.Tool == "echo" {
			if ev.TraceID != traceID {
				t.Fatalf("audit event trace_id %q, want %q", ev.TraceID, traceID)
			}
			if ev.ID != call.Attributes["palisade.audit_id"] {
				t.Fatalf("audit id %s, span's %s", ev.ID, call.Attributes["palisade.audit_id"])
			}
			return
		}
	}
	t.Fatal("no audit event for echo")
}

// TestTraceApprovalWaitFromMeta: a client that carries its trace context in params._meta
// (SEP-414) instead of a header still parents the gateway's span, and a held call's wait for a
// person is a child span saying how it ended (here the rule's short timeout allows it).
func TestTraceApprovalWaitFromMeta(t *testing.T) {
	const traceID, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	recv, spans := startOTLPReceiver(t)
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, false)
	g := approvalsGateway(t, "gw-1", ns.ClientURL(), approvalsBundle(t), up,
		fmt.Sprintf("telemetry: {otlp_endpoint: %q, sample_ratio: 1}\n", recv))
	cs := mcpSession(t, g, nil)
	p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "brief wait"}}
	p.Meta = mcp.Meta{"traceparent": "00-" + traceID + "-" + clientSpan + "-01"}
	r, err := cs.CallTool(t.Context(), p)
	if err != nil || text(r) != "Echo: brief wait" {
		t.Fatalf("call = %v %v", r, err)
	}
	var call, wait otlpSpan
	testenv.Eventually(t, 20*time.Second, "the call and approval spans at the receiver", func() bool {
		all := spans()
		for _, s := range all {
			if s.Name == "tools/call echo" && s.TraceID == traceID {
				call = s
			}
		}
		for _, s := range all {
			if s.Name == "palisade.approval" && call.SpanID != "" && s.ParentSpanID == call.SpanID {
				wait = s
			}
		}
		return wait.SpanID != ""
	})
	if call.ParentSpanID != clientSpan {
		t.Fatalf("call span parent %s, want the client's %s from _meta", call.ParentSpanID, clientSpan)
	}
	if wait.Attributes["palisade.action"] != "allow" || wait.Attributes["palisade.decided_by"] == "" {
		t.Fatalf("approval span attributes %v", wait.Attributes)
	}
}

// TestTraceOverGRPC: protocol grpc exports the same trace over OTLP/gRPC.
func TestTraceOverGRPC(t *testing.T) {
	const traceID, clientSpan = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
	recv, spans := startOTLPReceiver(t, "-grpc")
	ns := testenv.StartNATS(t)
	bdir := testenv.StageBundle(t, "tests/ui/bundle", map[string]string{"plugins/rules.wasm": "./plugins/rules"})
	g := startGatewayExt(t, ns.ClientURL(), bdir, fmt.Sprintf("telemetry: {otlp_endpoint: %q, protocol: grpc}\n", recv),
		config.Upstream{Name: "go", URL: testenv.StartGoServer(t, true)})
	c := mcp.NewClient(&mcp.Implementation{Name: "traced-agent", Version: "1.0.0"}, nil)
	hc := &http.Client{Transport: traceparentTransport{"00-" + traceID + "-" + clientSpan + "-01"}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + g.Addr() + "/mcp/go", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "over grpc"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the call span and its stage span over OTLP/gRPC", func() bool {
		var call string
		all := spans()
		for _, s := range all {
			if s.Name == "tools/call echo" && s.TraceID == traceID && s.ParentSpanID == clientSpan && s.Service == "palisade" {
				call = s.SpanID
			}
		}
		for _, s := range all {
			if call != "" && s.Name == "palisade.stage rules" && s.ParentSpanID == call {
				return true
			}
		}
		return false
	})
}
