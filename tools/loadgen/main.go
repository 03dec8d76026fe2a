// Command loadgen measures what the gateway adds: the same MCP tools/call traffic is sent to an
// upstream directly and through an in-process gateway, in one run, at 1 and 16 connections, and
// the latency percentiles and throughput are printed side by side with their ratios.
//
//	go run ./tools/loadgen -bundle build/bundle -requests 3000 [-everything]
//
// Upstreams: a fast server built with the official Go SDK (in process, JSON answers), and, with
// -everything, @modelcontextprotocol/server-everything from testdata/npm (a node process).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"
)

func main() {
	bundleDir := flag.String("bundle", "build/bundle", "bundle folder for the gateway")
	requests := flag.Int("requests", 3000, "requests per run")
	everything := flag.Bool("everything", true, "also measure server-everything (needs testdata/npm installed)")
	stages := flag.String("stages", "", "keep only these stages of the bundle (comma-separated), e.g. rules")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	dir := *bundleDir
	{
		var keep []string
		if *stages != "" {
			keep = strings.Split(*stages, ",")
		}
		d, err := onlyStages(dir, keep)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if err := run(dir, *requests, *everything); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// onlyStages copies a bundle folder, unsigned (the load run's gateway trusts no key), keeping
// only the named stages when keep is not empty (and then no fixtures, which may need the
// others), and pins it.
func onlyStages(src string, keep []string) (string, error) {
	dst, err := os.MkdirTemp("", "palisade-loadgen-bundle-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return "", err
	}
	os.Remove(filepath.Join(dst, "signature.json"))
	if len(keep) == 0 {
		return dst, nil
	}
	m, err := bundle.LoadManifest(dst)
	if err != nil {
		return "", err
	}
	var st []bundle.StageSpec
	for _, s := range m.Stages {
		if slices.Contains(keep, s.Name) {
			st = append(st, s)
		}
	}
	if len(st) == 0 {
		return "", fmt.Errorf("no stage of %s is named %v", src, keep)
	}
	m.Stages, m.Fixtures = st, ""
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dst, bundle.ManifestFile), b, 0o644); err != nil {
		return "", err
	}
	_, err = bundle.Pin(dst)
	return dst, err
}

type upstreamDef struct {
	name string
	url  string
}

func run(bundleDir string, requests int, everything bool) error {
	ups := []upstreamDef{{"go-sdk", startGoServer()}}
	if everything {
		u, stop, err := startEverything()
		if err != nil {
			return err
		}
		defer stop()
		ups = append(ups, upstreamDef{"everything", u})
	}
	var cfgUps []config.Upstream
	for _, u := range ups {
		cfgUps = append(cfgUps, config.Upstream{Name: u.name, URL: u.url})
	}
	dataDir, _ := os.MkdirTemp("", "palisade-loadgen-")
	defer os.RemoveAll(dataDir)
	g, err := gateway.New(context.Background(), gateway.Options{Logger: slog.New(slog.DiscardHandler), Config: config.Config{
		Listen: "127.0.0.1:0", DataDir: dataDir, Bundle: bundleDir, Upstreams: cfgUps, NATS: config.NATS{Port: -1},
	}})
	if err != nil {
		return err
	}
	defer g.Close(context.Background())
	if err := g.Start(context.Background()); err != nil {
		return err
	}
	stages := []string{}
	if m, err := bundle.LoadManifest(bundleDir); err == nil {
		for _, s := range m.Stages {
			stages = append(stages, s.Name)
		}
	}
	fmt.Printf("palisade load run: %d requests per cell, tools/call echo, stages %v\n\n", requests, stages)
	fmt.Printf("%-11s %-5s %-8s %9s %9s %10s | %9s %9s %10s | %7s %7s %7s\n",
		"upstream", "conns", "path", "p50 µs", "p99 µs", "req/s", "", "", "", "Δp50 µs", "Δp99 µs", "thr %")
	for _, u := range ups {
		for _, conns := range []int{1, 16} {
			d, err := load(u.url, conns, requests)
			if err != nil {
				return fmt.Errorf("%s direct: %w", u.name, err)
			}
			v, err := load("http://"+g.Addr()+"/mcp/"+u.name, conns, requests)
			if err != nil {
				return fmt.Errorf("%s via gateway: %w", u.name, err)
			}
			fmt.Printf("%-11s %-5d %-8s %9.0f %9.0f %10.0f | %9.0f %9.0f %10.0f | %7.0f %7.0f %6.0f%%\n",
				u.name, conns, "dir|gw", d.p50, d.p99, d.rps, v.p50, v.p99, v.rps, v.p50-d.p50, v.p99-d.p99, 100*v.rps/d.rps)
		}
	}
	fmt.Println("\ncolumns: direct p50/p99/throughput | via gateway p50/p99/throughput | added p50, added p99, gateway throughput as % of direct")
	return nil
}

type result struct{ p50, p99, rps float64 }

// session performs the MCP handshake and returns the session headers.
func session(c *http.Client, url string) (http.Header, error) {
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loadgen","version":"1"}}}`
	resp, err := post(c, url, nil, init)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Mcp-Protocol-Version", "2025-06-18")
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, err = post(c, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return h, nil
}

func post(c *http.Client, url string, h http.Header, body string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
	}
	return resp, nil
}

func load(url string, conns, n int) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns * 2, DialContext: (&net.Dialer{}).DialContext}
	c := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	hs := make([]http.Header, conns)
	for i := range hs {
		h, err := session(c, url)
		if err != nil {
			return result{}, err
		}
		hs[i] = h
	}
	// Warm up pools, caches and connections.
	for i := 0; i < 50; i++ {
		if err := call(c, url, hs[0], i); err != nil {
			return result{}, err
		}
	}
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			for i := range next {
				t := time.Now()
				if err := call(c, url, hs[w], i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if firstErr != nil {
		return result{}, firstErr
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(n-1))].Microseconds()) }
	return result{p50: pct(0.50), p99: pct(0.99), rps: float64(n) / el.Seconds()}, nil
}

func call(c *http.Client, url string, h http.Header, i int) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"load %d"}}}`, i+1, i)
	resp, err := post(c, url, h, body)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"result"`)) {
		return fmt.Errorf("no result: %s", b)
	}
	return nil
}

func startGoServer() string {
	s := mcp.NewServer(&mcp.Implementation{Name: "fast", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + a.Message}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(h)
	return srv.URL + "/mcp"
}

func startEverything() (string, func(), error) {
	js := filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(js); err != nil {
		return "", nil, fmt.Errorf("%s missing: run make setup", js)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", js, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if i > 300 {
			stop()
			return "", nil, fmt.Errorf("server-everything did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "http://" + addr + "/mcp", stop, nil
}
