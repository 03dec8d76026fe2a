package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/added060/palisade/internal/testbuild"

	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/mcp"
)

// The fleet test runs everything as separate processes: a nats-server (testdata natsd, through
// host/bus), three `palisade serve` gateways following nats://PALISADE_BUNDLES, and the
// `palisade` CLI for keys, build and push. The third gateway reaches NATS through a TCP relay
// the test can cut, to show a gateway that loses NATS keeps serving and catches up.

var (
	fleetBinOnce sync.Once
	fleetBinDir  string
	fleetBinErr  error
)

// fleetBinaries builds palisade and natsd once per test binary.
func fleetBinaries(t *testing.T) (palisade, natsd string) {
	t.Helper()
	fleetBinOnce.Do(func() {
		fleetBinDir, fleetBinErr = testbuild.TempDir("palisade-fleet-bin-")
		if fleetBinErr != nil {
			return
		}
		root := testenv.RepoRoot(t)
		for _, b := range [][2]string{{"palisade", "./cmd/palisade"}, {"natsd", "./host/bundle/testdata/natsd"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(fleetBinDir, b[0]), b[1])
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				fleetBinErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if fleetBinErr != nil {
		t.Fatal(fleetBinErr)
	}
	return filepath.Join(fleetBinDir, "palisade"), filepath.Join(fleetBinDir, "natsd")
}

func fleetPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a child process whose output goes to a log file shown when the test fails.
type fleetProcess struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func fleetProc(t *testing.T, name, bin string, args ...string) *fleetProcess {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &fleetProcess{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); lf.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("---- %s log ----\n%s", name, fleetTail(string(b), 4000))
		}
	})
	return p
}

func (p *fleetProcess) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func fleetTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// relay forwards a loopback port to NATS; Cut drops every connection and stops listening,
// Restore listens again on the same port.
type fleetRelayT struct {
	t      *testing.T
	port   int
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func fleetRelay(t *testing.T, target string) *fleetRelayT {
	r := &fleetRelayT{t: t, port: fleetPort(t), target: target}
	r.Restore()
	t.Cleanup(r.Cut)
	return r
}

func (r *fleetRelayT) Restore() {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", r.port))
		if err == nil {
			r.mu.Lock()
			r.ln = ln
			r.mu.Unlock()
			go r.accept(ln)
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("relay listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *fleetRelayT) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, c, u)
		r.mu.Unlock()
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

func (r *fleetRelayT) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// gw is one gateway process.
type fleetGW struct {
	*fleetProcess
	addr, data string
}

func fleetGateway(t *testing.T, bin, name, natsURL, creds, pubKey string) *fleetGW {
	t.Helper()
	data := filepath.Join(t.TempDir(), name)
	addr := fmt.Sprintf("127.0.0.1:%d", fleetPort(t))
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
bundle: nats://PALISADE_BUNDLES
upstreams:
  - name: files
    url: http://127.0.0.1:9/mcp
nats:
  url: %s
  creds: %s
bundles:
  trusted_keys: [%s]
  resync: 1s
  wait: 5s
`, addr, data, natsURL, creds, pubKey)
	cfgPath := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return &fleetGW{fleetProcess: fleetProc(t, name, bin, "serve", "--config", cfgPath), addr: addr, data: data}
}

// version returns the version the gateway serves ("" when it answers without a bundle or not
// at all).
func (g *fleetGW) version() string {
	resp, err := http.Get("http://" + g.addr + "/readyz")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		Bundle *struct{ Version string } `json:"bundle"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil || st.Bundle == nil {
		return ""
	}
	return st.Bundle.Version
}

// cli runs the palisade binary and returns its stdout.
func fleetCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("palisade %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// fleetBundle writes an unsigned one-stage bundle whose single rule answers action.
func fleetBundle(t *testing.T, dir, version, action string) string {
	t.Helper()
	wasm, _ := testenv.ReadPlugin(t, "./plugins/rules")
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins", "rules.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	y := fmt.Sprintf("name: fleet\nversion: %q\ncoverage: {uncovered: pass}\nstages:\n  - name: rules\n    plugin: plugins/rules.wasm\n    config: {rules: [{id: fleet-%s, action: %s, reason: \"fleet %s\"}]}\n", version, version, action, version)
	if err := os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet test builds binaries and runs five processes")
	}
	palisade, natsd := fleetBinaries(t)
	work := t.TempDir()

	// Keys, and three bundles built, pinned and signed with the CLI.
	key := filepath.Join(work, "release.key")
	if out := fleetCLI(t, palisade, "keys", "generate", "-o", key); !strings.Contains(out, "key id") {
		t.Fatalf("keys generate: %s", out)
	}
	arch := map[string]string{}
	for _, v := range [][2]string{{"1", "allow"}, {"2", "deny"}, {"3", "deny"}} {
		dir := fleetBundle(t, filepath.Join(work, "b"+v[0]), v[0], v[1])
		fleetCLI(t, palisade, "bundle", "pin", dir)
		arch[v[0]] = filepath.Join(work, "b"+v[0]+".tar.gz")
		fleetCLI(t, palisade, "bundle", "build", dir, "-o", arch[v[0]], "--key", key)
		if out := fleetCLI(t, palisade, "bundle", "verify", arch[v[0]], "--trusted-key", key+".pub"); !strings.Contains(out, "signed by") {
			t.Fatalf("verify: %s", out)
		}
	}

	// NATS as its own process; v1 is pushed before any gateway runs.
	natsPort := fleetPort(t)
	natsURL := fmt.Sprintf("nats://127.0.0.1:%d", natsPort)
	fleetProc(t, "natsd", natsd, "-port", fmt.Sprint(natsPort), "-store", filepath.Join(work, "nats"))
	testenv.Eventually(t, 90*time.Second, "nats-server", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", natsPort))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	// natsd is host/bus's embedded server: it requires the role keys it generated in its store.
	creds := bus.KeyPath(filepath.Join(work, "nats"), bus.RoleGateway)
	adminCreds := bus.KeyPath(filepath.Join(work, "nats"), bus.RoleAdmin)
	testenv.Eventually(t, 90*time.Second, "natsd keys", func() bool { _, err := os.Stat(adminCreds); return err == nil })
	// The server's owner sets up streams and buckets: the gateway identity may only use them.
	fleetCLI(t, palisade, "nats", "setup", "--nats-url", natsURL, "--creds", adminCreds, "--signer", creds)
	fleetCLI(t, palisade, "bundle", "push", arch["1"], "--nats-url", natsURL, "--creds", adminCreds)

	// Three gateways started after the push pick up the current bundle; the third talks to NATS
	// through a relay the test can cut.
	rl := fleetRelay(t, fmt.Sprintf("127.0.0.1:%d", natsPort))
	gws := []*fleetGW{
		fleetGateway(t, palisade, "gw1", natsURL, creds, key+".pub"),
		fleetGateway(t, palisade, "gw2", natsURL, creds, key+".pub"),
		fleetGateway(t, palisade, "gw3", fmt.Sprintf("nats://127.0.0.1:%d", rl.port), creds, key+".pub"),
	}
	for _, g := range gws {
		testenv.Eventually(t, 90*time.Second, g.name+" on v1", func() bool { return g.version() == "1" })
	}

	// One push: all three switch. Time from push to the last switch.
	start := time.Now()
	fleetCLI(t, palisade, "bundle", "push", arch["2"], "--nats-url", natsURL, "--creds", adminCreds)
	pushed := time.Since(start)
	switched := map[string]time.Duration{}
	testenv.Eventually(t, 90*time.Second, "all gateways on v2", func() bool {
		for _, g := range gws {
			if _, ok := switched[g.name]; !ok && g.version() == "2" {
				switched[g.name] = time.Since(start)
			}
		}
		return len(switched) == len(gws)
	})
	last := time.Duration(0)
	for _, d := range switched {
		last = max(last, d)
	}
	t.Logf("fleet switch: `bundle push` process ran %v (start-up, pack, upload); switches after the push started: %v; last switch %v after push start, %v after the push returned",
		pushed.Round(time.Millisecond), switched, last.Round(time.Millisecond), (last - pushed).Round(time.Millisecond))

	// gw3 loses NATS: it keeps serving v2 (a call is still decided, by v2), while v3 reaches the
	// other two; when NATS returns it catches up.
	rl.Cut()
	if code, rule := fleetCall(t, gws[2]); code != mcp.CodeDenied || rule != "fleet-2" {
		t.Fatalf("gw3 without NATS: code %d rule %q, want a v2 deny", code, rule)
	}
	fleetCLI(t, palisade, "bundle", "push", arch["3"], "--nats-url", natsURL, "--creds", adminCreds)
	for _, g := range gws[:2] {
		testenv.Eventually(t, 90*time.Second, g.name+" on v3", func() bool { return g.version() == "3" })
	}
	if v := gws[2].version(); v != "2" {
		t.Fatalf("gw3 cut off from NATS serves %q, want 2", v)
	}
	rl.Restore()
	caught := time.Now()
	testenv.Eventually(t, 90*time.Second, "gw3 catching up to v3", func() bool { return gws[2].version() == "3" })
	t.Logf("gw3 caught up %v after NATS returned", time.Since(caught).Round(time.Millisecond))
	if code, rule := fleetCall(t, gws[2]); code != mcp.CodeDenied || rule != "fleet-3" {
		t.Fatalf("gw3 after catching up: code %d rule %q", code, rule)
	}

	// The admin CLI against gw1: list, roll back, activate again.
	admin := []string{"--url", "http://" + gws[0].addr, "--data-dir", gws[0].data}
	if out := fleetCLI(t, palisade, append([]string{"bundle", "ls"}, admin...)...); !strings.Contains(out, "*  fleet  3") {
		t.Fatalf("bundle ls:\n%s", out)
	}
	if out := fleetCLI(t, palisade, append([]string{"bundle", "rollback"}, admin...)...); !strings.Contains(out, "fleet 2") || gws[0].version() != "2" {
		t.Fatalf("rollback: %s (serving %s)", out, gws[0].version())
	}
	if out := fleetCLI(t, palisade, append([]string{"bundle", "activate", "1"}, admin...)...); !strings.Contains(out, "fleet 1") || gws[0].version() != "1" {
		t.Fatalf("activate 1: %s (serving %s)", out, gws[0].version())
	}
}

// call sends a tools/call to the gateway and returns the JSON-RPC error code and rule.
func fleetCall(t *testing.T, g *fleetGW) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs/read","arguments":{}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", g.name, err)
	}
	defer resp.Body.Close()
	var r struct {
		Error *struct {
			Code int
			Data struct{ Rule string }
		}
	}
	b, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(b, &r) != nil || r.Error == nil {
		t.Fatalf("%s answered %s", g.name, b)
	}
	return r.Error.Code, r.Error.Data.Rule
}
