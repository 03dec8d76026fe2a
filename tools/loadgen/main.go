// Command loadgen measures what the gateway adds: the same MCP tools/call traffic is sent to an
// upstream directly, through a gateway with the whole bundle and through one with only the rules
// stage, in one run, at 1 and 16 connections. Per cell it prints latency percentiles,
// throughput, the ratio to direct, the added latency and the gateway process's CPU per request
// and RSS; then each stage's time as served (the gateway's own stage histograms during the
// cells) next to the same stage called by itself.
//
//	go run ./tools/loadgen -bundle build/bundle -duration 5s [-profile DIR] [-soak 100000] [-everything]
//
// Each gateway is a child process (this binary re-executed with -child), so /proc/<pid> gives its
// CPU and RSS alone. Upstreams: a fast server built with the official Go SDK (in this process,
// JSON answers), and, with -everything, @modelcontextprotocol/server-everything from
// testdata/npm (a node process).
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/added060/palisade/host/bundle"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"
)

func main() {
	bundleDir := flag.String("bundle", "build/bundle", "bundle folder for the gateways")
	duration := flag.Duration("duration", 5*time.Second, "length of each cell (when -requests is 0)")
	requests := flag.Int("requests", 0, "requests per cell instead of a duration (0 = use -duration)")
	connsFlag := flag.String("conns", "1,16", "connection counts, comma-separated")
	stages := flag.String("stages", "", "keep only these stages of the bundle in the full gateway (comma-separated)")
	only := flag.String("only", "rules", "stages of the second, lean gateway (comma-separated; empty = no second gateway)")
	everything := flag.Bool("everything", false, "also measure server-everything (needs testdata/npm installed)")
	profile := flag.String("profile", "", "folder for CPU profiles of each gateway process, one per cell")
	traceFor := flag.Duration("trace", 0, "with -profile: also an execution trace of this long per cell (0 = none)")
	iso := flag.Duration("isolated", time.Second, "time each stage by itself for this long per phase (0 = skip)")
	soak := flag.Int("soak", 0, "after the cells, send this many calls at the largest -conns to the full gateway and print its RSS as it goes")
	child := flag.String("child", "", "internal: run one gateway from this config file")
	flag.StringVar(&childGOGC, "gateway-gogc", "", "GOGC for the gateway processes only (\"\" = palisade's own default)")
	flag.StringVar(&childMemLimit, "gateway-memlimit", "", "GOMEMLIMIT for the gateway processes only, e.g. 256MiB or off (\"\" = palisade's own default)")
	flag.Parse()
	if *child != "" {
		os.Exit(childMain(*child))
	}
	var conns []int
	for _, c := range strings.Split(*connsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "loadgen: -conns %q: want positive integers\n", *connsFlag)
			os.Exit(2)
		}
		conns = append(conns, n)
	}
	r := runner{cell: cellSpec{d: *duration, n: *requests}, conns: conns, profile: *profile, trace: *traceFor, isolated: *iso, soak: *soak}
	if err := r.run(*bundleDir, split(*stages), split(*only), *everything); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// onlyStages copies a bundle folder, unsigned (the load run's gateway trusts no key), keeping
// only the named stages when keep is not empty (and then no fixtures, which may need the
// others, and only those of coverage.judge_with), and pins it.
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
	m.Coverage.JudgeWith = slices.DeleteFunc(m.Coverage.JudgeWith, func(n string) bool { return !slices.Contains(keep, n) })
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

// cellSpec is how long one cell runs: n requests, or for d when n is 0.
type cellSpec struct {
	d time.Duration
	n int
}

type runner struct {
	cell     cellSpec
	conns    []int
	profile  string        // folder for per-cell CPU profiles of the gateways; "" = none
	trace    time.Duration // with profile: an execution trace this long per cell
	isolated time.Duration // per stage and phase; 0 = skip
	soak     int           // calls for the RSS run; 0 = none
}

// variant is one gateway under load: its name and bundle copy.
type variant struct {
	name   string
	bundle string
	stages []string
	proc   *gatewayProc
}

// cellResult is one cell's client-side numbers and, through a gateway, the gateway's.
type cellResult struct {
	result
	cpuPerReq time.Duration // gateway process CPU per request; 0 for direct
	rss       int64         // gateway RSS after the cell
	stages    map[stageKey]*histogram
}

func (r runner) run(bundleDir string, stages, only []string, everything bool) error {
	ups := []upstreamDef{{"go-sdk", startGoServer()}}
	if everything {
		u, stop, err := startEverything()
		if err != nil {
			return err
		}
		defer stop()
		ups = append(ups, upstreamDef{"everything", u})
	}
	vs := []*variant{{name: "full"}}
	if len(stages) > 0 {
		vs[0].name = strings.Join(stages, "+")
	}
	if len(only) > 0 {
		vs = append(vs, &variant{name: strings.Join(only, "+")})
	}
	keeps := [][]string{stages, only}
	for i, v := range vs {
		d, err := onlyStages(bundleDir, keeps[i])
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		v.bundle = d
		if m, err := bundle.LoadManifest(d); err == nil {
			for _, s := range m.Stages {
				v.stages = append(v.stages, s.Name)
			}
		}
		if v.proc, err = startGateway(v.name, d, ups); err != nil {
			return err
		}
		defer v.proc.stop()
	}
	if r.profile != "" {
		if err := os.MkdirAll(r.profile, 0o755); err != nil {
			return err
		}
	}
	what := fmt.Sprintf("%d requests", r.cell.n)
	if r.cell.n == 0 {
		what = r.cell.d.String()
	}
	fmt.Printf("palisade load run: tools/call echo, %s per cell; gateways are child processes (CPU and RSS from /proc/<pid>)\n", what)
	for _, v := range vs {
		fmt.Printf("  %-6s stages %v\n", v.name, v.stages)
	}
	fmt.Printf("\n%-11s %5s %-8s %8s %8s %8s %6s %8s %8s %9s %7s\n",
		"upstream", "conns", "path", "p50 µs", "p99 µs", "req/s", "ratio", "+p50 µs", "+p99 µs", "cpu/req µs", "rss MB")
	served := map[string]map[int]map[stageKey]*histogram{}
	for _, u := range ups {
		for _, c := range r.conns {
			d, err := load(u.url, c, r.cell)
			if err != nil {
				return fmt.Errorf("%s direct: %w", u.name, err)
			}
			fmt.Printf("%-11s %5d %-8s %8.0f %8.0f %8.0f %6s %8s %8s %9s %7s\n", u.name, c, "direct", d.p50, d.p99, d.rps, "1.00", "", "", "", "")
			d.note()
			for _, v := range vs {
				g, err := r.through(v, u, c)
				if err != nil {
					return fmt.Errorf("%s via gateway %s: %w", u.name, v.name, err)
				}
				fmt.Printf("%-11s %5d %-8s %8.0f %8.0f %8.0f %6.2f %8.0f %8.0f %9.0f %7.0f\n", u.name, c, v.name, g.p50, g.p99, g.rps,
					g.rps/d.rps, g.p50-d.p50, g.p99-d.p99, float64(g.cpuPerReq.Microseconds()), float64(g.rss)/(1<<20))
				g.note()
				if u.name == ups[0].name {
					if served[v.name] == nil {
						served[v.name] = map[int]map[stageKey]*histogram{}
					}
					served[v.name][c] = g.stages
				}
			}
		}
	}
	fmt.Println("\nratio: gateway throughput / direct; +p50, +p99: added latency; cpu/req: gateway process user+system CPU (/proc/<pid>/stat) / requests")
	var iso map[stageKey][2]time.Duration
	if r.isolated > 0 {
		var err error
		if iso, err = isolated(context.Background(), vs[0].bundle, r.isolated); err != nil {
			return fmt.Errorf("isolated stages: %w", err)
		}
	}
	r.printStages(vs, ups[0].name, served, iso)
	if r.soak > 0 {
		return r.runSoak(vs[0], ups[0])
	}
	return nil
}

// through runs one cell through gateway v and reads the gateway's CPU, RSS and stage histograms
// around it.
func (r runner) through(v *variant, u upstreamDef, c int) (cellResult, error) {
	before, err := scrapeStages(v.proc.addr)
	if err != nil {
		return cellResult{}, err
	}
	s0, err := v.proc.stat()
	if err != nil {
		return cellResult{}, err
	}
	var prof chan error
	if r.profile != "" && r.cell.n == 0 {
		prof = make(chan error, 1)
		go func() {
			name := filepath.Join(r.profile, fmt.Sprintf("%s-%s-c%d.pprof", v.name, u.name, c))
			for i := 2; exists(name); i++ { // the same cell again (-conns 16,16)
				name = filepath.Join(r.profile, fmt.Sprintf("%s-%s-c%d-%d.pprof", v.name, u.name, c, i))
			}
			if r.trace > 0 {
				go func() { // a trace beside the profile; its error is only reported
					if err := v.proc.trace(r.trace, strings.TrimSuffix(name, ".pprof")+".trace"); err != nil {
						fmt.Fprintln(os.Stderr, "loadgen: trace:", err)
					}
				}()
			}
			prof <- v.proc.cpuProfile(r.cell.d, name)
		}()
	}
	res, err := load(v.proc.url(u.name), c, r.cell)
	if err != nil {
		return cellResult{}, err
	}
	s1, err := v.proc.stat()
	if err != nil {
		return cellResult{}, err
	}
	after, err := scrapeStages(v.proc.addr)
	if err != nil {
		return cellResult{}, err
	}
	if prof != nil {
		if err := <-prof; err != nil {
			return cellResult{}, fmt.Errorf("profile: %w", err)
		}
	}
	out := cellResult{result: res, rss: s1.rss, stages: stageDelta(before, after)}
	if res.n > 0 {
		out.cpuPerReq = (s1.cpu - s0.cpu) / time.Duration(res.n+res.warm)
	}
	return out, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// printStages prints each stage's p50 and mean as served (the gateway's own histogram during
// the cells) next to its p50 called by itself.
func (r runner) printStages(vs []*variant, upstream string, served map[string]map[int]map[stageKey]*histogram, iso map[stageKey][2]time.Duration) {
	fmt.Printf("\nstage times (%s upstream): served = palisade_stage_duration_seconds of the gateway during the cell (p50 interpolated in its buckets, and the mean); isolated = the stage alone in this process, one call at a time, p50, back to back and paced (one call per millisecond: caches cooled as between served calls); (gateway) forwarded = palisade_gateway_overhead_seconds: the gateway's own time a request, from its arrival to its answer sent, less the time spent waiting on the upstream\n", upstream)
	fmt.Printf("%-6s %-12s %-8s", "gw", "stage", "phase")
	for _, c := range r.conns {
		fmt.Printf(" %14s %9s", fmt.Sprintf("c=%d p50 µs", c), "mean µs")
	}
	fmt.Printf(" %12s %10s\n", "isolated µs", "paced µs")
	for _, v := range vs {
		var keys []stageKey
		for _, c := range r.conns {
			for k := range served[v.name][c] {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.phase != b.phase {
				return a.phase < b.phase // request before response
			}
			return slices.Index(v.stages, a.stage) < slices.Index(v.stages, b.stage)
		})
		for _, k := range keys {
			fmt.Printf("%-6s %-12s %-8s", v.name, k.stage, k.phase)
			for _, c := range r.conns {
				h := served[v.name][c][k]
				if h == nil {
					fmt.Printf(" %14s %9s", "-", "-")
					continue
				}
				fmt.Printf(" %14.0f %9.0f", h.quantile(0.5)*1e6, h.sum/h.count*1e6)
			}
			if d, ok := iso[k]; ok {
				fmt.Printf(" %12d %10d\n", d[0].Microseconds(), d[1].Microseconds())
			} else {
				fmt.Printf(" %12s %10s\n", "-", "-")
			}
		}
	}
}

// runSoak sends n calls through v at the largest connection count and prints the gateway's RSS
// every tenth of the way: what grows with the number of calls.
func (r runner) runSoak(v *variant, u upstreamDef) error {
	c := slices.Max(r.conns)
	st, err := v.proc.stat()
	if err != nil {
		return err
	}
	fmt.Printf("\nRSS of gateway %s over %d calls at c=%d (after the cells: %.0f MB); anon and file: resident anonymous and file-backed memory; heap: Go heap in use; go sys: what the Go runtime holds from the OS; guest: the plugins' linear memory (outside the Go runtime, within anon)\n%10s %8s %8s %8s %8s %8s %8s %8s %9s\n",
		v.name, r.soak, c, float64(st.rss)/(1<<20), "calls", "rss MB", "anon MB", "file MB", "heap MB", "go sys", "guest MB", "req/s", "cpu/req µs")
	step := max(r.soak/10, 1)
	for done := 0; done < r.soak; done += step {
		s0, _ := v.proc.stat()
		res, err := load(v.proc.url(u.name), c, cellSpec{n: step})
		if err != nil {
			return err
		}
		s1, err := v.proc.stat()
		if err != nil {
			return err
		}
		m, err := v.proc.memory()
		if err != nil {
			return err
		}
		const mb = 1 << 20
		fmt.Printf("%10d %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %9.0f\n", done+step, float64(s1.rss)/mb, m.anon/mb, m.file/mb, m.heap/mb, m.goSys/mb, m.linear/mb,
			res.rps, float64(((s1.cpu - s0.cpu) / time.Duration(res.n+res.warm)).Microseconds()))
		res.note()
	}
	if r.profile != "" {
		name := filepath.Join(r.profile, v.name+"-soak-heap.pprof")
		if err := v.proc.heapProfile(name); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
		fmt.Printf("heap profile at the end: %s\n", name)
	}
	per, err := scrapeStageMemory(v.proc.addr)
	if err != nil {
		return err
	}
	fmt.Printf("linear memory by stage at the end (palisade_stage_linear_memory_bytes, instances):")
	for _, s := range per {
		fmt.Printf(" %s %.1f MiB (%d)", s.stage, s.bytes/(1<<20), s.instances)
	}
	fmt.Println()
	return nil
}

type result struct {
	p50, p99, rps float64
	n             int    // measured requests
	warm          int    // warm-up requests before them
	refused       int    // of n, answered with a JSON-RPC error
	sample        string // one of them
}

// note prints how many of the cell's calls were refused, if any.
func (r result) note() {
	if r.refused > 0 {
		fmt.Printf("      %d of %d calls answered with an error, e.g. %s\n", r.refused, r.n, r.sample)
	}
}

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

// warmup is the number of calls before a cell's measured ones (pools, caches, connections).
const warmup = 50

func load(url string, conns int, cell cellSpec) (result, error) {
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
	for i := 0; i < warmup; i++ {
		if err := call(c, url, hs[0], i); err != nil && !errors.Is(err, errRefused) {
			return result{}, err
		}
	}
	lats := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var refused int
	var sample string
	var next atomic.Int64
	start := time.Now()
	deadline := start.Add(cell.d)
	for w := range conns {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if cell.n > 0 && i >= cell.n || cell.n == 0 && time.Now().After(deadline) {
					return
				}
				t := time.Now()
				if err := call(c, url, hs[w], i); err != nil {
					mu.Lock()
					if !errors.Is(err, errRefused) {
						firstErr = cmp.Or(firstErr, err)
						mu.Unlock()
						return
					}
					// An answer, counted: a stage timing out under load fails closed.
					refused++
					sample = cmp.Or(sample, err.Error())
					mu.Unlock()
				}
				lats[w] = append(lats[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if firstErr != nil {
		return result{}, firstErr
	}
	lat := slices.Concat(lats...)
	n := len(lat)
	if n == 0 {
		return result{}, fmt.Errorf("%s: no call completed", url)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(n-1))].Microseconds()) }
	return result{p50: pct(0.50), p99: pct(0.99), rps: float64(n) / el.Seconds(), n: n, warm: warmup + 2*conns, refused: refused, sample: sample}, nil
}

// errRefused marks a call answered with a JSON-RPC error (a deny): counted, not fatal.
var errRefused = errors.New("answered with an error")

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
		return fmt.Errorf("%w: %.300s", errRefused, b)
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
