package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPHTTPConnectionLimit: `palisade mcp --http` holds at most http.max_connections
// connections like the gateway; one past it gets 503 at once (it is not left waiting), and
// once a held connection closes an SDK client connects again.
func TestMCPHTTPConnectionLimit(t *testing.T) {
	bin, b := palisadeBinary(t), agentsBundle(t, "")
	cfg := filepath.Join(t.TempDir(), "palisade.yaml")
	if err := os.WriteFile(cfg, []byte("http: {max_connections: 2, read_header_timeout: 5m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startMCPHTTP(t, bin, "--config", cfg, "--bundle", b, "--data-dir", t.TempDir(), "--nats-url", "nats://127.0.0.1:1")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// The second held connection is accepted once it gets an answer.
	io.WriteString(held[1], "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-123\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(held[1]), nil); err != nil {
		t.Fatalf("a held connection: %v", err)
	}
	plain := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer tok-123")
	req.Header.Set("Content-Type", "application/json")
	resp, err := plain.Do(req)
	if err != nil {
		t.Fatalf("a third connection: %v, want 503", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third connection: %d, want 503", resp.StatusCode)
	}
	for _, c := range held {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{"tok-123"}}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err == nil {
			cs.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no connection after the held ones closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
