package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitTCP polls addr until it accepts a connection or the deadline passes.
func WaitTCP(t testing.TB, addr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: %s did not accept connections within %s: %v", addr, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NodeModules is testdata/npm/node_modules, installed by `make setup` (npm ci).
func NodeModules(t testing.TB) string {
	t.Helper()
	nm := filepath.Join(RepoRoot(t), "testdata", "npm", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "@modelcontextprotocol")); err != nil {
		t.Fatalf("testenv: %s is missing: run `make setup` (npm ci in testdata/npm) first", nm)
	}
	return nm
}

// StartEverything runs @modelcontextprotocol/server-everything (streamable HTTP) as a real node
// process on a free port and returns its MCP endpoint URL.
func StartEverything(t testing.TB) string {
	t.Helper()
	nm := NodeModules(t)
	port := FreePort(t)
	cmd := exec.Command("node", filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "PALISADE_TEST_SECRET=s3cr3t-value")
	var logb strings.Builder
	cmd.Stdout, cmd.Stderr = &logb, &logb
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start server-everything: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("testenv: server-everything did not start: %v\n%s", err, logb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

// EchoArgs is the input of the Go SDK server's echo tool.
type EchoArgs struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

// ProgressArgs is the input of the Go SDK server's progress tool.
type ProgressArgs struct {
	Steps int `json:"steps" jsonschema:"how many progress notifications to send"`
}

// NewGoServer returns an MCP server built with the official Go SDK with tools echo, get-env
// (prints one environment variable: the tool a policy must stop) and progress.
func NewGoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "palisade-test-upstream", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "get-env", Description: "Prints an environment variable."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: os.Getenv(in.Name)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Sends progress notifications, then answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, in ProgressArgs) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if tok != nil {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				}
				time.Sleep(20 * time.Millisecond)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done after %d steps", in.Steps)}}}, nil, nil
		})
	return s
}

// StartGoServer serves NewGoServer over Streamable HTTP on loopback and returns its URL.
// stateless selects the SDK's stateless mode (no sessions; the 2026-07-28 protocol).
func StartGoServer(t testing.TB, stateless bool) string {
	t.Helper()
	return ServeGo(t, NewGoServer(), stateless)
}

// ServeGo serves s over Streamable HTTP on loopback and returns its URL.
func ServeGo(t testing.TB, s *mcp.Server, stateless bool) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
