//lint:file-ignore SA1019 MCP sampling is deprecated from protocol 2026-07-28 but still served for older sessions, and these tests exercise it.

package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/proxy"
)

// TestHelperStdioServer is not a test: run as a child with PALISADE_HELPER_SERVER=1 it is a real
// MCP server (the official Go SDK over stdio) for the stdio proxy tests.
func TestHelperStdioServer(t *testing.T) {
	if os.Getenv("PALISADE_HELPER_SERVER") != "1" {
		t.Skip("helper process: runs only as the stdio proxy's child")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "1.0.0"}, nil)
	type textIn struct {
		Text string `json:"text"`
	}
	echo := func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "forbidden_tool", Description: "Never reached."}, func(context.Context, *mcp.CallToolRequest, textIn) (*mcp.CallToolResult, any, error) {
		os.Exit(3) // reaching the server fails the test loudly
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Ask the client to sample."}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Text}}}})
		msg := "sampled"
		if err != nil {
			msg = "sampling refused: " + err.Error()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "helper server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// startProxy runs RunStdio around the helper server and connects the Go SDK client to it.
func startProxy(t testing.TB, o proxy.StdioOptions, copts *mcp.ClientOptions, version string) (*mcp.ClientSession, <-chan int) {
	t.Helper()
	cr, pw := io.Pipe() // proxy → client
	pr, cw := io.Pipe() // client → proxy
	if o.Command == "" {
		o.Command, o.Args = os.Args[0], []string{"-test.run=^TestHelperStdioServer$"}
		o.Env = append(os.Environ(), "PALISADE_HELPER_SERVER=1")
	}
	o.Stdin, o.Stdout, o.Stderr = pr, pw, os.Stderr
	code := make(chan int, 1)
	go func() {
		c, err := proxy.RunStdio(context.Background(), o)
		if err != nil {
			t.Error(err)
		}
		pw.Close()
		code <- c
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "palisade-test", Version: "1"}, copts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return cs, code
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

func TestStdioProxyJudgesAndRelays(t *testing.T) {
	// 2025-06-18 has an initialize handshake and lets servers sample mid-request; 2026-07-28 is
	// stateless (server/discover) and does not.
	for _, v := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { testStdioProxy(t, v) })
	}
}

func testStdioProxy(t *testing.T, version string) {
	rec := &sink{}
	e := agentsEngine(t, rec)
	local := authn.LocalPrincipal()
	cs, code := startProxy(t, proxy.StdioOptions{Engine: e, Server: "helper", Principal: local}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "ok"}, Model: "m", Role: "assistant"}, nil
		},
	}, version)
	ctx := context.Background()

	// The server has three tools; forbidden_tool is denied for every call (deny-forbidden), so
	// it is not advertised, and calling it anyway is denied below.
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 || slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "forbidden_tool" }) {
		t.Fatalf("tools/list through the proxy: %v, %v", tools, err)
	}

	// Concurrent allowed and denied calls: every answer matches its call, none is corrupted.
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 100 {
		wg.Go(func() {
			if i%4 == 0 {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forbidden_tool", Arguments: map[string]any{"text": "x"}})
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != -32001 || !strings.Contains(string(je.Data), "deny-forbidden") {
					errs <- fmt.Errorf("forbidden call %d: err = %v", i, err)
				}
				return
			}
			want := fmt.Sprintf("msg-%d-%s", i, strings.Repeat("é", i))
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": want}})
			if err != nil || text(r) != want {
				errs <- fmt.Errorf("echo %d: %v, %v", i, r, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// A server→client sampling request is judged: the bundle denies it before the client sees it.
	wantSampling := 0
	if version < "2026" {
		wantSampling = 1
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"text": "hi"}})
		if err != nil || !strings.Contains(text(r), "sampling refused") || !strings.Contains(text(r), "denied by policy: servers may not sample") {
			t.Fatalf("sampling through the proxy: %q, %v", text(r), err)
		}
	}

	cs.Close()
	if c := <-code; c != 0 {
		t.Errorf("proxy exit code %d, want the child's 0", c)
	}
	var denied, allowed, sampling int
	for _, ev := range rec.events() {
		switch {
		case ev.Method == "sampling/createMessage" && ev.Action == "deny":
			sampling++
		case ev.Tool == "forbidden_tool" && ev.Action == "deny":
			denied++
		case ev.Tool == "echo" && ev.Action == "allow" && ev.Upstream != nil:
			allowed++
		}
		if ev.Transport != "stdio" || ev.Server != "helper" {
			t.Errorf("event transport %q server %q", ev.Transport, ev.Server)
		}
		if p := ev.Principal; p == nil || p.Issuer != authn.LocalIssuer || p.Subject != local.Subject {
			t.Errorf("event %s %s: principal %+v, want the local user %s", ev.Method, ev.Tool, p, local.Subject)
		}
	}
	if denied != 25 || allowed != 75 || sampling != wantSampling {
		t.Errorf("audit: %d denied, %d allowed, %d sampling denials; want 25, 75, %d", denied, allowed, sampling, wantSampling)
	}
}

func TestStdioProxyExitsWithChild(t *testing.T) {
	e := agentsEngine(t, &sink{})
	pr, _ := io.Pipe()
	code, err := proxy.RunStdio(context.Background(), proxy.StdioOptions{
		Engine: e, Command: "sh", Args: []string{"-c", "exit 7"}, Stdin: pr, Stdout: io.Discard,
	})
	if err != nil || code != 7 {
		t.Fatalf("RunStdio = %d, %v; want 7", code, err)
	}
}

func TestStdioProxyForwardsSignals(t *testing.T) {
	e := agentsEngine(t, &sink{})
	pr, pw := io.Pipe()
	defer pw.Close()
	ready := make(chan struct{})
	out := &signalReady{ready: ready}
	sigs := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() {
		c, err := proxy.RunStdio(context.Background(), proxy.StdioOptions{
			Engine: e, Command: "sh", Args: []string{"-c", `trap 'exit 42' TERM; echo '{"jsonrpc":"2.0","method":"notifications/ready"}'; while :; do sleep 0.05; done`},
			Stdin: pr, Stdout: out, Signals: sigs,
		})
		if err != nil {
			t.Error(err)
		}
		code <- c
	}()
	<-ready // the trap is set once the child has written its first line
	sigs <- syscall.SIGTERM
	if c := <-code; c != 42 {
		t.Fatalf("exit code %d, want the child's 42 after the forwarded SIGTERM", c)
	}
}

// signalReady closes ready on the first write.
type signalReady struct {
	once  sync.Once
	ready chan struct{}
}

func (s *signalReady) Write(b []byte) (int, error) {
	s.once.Do(func() { close(s.ready) })
	return len(b), nil
}

// BenchmarkStdioProxyCall is one allowed tools/call through the stdio proxy (judged by the rules
// stage, relayed to a Go SDK server and back), as the Go SDK client sees it.
func BenchmarkStdioProxyCall(b *testing.B) {
	cs, code := startProxy(b, proxy.StdioOptions{Engine: agentsEngine(b, &sink{}), Server: "helper"}, nil, "2025-06-18")
	ctx := context.Background()
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		ds = append(ds, time.Since(start))
		if err != nil || text(r) != "x" {
			b.Fatal(r, err)
		}
	}
	cs.Close()
	<-code
	testenv.Latencies(ds).Report(b, "", "-us", time.Microsecond)
}
