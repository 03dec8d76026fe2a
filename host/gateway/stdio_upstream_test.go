package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/proxy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// filesystemUpstream is @modelcontextprotocol/server-filesystem (npm, stdio) serving root, as
// an upstream the gateway launches.
func filesystemUpstream(t *testing.T, name, root string) config.Upstream {
	t.Helper()
	script := filepath.Join(testenv.NodeModules(t), "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	return config.Upstream{Name: name, Command: "node", Args: []string{script, root}}
}

// readyz returns the gateway's /readyz document.
func readyz(t *testing.T, addr string) (status string, ups map[string]proxy.UpstreamStatus, down []string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer resp.Body.Close()
	var doc struct {
		Status    string                          `json:"status"`
		Upstreams map[string]proxy.UpstreamStatus `json:"upstreams"`
		Down      []string                        `json:"upstreams_down"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("readyz: %v", err)
	}
	return doc.Status, doc.Upstreams, doc.Down
}

// One Go SDK client session on /mcp lists and calls the tools of server-everything (HTTP), a Go
// SDK server (HTTP) and server-filesystem (stdio, launched by the gateway), with the example
// bundle's policy per server. The filesystem server is killed mid-session: the others keep
// serving, /readyz names it down, the supervisor restarts it and the same session reads through
// it again. Every call is judged once (one audit event each), and Close stops the child.
func TestStdioUpstreamAggregate(t *testing.T) {
	ns := testenv.StartNATS(t)
	everything := testenv.StartEverything(t)
	goURL := testenv.StartGoServer(t, false)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join(root, "hello.txt")
	if err := os.WriteFile(hello, []byte("hello palisade from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startAggregate(t, ns.ClientURL(), testenv.ExampleBundle(t), "",
		config.Upstream{Name: "everything", URL: everything}, config.Upstream{Name: "go", URL: goURL},
		filesystemUpstream(t, "fs", root))
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()

	names := toolNames(t, cs)
	for _, want := range []string{"everything__echo", "go__echo", "fs__read_text_file", "fs__list_allowed_directories"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	readHello := func() {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs__read_text_file", Arguments: map[string]any{"path": hello}})
		if err != nil || r.IsError || !strings.Contains(text(r), "hello palisade from a file") {
			t.Fatalf("fs__read_text_file %s: %v %q", hello, err, textOrNil(r))
		}
	}
	echo := func(tool, want string) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "hello palisade"}})
		if err != nil || !strings.Contains(text(r), want) {
			t.Fatalf("%s: %v %q", tool, err, textOrNil(r))
		}
	}
	echo("go__echo", "Echo: hello palisade")
	echo("everything__echo", "hello palisade")
	readHello()
	for _, tool := range []string{"go__get-env", "everything__get-env"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"name": "HOME"}})
		if d := denied(t, err); d.Rule != "deny-get-env" {
			t.Fatalf("%s: deny data %+v", tool, d)
		}
	}
	// Outside its root: the server refuses, or a stage denies; the file never comes back.
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs__read_text_file", Arguments: map[string]any{"path": "/etc/passwd"}})
	if err == nil && !r.IsError {
		t.Fatalf("a read outside the root passed: %q", text(r))
	}
	if r != nil && strings.Contains(text(r), "root:") {
		t.Fatalf("a read outside the root returned the file: %q", text(r))
	}

	// Kill the child mid-session.
	_, ups, _ := readyz(t, g.Addr())
	pid := ups["fs"].PID
	if pid == 0 || ups["fs"].Status != proxy.StatusUp {
		t.Fatalf("readyz fs: %+v", ups["fs"])
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "/readyz to name fs down", func() bool {
		status, _, down := readyz(t, g.Addr())
		return status == "ready" && slices.Equal(down, []string{"fs"})
	})
	echo("go__echo", "Echo: hello palisade") // the others keep serving
	echo("everything__echo", "hello palisade")
	var newPID int
	testenv.Eventually(t, 30*time.Second, "the supervisor to restart fs", func() bool {
		_, ups, down := readyz(t, g.Addr())
		newPID = ups["fs"].PID
		return len(down) == 0 && ups["fs"].Status == proxy.StatusUp && newPID != 0 && newPID != pid
	})
	readHello() // the same client session, through the restarted child

	// Judged once each: fs read_text_file three times (two reads of hello, one outside).
	// The events are published asynchronously: wait until the third read's is on the stream
	// (events returns as soon as nine of any kind are), then count.
	var n int
	seen := map[string]string{}
	testenv.Eventually(t, 30*time.Second, "three fs read_text_file events", func() bool {
		n, seen = 0, map[string]string{}
		for _, ev := range events(t, ns.ClientURL(), 9) {
			seen[ev.Server+" "+ev.Tool] = ev.Action
			if ev.Server == "fs" && ev.Tool == "read_text_file" {
				n++
			}
		}
		return n >= 3
	})
	if n != 3 {
		t.Errorf("fs read_text_file: %d audit events, want 3 (one per call)", n)
	}
	for k, want := range map[string]string{"go echo": "allow", "everything echo": "allow", "go get-env": "deny", "everything get-env": "deny"} {
		if seen[k] != want {
			t.Errorf("audit %q: %q, want %q (all: %v)", k, seen[k], want, seen)
		}
	}

	// Close stops the child.
	cs.Close()
	g.Close(ctx)
	testenv.Eventually(t, 15*time.Second, "the fs child to exit on Close", func() bool {
		return errors.Is(syscall.Kill(newPID, 0), syscall.ESRCH)
	})
}

// tsStep is one line testdata/ts_client.mjs prints.
type tsStep struct {
	Step    string   `json:"step"`
	Tools   []string `json:"tools"`   // tools/list
	Text    string   `json:"text"`    // a call's text content
	IsError bool     `json:"isError"` // a call's result said isError
	Code    int      `json:"code"`    // a call's JSON-RPC error code
}

// The official TypeScript SDK client (node) does the same through /mcp: lists the tools of the
// three servers and calls each, with get-env denied and the stdio server's file read.
func TestStdioUpstreamTypeScriptClient(t *testing.T) {
	ns := testenv.StartNATS(t)
	everything := testenv.StartEverything(t)
	goURL := testenv.StartGoServer(t, false)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join(root, "hello.txt")
	if err := os.WriteFile(hello, []byte("hello palisade from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startAggregate(t, ns.ClientURL(), testenv.ExampleBundle(t), "",
		config.Upstream{Name: "everything", URL: everything}, config.Upstream{Name: "go", URL: goURL},
		filesystemUpstream(t, "fs", root))
	calls, _ := json.Marshal([]map[string]any{
		{"name": "fs__read_text_file", "arguments": map[string]any{"path": hello}},
		{"name": "go__echo", "arguments": map[string]any{"message": "hello palisade"}},
		{"name": "everything__echo", "arguments": map[string]any{"message": "hello palisade"}},
		{"name": "everything__get-env", "arguments": map[string]any{}},
		{"name": "go__get-env", "arguments": map[string]any{"name": "HOME"}},
	})
	cmd := exec.Command("node", filepath.Join("testdata", "ts_client.mjs"), testenv.NodeModules(t), "http://"+g.Addr()+"/mcp", string(calls))
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("ts client: %v\n%s\n%s", err, out, ee.Stderr)
		}
		t.Fatalf("ts client: %v", err)
	}
	steps := map[string]tsStep{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var st tsStep
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			t.Fatalf("ts client line %q: %v", line, err)
		}
		steps[st.Step] = st
	}
	for _, want := range []string{"everything__echo", "go__echo", "fs__read_text_file"} {
		if !slices.Contains(steps["tools/list"].Tools, want) {
			t.Fatalf("tools/list lacks %s: %v", want, steps["tools/list"].Tools)
		}
	}
	for tool, want := range map[string]string{"fs__read_text_file": "hello palisade from a file", "go__echo": "Echo: hello palisade", "everything__echo": "hello palisade"} {
		if st := steps[tool]; st.IsError || st.Code != 0 || !strings.Contains(st.Text, want) {
			t.Errorf("%s: %+v, want %q", tool, st, want)
		}
	}
	for _, tool := range []string{"everything__get-env", "go__get-env"} {
		if st := steps[tool]; st.Code != -32001 {
			t.Errorf("%s: %+v, want a -32001 denial", tool, st)
		}
	}
}

func textOrNil(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	return text(r)
}
