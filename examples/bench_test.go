package examples_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
)

// benchEnvelope is a tools/call envelope whose one argument makes it about size bytes. The text
// triggers no example (no secrets, no paths, an allowed tool), so every plugin scans all of it.
func benchEnvelope(size int) []byte {
	head := `{"abi":"1.0","id":"01JBENCH","phase":"request","time":"2026-11-22T10:00:00Z","transport":"http","method":"tools/call","request_id":7,"server":"everything","session":"bench","cwd":"/home/dev/project","tool":"echo","arguments":{"message":"`
	tail := `"}}`
	word := "lorem ipsum dolor sit amet consectetur "
	fill := strings.Repeat(word, size/len(word)+1)[:max(0, size-len(head)-len(tail))]
	return []byte(head + fill + tail)
}

// BenchmarkExamples measures one evaluate call per example through the real runtime (pooled
// instance, the envelope written into guest memory and the verdict read out included) with a
// 1 KiB and a 64 KiB envelope.
func BenchmarkExamples(b *testing.B) {
	ctx := context.Background()
	rt := newRuntime(b)
	for _, ex := range all {
		wasm := build(b, ex)
		p, err := rt.Load(ctx, plugin.Spec{
			Name:          ex.Lang,
			Wasm:          wasm,
			Config:        config(b, ex),
			Timeout:       5 * time.Second,
			PoolSize:      1,
			HostFunctions: hostfn.Build(ex.Lang, []string{hostfn.CapKV}, hostfn.Deps{KV: hostfn.NewMemKV()}),
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range []int{1 << 10, 64 << 10} {
			env := benchEnvelope(size)
			b.Run(fmt.Sprintf("%s/%dKiB", ex.Lang, size>>10), func(b *testing.B) {
				if _, err := p.Evaluate(ctx, env); err != nil {
					b.Fatal(err)
				}
				var lat []time.Duration
				b.ReportAllocs()
				b.SetBytes(int64(len(env)))
				for b.Loop() {
					t0 := time.Now()
					if _, err := p.Evaluate(ctx, env); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
		p.Close(ctx)
	}
}
