package proxy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/proxy"
)

// syncBuffer is a log destination the supervisor and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The StdioUpstream alone, in front of server-filesystem (npm, stdio), with two Go SDK client
// sessions (no engine: this is the transport under the proxy): both list and call with the
// same request ids, the child's stderr reaches the log line by line with the upstream's name,
// a killed child is restarted and both sessions go on, and Close stops it with SIGTERM.
func TestStdioUpstreamSupervises(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("contents of a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s, err := proxy.NewStdioUpstream(proxy.StdioUpstreamOptions{
		Name: "fs", Command: "node", Grace: 2 * time.Second,
		Args:   []string{filepath.Join(testenv.NodeModules(t), "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), root},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	ctx := context.Background()
	connect := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), HTTPClient: &http.Client{Transport: s}}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	read := func(cs *mcp.ClientSession) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "a.txt")}})
		if err != nil || r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "contents of a") {
			t.Fatalf("read_text_file: %v %+v", err, r)
		}
	}
	one, two := connect(), connect()
	for _, cs := range []*mcp.ClientSession{one, two} {
		if tl, err := cs.ListTools(ctx, nil); err != nil || len(tl.Tools) == 0 {
			t.Fatalf("tools/list: %v", err)
		}
		read(cs)
	}
	var wg sync.WaitGroup
	for _, cs := range []*mcp.ClientSession{one, two, one, two} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories", Arguments: map[string]any{}}); err != nil {
				t.Errorf("list_allowed_directories: %v", err)
			}
		}()
	}
	wg.Wait()
	testenv.Eventually(t, 10*time.Second, "the child's stderr in the log", func() bool {
		return strings.Contains(logs.String(), `"msg":"upstream stderr","upstream":"fs","line":"Secure MCP Filesystem Server running on stdio"`)
	})

	pid := s.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "a restarted child", func() bool {
		p := s.PID()
		return p != 0 && p != pid
	})
	testenv.Eventually(t, 30*time.Second, "the sessions to read again", func() bool {
		_, err := one.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories", Arguments: map[string]any{}})
		return err == nil
	})
	read(one)
	read(two)

	pid = s.PID()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still there after Close: %v", pid, err)
	}
	if _, err := one.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a call after Close succeeded")
	}
}

// A command that cannot start is down: the transport fails with ErrStdioDown, not a hang.
func TestStdioUpstreamDownWhenItCannotStart(t *testing.T) {
	s, err := proxy.NewStdioUpstream(proxy.StdioUpstreamOptions{Name: "nope", Command: filepath.Join(t.TempDir(), "missing")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	req, _ := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if _, err := (&http.Client{Transport: s}).Do(req); !errors.Is(err, proxy.ErrStdioDown) {
		t.Fatalf("err = %v, want ErrStdioDown", err)
	}
}

// The upstream runs in a process group of its own: what it starts (here a shell wrapper's
// background sleep, as npx starts node) is stopped with it.
func TestStdioUpstreamStopsItsProcessGroup(t *testing.T) {
	root := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	server := filepath.Join(testenv.NodeModules(t), "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	s, err := proxy.NewStdioUpstream(proxy.StdioUpstreamOptions{
		Name: "fs", Command: "/bin/sh", Grace: 2 * time.Second,
		Args: []string{"-c", `sleep 600 & echo $! > "$1"; exec node "$2" "$3"`, "sh", pidFile, server, root},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), HTTPClient: &http.Client{Transport: s}}, nil)
	if err != nil {
		s.Close(ctx)
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var grandchild int
	testenv.Eventually(t, 10*time.Second, "the wrapper's background process", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(b), &grandchild)
		return err == nil && grandchild > 0
	})
	if err := syscall.Kill(grandchild, 0); err != nil {
		t.Fatalf("grandchild %d not running before Close: %v", grandchild, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the grandchild to be gone", func() bool {
		return errors.Is(syscall.Kill(grandchild, 0), syscall.ESRCH) || zombie(grandchild)
	})
}

// zombie reports whether pid has exited and waits for a parent to reap it.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}
