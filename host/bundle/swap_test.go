package bundle_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestSwapUnderLoad swaps between two bundles with opposite decisions while workers send calls
// through the decision engine: no call fails, every decision comes wholly from one bundle (the
// rule ids of all its stages and the chain that decided name the same bundle), and every audit
// event names the bundle whose rules decided it.
func TestSwapUnderLoad(t *testing.T) {
	swaps := 100
	if testing.Short() || raceEnabled {
		swaps = 10 // the 100-swap run is TestSwapThroughGateway (host/gateway) and the non-race make target
	}
	f := newFixture(t, false)
	a := f.signed(t, "alpha", "1.0.0", alphaStages(), "allow")
	b := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
	ctx := context.Background()
	if _, _, err := f.m.Activate(ctx, a, "dir:a"); err != nil {
		t.Fatal(err)
	}
	rec := &checkedDecisions{}
	eng := engine.NewEngine(engine.EngineOptions{Active: f.active, Recorder: rec, Gateway: "gw"})

	var (
		stop     atomic.Bool
		calls    atomic.Int64
		failures atomic.Int64
		seen     sync.Map // bundle name → count
		wg       sync.WaitGroup
	)
	errs := make(chan string, 100)
	fail := func(format string, a ...any) {
		failures.Add(1)
		select {
		case errs <- fmt.Sprintf(format, a...):
		default:
		}
	}
	for w := range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				msg := &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(strconv.Itoa(i)), Method: "tools/call", Params: json.RawMessage(`{"name":"fs/read","arguments":{"w":` + strconv.Itoa(w) + `}}`)}
				env, err := mcp.NewEnvelope(msg, mcp.Context{Transport: "test", Server: "files"})
				if err != nil {
					fail("envelope: %v", err)
					continue
				}
				o, err := eng.Request(ctx, env)
				if err != nil {
					fail("request: %v", err)
					continue
				}
				calls.Add(1)
				name := o.Chain.Info().Name
				want := map[string]string{"alpha": abi.ActionAllow, "beta": abi.ActionDeny}[name]
				if o.Action != want {
					fail("bundle %s decided %s", name, o.Action)
				}
				if len(o.Decision.Stages) != 2 {
					fail("bundle %s: %d stage results", name, len(o.Decision.Stages))
				}
				for _, s := range o.Decision.Stages {
					if !strings.HasPrefix(s.Rule, name+"-") {
						fail("mixed decision: chain %s, stage %s rule %q", name, s.Stage, s.Rule)
					}
				}
				n, _ := seen.LoadOrStore(name, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
				o.Finish(ctx)
			}
		})
	}
	var chains []*chain.Chain
	for i := range swaps {
		dir := b
		if i%2 == 1 {
			dir = a
		}
		chains = append(chains, f.active.Load())
		if _, changed, err := f.m.Activate(ctx, dir, "swap"); err != nil || !changed {
			t.Fatalf("swap %d: changed=%v err=%v", i, changed, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if failures.Load() > 0 {
		t.Fatalf("%d failed calls of %d", failures.Load(), calls.Load())
	}
	for _, name := range []string{"alpha", "beta"} {
		if n, ok := seen.Load(name); !ok || n.(*atomic.Int64).Load() == 0 {
			t.Errorf("no call was decided by %s", name)
		}
	}
	// Every decision's audit event names the bundle whose rules made it.
	if n := rec.n.Load(); n != calls.Load() {
		t.Fatalf("%d decision events for %d calls", n, calls.Load())
	}
	if bad := rec.firstBad.Load(); bad != nil {
		t.Fatalf("%d events do not name the bundle whose rules decided them; the first: %s", rec.bad.Load(), *bad)
	}
	if err := f.m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i, c := range chains {
		select {
		case <-c.Closed():
		default:
			t.Fatalf("chain %d (%s) still open after drain", i, c.Info().Name)
		}
	}
	t.Logf("%d swaps, %d calls, no failures; alpha/beta events all consistent", swaps, calls.Load())
}

// checkedDecisions is a Recorder that checks each decision event as it arrives (it names the
// bundle whose rules made it) and keeps only counts: a run of this test makes near a million
// calls, and keeping every event made the test binary's heap 4 GB, its collector the slowest
// thing in the run.
type checkedDecisions struct {
	n, bad   atomic.Int64
	firstBad atomic.Pointer[string]
}

func (c *checkedDecisions) Record(_ context.Context, ev audit.Event) {
	if ev.Kind != audit.KindDecision {
		return
	}
	c.n.Add(1)
	if ev.Bundle == nil || !strings.HasPrefix(ev.Rule, ev.Bundle.Name+"-") || ev.Bundle.Digest == "" {
		c.bad.Add(1)
		msg := fmt.Sprintf("bundle %+v, rule %q", ev.Bundle, ev.Rule)
		c.firstBad.CompareAndSwap(nil, &msg)
	}
}

// TestSwapMemoryFlat swaps many times and checks RSS does not grow with the number of swaps
// (no compiled module or instance outlives its chain). PALISADE_SOAK=1 runs 1,000 swaps.
func TestSwapMemoryFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("RSS under the race detector says nothing about leaks: run without -race (make test-bundles)")
	}
	swaps := 100
	if os.Getenv("PALISADE_SOAK") != "" {
		swaps = 1000
	}
	f := newFixture(t, false)
	a := f.signed(t, "alpha", "1.0.0", alphaStages(), "allow")
	b := f.signed(t, "beta", "2.0.0", betaStages(), "deny")
	ctx := context.Background()
	swap := func(i int) {
		dir := a
		if i%2 == 1 {
			dir = b
		}
		if _, _, err := f.m.Activate(ctx, dir, "soak"); err != nil {
			t.Fatalf("swap %d: %v", i, err)
		}
		decide(t, f)
	}
	warm := 30
	for i := range warm {
		swap(i)
	}
	f.m.Close(ctx)
	runtime.GC()
	debug.FreeOSMemory()
	before := rssKiB(t)
	for i := range swaps {
		swap(warm + i)
	}
	f.m.Close(ctx)
	runtime.GC()
	debug.FreeOSMemory()
	after := rssKiB(t)
	growth := after - before
	t.Logf("RSS after %d warm-up swaps: %d KiB; after %d more swaps: %d KiB; growth %d KiB (%.1f KiB/swap)",
		warm, before, swaps, after, growth, float64(growth)/float64(swaps))
	// A leaked rules chain costs several MiB (two compiled modules and their instances), so a
	// leak shows as hundreds of MiB; allow 96 MiB of allocator noise.
	if growth > 96<<10 {
		t.Fatalf("RSS grew %d KiB over %d swaps", growth, swaps)
	}
}

func rssKiB(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: RSS unavailable on this OS")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	t.Fatal("VmRSS not found")
	return 0
}
