package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
)

// TestConformanceSuiteThroughGateway runs the official MCP conformance suite (its active server
// scenarios) against the npm server-everything directly and through a gateway with the example
// bundle in front of it. Every scenario that passes directly passes through the gateway, and
// dns-rebinding-protection passes through the gateway whatever the upstream does: the gateway
// checks Host and Origin itself (server-everything does not, so directly it fails that one).
func TestConformanceSuiteThroughGateway(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(t), "testdata", "conformance", "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "conformance")); err != nil {
		if os.Getenv("PALISADE_REQUIRE_NPM") != "" {
			t.Fatalf("the MCP conformance suite is not installed (%v): run `make setup-conformance`", err)
		}
		t.Skip("the MCP conformance suite is not installed; `make setup-conformance` installs it (PALISADE_REQUIRE_NPM=1 makes this a failure)")
	}
	ns := testenv.StartNATS(t)
	for _, server := range []struct {
		name  string
		start func(t testing.TB) string
	}{
		{"npm server-everything", testenv.StartEverything},
		{"Go SDK conformance everything-server", startGoConformanceServer},
	} {
		t.Run(server.name, func(t *testing.T) {
			up := server.start(t)
			g := startGateway(t, ns.ClientURL(), testenv.ExampleBundle(t), config.Upstream{Name: "everything", URL: up})
			conformanceThrough(t, bin, up, "http://"+g.Addr()+"/mcp")
		})
	}
}

// conformanceThrough runs the suite against up directly and through the gateway at through:
// every scenario that passes directly passes through, and dns-rebinding-protection passes
// through the gateway whatever the upstream does.
func conformanceThrough(t *testing.T, bin, up, throughURL string) {
	direct := runConformance(t, bin, up)
	through := runConformance(t, bin, throughURL)
	if len(direct) < 20 {
		t.Fatalf("the suite reported %d scenarios directly; want the active server suite (30+)", len(direct))
	}
	passed := 0
	for name, ok := range direct {
		if !ok {
			continue
		}
		passed++
		if gw, seen := through[name]; !seen || !gw {
			t.Errorf("%s passes directly but not through the gateway (reported: %v)", name, seen)
		}
	}
	if !through["dns-rebinding-protection"] {
		t.Errorf("dns-rebinding-protection fails through the gateway")
	}
	t.Logf("%d scenarios, %d pass directly; through the gateway dns-rebinding-protection passes (directly: %v)", len(direct), passed, direct["dns-rebinding-protection"])
}

// summaryLine is one line of the suite's summary: "✓ name: 1 passed, 0 failed".
var summaryLine = regexp.MustCompile(`^[✓✗] ([a-z0-9-]+): (\d+) passed, (\d+) failed$`)

// runConformance runs the suite's server scenarios against url and returns pass (no failed
// check) per scenario.
func runConformance(t *testing.T, bin, url string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), filepath.Join(bin, "conformance"), "server", "--url", url)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("conformance suite against %s did not finish: %v\n%s", url, ctx.Err(), out)
	}
	_ = err // the suite exits 1 when any scenario fails; the summary says which
	res := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := summaryLine.FindStringSubmatch(sc.Text()); m != nil {
			res[m[1]] = m[3] == "0"
		}
	}
	if len(res) == 0 {
		t.Fatalf("no summary from the conformance suite against %s:\n%s", url, out)
	}
	return res
}

// startGoConformanceServer builds and starts the Go SDK's conformance everything-server (the
// module's conformance/everything-server, pinned by go.mod) on a free port, stateful, and
// returns its MCP URL.
func startGoConformanceServer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	build.Dir = testenv.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the Go SDK conformance server: %v\n%s", err, out)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.Command(bin, "-http", addr, "-stateless=false")
	var logb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logb, &logb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testenv.Eventually(t, 30*time.Second, "the Go SDK conformance server listening", func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp"
}
