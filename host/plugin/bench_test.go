package plugin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

// envelopeOf returns a tools/call envelope whose arguments hold about size bytes of text.
func envelopeOf(size int) []byte {
	msg := strings.Repeat("lorem ipsum dolor sit amet ", size/27+1)[:size]
	return []byte(fmt.Sprintf(`{"abi":"1.0","id":"01J","phase":"request","method":"tools/call","server":"everything","tool":"echo","arguments":{"message":%q,"path":"/home/dev/project/README.md"}}`, msg))
}

const benchRules = `{"rules":[` +
	`{"id":"r1","priority":1,"action":"deny","when":{"tool":["get-env"]}},` +
	`{"id":"r2","priority":2,"action":"deny","when":{"tool":["fs/*"],"arguments":{"path":["/etc/**"]}}},` +
	`{"id":"r3","priority":3,"action":"ask","when":{"server":["prod-*"]}},` +
	`{"id":"r4","priority":4,"action":"allow","when":{"tool":["echo"]}}]}`

// BenchmarkStage reports one plugin call (Extism overhead included) for the first-party stages
// and a no-op baseline, with a 1 KiB and a 64 KiB argument, as p50/p99 µs.
func BenchmarkStage(b *testing.B) {
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range []struct {
		name, pkg string
		cfg       map[string]string
		fast      bool
	}{
		{"noop", "./host/internal/testenv/misbehave", map[string]string{"config": `{"mode":"none"}`}, false},
		{"rules", "./plugins/rules", map[string]string{"config": "{}", "rules": benchRules}, false},
		{"rules-uninterruptible", "./plugins/rules", map[string]string{"config": "{}", "rules": benchRules}, true},
		{"injection", "./plugins/injection", map[string]string{"config": "{}"}, false},
		{"injection-uninterruptible", "./plugins/injection", map[string]string{"config": "{}"}, true},
		{"risk", "./plugins/risk", map[string]string{"config": "{}"}, false},
		{"risk-uninterruptible", "./plugins/risk", map[string]string{"config": "{}"}, true},
	} {
		wasm, _ := testenv.ReadPlugin(b, st.pkg)
		p, err := rt.Load(context.Background(), plugin.Spec{Name: st.name, Wasm: wasm, Config: st.cfg, Timeout: 5 * time.Second, InitTimeout: time.Minute, MaxPages: 1024, PoolSize: 1, Uninterruptible: st.fast, HostFunctions: hostfn.Build(st.name, nil, hostfn.Deps{})})
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range []int{1 << 10, 64 << 10} {
			env := envelopeOf(size)
			b.Run(fmt.Sprintf("%s/%dKiB", st.name, size>>10), func(b *testing.B) {
				var lat []time.Duration
				for b.Loop() {
					t := time.Now()
					if _, err := p.Evaluate(context.Background(), env); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				testenv.Latencies(lat).Report(b, "", "-µs", time.Microsecond)
			})
		}
		p.Close(context.Background())
	}
}

// BenchmarkCallOverhead is the host's cost per stage call: a no-op plugin (it takes its input
// and answers a constant verdict), untrusted, with a 1 KiB envelope, on the direct convention
// (each SDK's build) and on the Extism compatibility path (Extism's Go and AssemblyScript PDKs,
// hand-written WAT).
func BenchmarkCallOverhead(b *testing.B) {
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	env := envelopeOf(1 << 10)
	for _, c := range []struct{ name, pkg string }{
		{"go-extism-pdk", "./host/internal/testenv/extismpdk"},
		{"go-direct", "./plugins/injection/testdata/noop"},
	} {
		wasm, _ := testenv.ReadPlugin(b, c.pkg)
		benchCalls(b, rt, c.name, wasm, env, false)
	}
	for _, c := range []struct {
		name string
		cmds [][]string // run in a temp dir $T; the module is $T/m.wasm
	}{
		{"c-direct", [][]string{{"clang-14", "--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-mexec-model=reactor", "-o", "$T/m.wasm", "testdata/noop.c"}}},
		{"rust-direct", rustNoop()},
		{"as-extism-pdk", asNoop("extism")},
		{"as-direct", asNoop("direct")},
	} {
		if wasm := buildWith(b, c.cmds); wasm != nil {
			benchCalls(b, rt, c.name, wasm, env, false)
		}
	}
	benchCalls(b, rt, "wat-extism", wat(b, "testdata/extism_minimal.wat"), env, false)
	benchCalls(b, rt, "wat-direct", wat(b, "../../sdk/wat/minimal.wat"), env, false)
}

func rustNoop() [][]string {
	rustc := "/usr/bin/rustc" // Debian's, with the wasm32 std (examples/rust/Makefile)
	if r := os.Getenv("RUSTC"); r != "" {
		rustc = r
	}
	flags := []string{"--edition", "2021", "-O", "-C", "panic=abort", "--target", "wasm32-unknown-unknown"}
	return [][]string{
		append([]string{rustc, "--crate-type", "rlib", "--crate-name", "palisade", "-o", "$T/libpalisade.rlib", "../../sdk/rust/src/lib.rs"}, flags...),
		append([]string{rustc, "--crate-type", "cdylib", "--crate-name", "noop", "--extern", "palisade=$T/libpalisade.rlib", "-L", "$T", "-o", "$T/m.wasm", "testdata/noop.rs"}, flags...),
	}
}

// asNoop builds testdata/noop_CONV.ts with the examples' asc 0.28.20 (make setup-sdk installs
// it); --path finds @extism/as-pdk there for the Extism PDK build.
func asNoop(conv string) [][]string {
	return [][]string{{"../../examples/assemblyscript/node_modules/.bin/asc", "testdata/noop_" + conv + ".ts",
		"--outFile", "$T/m.wasm", "--optimize", "--use", "abort=testdata/noop_" + conv + "/abort",
		"--path", "../../examples/assemblyscript/node_modules"}}
}

// buildWith runs cmds ($T is a temp dir) and returns $T/m.wasm, or nil when a tool is missing.
func buildWith(b *testing.B, cmds [][]string) []byte {
	dir := b.TempDir()
	for _, c := range cmds {
		if _, err := exec.LookPath(c[0]); err != nil {
			b.Logf("%s not installed: skipped", c[0])
			return nil
		}
		args := make([]string, len(c)-1)
		for i, a := range c[1:] {
			args[i] = strings.ReplaceAll(a, "$T", dir)
		}
		if out, err := exec.Command(c[0], args...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	wasm, err := os.ReadFile(filepath.Join(dir, "m.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}

func benchCalls(b *testing.B, rt *plugin.Runtime, name string, wasm, env []byte, trusted bool) {
	p, err := rt.Load(context.Background(), plugin.Spec{Name: name, Wasm: wasm, Timeout: time.Second, InitTimeout: time.Minute, PoolSize: 1, Uninterruptible: trusted, HostFunctions: hostfn.Build(name, nil, hostfn.Deps{})})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		var lat []time.Duration
		for b.Loop() {
			t := time.Now()
			if _, err := p.Evaluate(context.Background(), env); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t))
		}
		testenv.Latencies(lat).Report(b, "", "-µs", time.Microsecond)
	})
}

// BenchmarkLoopStop measures how far past its timeout an untrusted looping plugin is stopped
// (the target is 10 ms), including the replacement of its instance by the next call.
func BenchmarkLoopStop(b *testing.B) {
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	wasm, _ := testenv.ReadPlugin(b, "./host/internal/testenv/misbehave")
	const timeout = 100 * time.Millisecond
	p, err := rt.Load(context.Background(), plugin.Spec{
		Name: "loop", Wasm: wasm, Timeout: timeout, PoolSize: 1,
		Config:        map[string]string{"config": `{"mode":"loop","when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	var over []time.Duration
	for b.Loop() {
		t := time.Now()
		if _, err := p.Evaluate(context.Background(), []byte(`{"tool":"bad"}`)); err == nil {
			b.Fatal("loop returned")
		}
		over = append(over, time.Since(t)-timeout)
		if _, err := p.Evaluate(context.Background(), []byte(`{"tool":"good"}`)); err != nil {
			b.Fatal(err)
		}
	}
	sort.Slice(over, func(i, j int) bool { return over[i] < over[j] })
	b.ReportMetric(float64(over[len(over)/2].Microseconds())/1e3, "p50-over-ms")
	b.ReportMetric(float64(over[len(over)-1].Microseconds())/1e3, "max-over-ms")
}

// BenchmarkInterruption decides whether the rewriter stays (README "Interrupting untrusted
// plugins"): one direct-convention call per iteration, as p50 µs, under each way of stopping
// a guest: "none" (trusted: no checks, abandoned at the timeout), "rewriter" (the default:
// instrument.go's checks) and "close-on-context-done" (uninstrumented, wazero's check at every
// loop header, which exits to Go; it misses loop-free recursion). Guests: testdata/spin.wat's
// tight loop ("loop", 2^20 iterations) and call loop ("calls", a function entry each), and the
// first-party rules plugin on a 1 KiB envelope.
func BenchmarkInterruption(b *testing.B) {
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: testenv.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	spin := wat(b, "testdata/spin.wat")
	rules, _ := testenv.ReadPlugin(b, "./plugins/rules")
	for _, g := range []struct {
		name string
		wasm []byte
		cfg  map[string]string
		in   []byte
	}{
		{"loop", spin, nil, []byte("l")},
		{"calls", spin, nil, []byte("c")},
		{"rules", rules, map[string]string{"config": "{}", "rules": benchRules}, envelopeOf(1 << 10)},
	} {
		for _, m := range []struct {
			name string
			spec func(plugin.Spec) plugin.Spec
		}{
			{"none", func(s plugin.Spec) plugin.Spec { s.Uninterruptible = true; return s }},
			{"rewriter", func(s plugin.Spec) plugin.Spec { return s }},
			{"close-on-context-done", plugin.WithCloseOnContextDone},
		} {
			p, err := rt.Load(context.Background(), m.spec(plugin.Spec{
				Name: g.name, Wasm: g.wasm, Config: g.cfg, Timeout: 10 * time.Second, InitTimeout: time.Minute,
				MaxPages: 1024, PoolSize: 1, HostFunctions: hostfn.Build(g.name, nil, hostfn.Deps{}),
			}))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(g.name+"/"+m.name, func(b *testing.B) {
				b.ReportAllocs()
				var lat []time.Duration
				for b.Loop() {
					t := time.Now()
					if _, err := p.Evaluate(context.Background(), g.in); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				testenv.Latencies(lat).Report(b, "", "-µs", time.Microsecond)
			})
			p.Close(context.Background())
		}
	}
}
