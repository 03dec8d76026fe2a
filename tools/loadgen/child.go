package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/added060/palisade/host/gateway"
)

// The gateways under load run as child processes of loadgen (this binary, re-executed with
// -child CONFIG), so the CPU time and RSS read from /proc/<pid> are the gateway's alone: the
// client and the Go SDK upstream stay in the parent. The child is wired like `palisade serve`
// (gateway.LoadFile, gateway.New with the file's sections) and also serves net/http/pprof on a
// loopback port of its own, never on the gateway's listener.

// childMain runs one gateway from the config file path until stdin closes or SIGTERM, printing
// "addr HOST:PORT" and "pprof HOST:PORT" on stdout once it serves.
func childMain(path string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := gateway.LoadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen child:", err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gateway.TuneRuntime() // as palisade serve does
	g, err := gateway.New(ctx, gateway.Options{Config: f.Config, Sections: f.Sections, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen child:", err)
		return 1
	}
	if err := g.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen child:", err)
		g.Close(context.Background())
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/heap", pprof.Index)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen child:", err)
		return 1
	}
	go http.Serve(l, mux)
	fmt.Printf("addr %s\npprof %s\n", g.Addr(), l.Addr())
	go func() { io.Copy(io.Discard, os.Stdin); stop() }() // the parent went away
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g.Close(cctx)
	return 0
}

// gatewayProc is a running child gateway.
type gatewayProc struct {
	name  string // full, rules...
	addr  string // host:port of /mcp
	pprof string // host:port of the child's pprof server
	cmd   *exec.Cmd
	stdin io.WriteCloser
	dir   string // its data dir and config
}

// gatewayConfig is the child's palisade.yaml: one upstream, embedded NATS on a random port,
// the bundle unsigned (the run's copy) and the local judge as in examples/palisade.yaml.
const gatewayConfig = `listen: 127.0.0.1:0
data_dir: %q
bundle: %q
bundles: {allow_unsigned: true}
upstreams:
%snats: {port: -1}
log: {level: warn}
llm:
  providers: [{name: local, kind: local}]
  preference: [local]
`

// childGOGC and childMemLimit are -gateway-gogc and -gateway-memlimit: GOGC and GOMEMLIMIT for
// the gateway processes ("" = theirs, gateway.TuneRuntime).
var childGOGC, childMemLimit string

// startGateway starts a child gateway serving bundleDir in front of ups.
func startGateway(name, bundleDir string, ups []upstreamDef) (*gatewayProc, error) {
	dir, err := os.MkdirTemp("", "palisade-loadgen-"+name+"-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "palisade.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, gatewayConfig, filepath.Join(dir, "data"), bundleDir, upstreamsYAML(ups)), 0o600); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &gatewayProc{name: name, dir: dir, cmd: exec.Command(self, "-child", cfg)}
	p.cmd.Stderr = os.Stderr
	if childGOGC != "" || childMemLimit != "" { // the gateways' collector only, not this process's
		p.cmd.Env = os.Environ()
		if childGOGC != "" {
			p.cmd.Env = append(p.cmd.Env, "GOGC="+childGOGC)
		}
		if childMemLimit != "" {
			p.cmd.Env = append(p.cmd.Env, "GOMEMLIMIT="+childMemLimit)
		}
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "addr":
			p.addr = v
		case "pprof":
			p.pprof = v
		}
		if p.addr != "" && p.pprof != "" {
			break
		}
	}
	if p.addr == "" || p.pprof == "" {
		p.stop()
		return nil, fmt.Errorf("gateway %s did not start", name)
	}
	go io.Copy(io.Discard, out)
	return p, nil
}

func upstreamsYAML(ups []upstreamDef) string {
	var b strings.Builder
	for _, u := range ups {
		fmt.Fprintf(&b, "  - {name: %s, url: %q}\n", u.name, u.url)
	}
	return b.String()
}

func (p *gatewayProc) url(upstream string) string { return "http://" + p.addr + "/mcp/" + upstream }

func (p *gatewayProc) stop() {
	p.stdin.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(25 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(p.dir)
}

// procStat is a process's CPU time (user+system) and resident set size, from /proc.
type procStat struct {
	cpu time.Duration
	rss int64 // bytes
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on Linux.
const clockTick = 100

func (p *gatewayProc) stat() (procStat, error) {
	pid := p.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// Fields after the command name (which may hold spaces) start at state, field 3.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	rssPages, _ := strconv.ParseInt(f[21], 10, 64)
	return procStat{cpu: time.Duration(ut+st) * time.Second / clockTick, rss: rssPages * int64(os.Getpagesize())}, nil
}

// memory is where a gateway's resident memory is: anonymous and file-backed RSS (/proc), the Go
// heap in use, what the Go runtime holds from the OS (heap, stacks and its own metadata; not
// all of it resident) and the plugins' linear memory (its /metrics).
type memory struct{ anon, file, heap, goSys, linear float64 } // bytes

func (p *gatewayProc) memory() (memory, error) {
	var m memory
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return m, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "RssAnon":
			m.anon = kb * 1024
		case "RssFile":
			m.file = kb * 1024
		}
	}
	g, err := scrapeGauges(p.addr, "go_memstats_heap_inuse_bytes", "go_memstats_sys_bytes", "palisade_plugin_linear_memory_bytes")
	if err != nil {
		return m, err
	}
	m.heap, m.goSys, m.linear = g["go_memstats_heap_inuse_bytes"], g["go_memstats_sys_bytes"], g["palisade_plugin_linear_memory_bytes"]
	return m, nil
}

// heapProfile saves the child's heap profile (what is live at the last collection) to file.
func (p *gatewayProc) heapProfile(file string) error {
	return p.saveProfile("http://"+p.pprof+"/debug/pprof/heap", file)
}

// cpuProfile fetches a CPU profile of the child for d into file.
func (p *gatewayProc) cpuProfile(d time.Duration, file string) error {
	return p.saveProfile(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprof, int(d.Seconds())), file)
}

// trace saves an execution trace of d (where a call waits: go tool trace -pprof=sched).
func (p *gatewayProc) trace(d time.Duration, file string) error {
	return p.saveProfile(fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", p.pprof, max(1, int(d.Seconds()))), file)
}

func (p *gatewayProc) saveProfile(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
