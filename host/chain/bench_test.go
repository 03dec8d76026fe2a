package chain

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// working answers allow after hashing n bytes: a stage with some CPU work of its own.
type working struct{ buf []byte }

func (w working) Evaluate(context.Context, []byte) ([]byte, error) {
	sha256.Sum256(w.buf)
	return []byte(`{"action":"allow"}`), nil
}

// BenchmarkChainRequest is a request through a group of three stages (each hashing 16 KiB,
// about 10 µs) and a needs_prior stage, one caller at a time and 16 at once, with the group run
// as Evaluate chooses (stages on goroutines only as far as cores are idle) and always inline.
func BenchmarkChainRequest(b *testing.B) {
	w := working{buf: make([]byte, 16<<10)}
	for _, mode := range []string{"auto", "inline"} {
		for _, callers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/callers=%d", mode, callers), func(b *testing.B) {
				c, err := New(Options{Stages: []*Stage{
					{Name: "a", Request: true, Plugin: w}, {Name: "b", Request: true, Plugin: w}, {Name: "c", Request: true, Plugin: w},
					{Name: "risk", Request: true, NeedsPrior: true, Plugin: w},
				}})
				if err != nil {
					b.Fatal(err)
				}
				if mode == "inline" {
					c.procs = 0
				}
				args, _ := json.Marshal(map[string]string{"message": "hello"})
				b.ReportAllocs()
				b.SetParallelism((callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				if callers == 1 {
					for b.Loop() {
						if _, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "echo", Arguments: args}); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := c.Evaluate(context.Background(), &abi.Envelope{Phase: "request", Method: "tools/call", Tool: "echo", Arguments: args}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkDecodeVerdict decodes the example bundle's most common verdicts (verdictSeeds'
// first five): through DecodeVerdict (the fast path), and through encoding/json as before.
func BenchmarkDecodeVerdict(b *testing.B) {
	for _, path := range []string{"fast", "encoding_json"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				in := []byte(verdictSeeds[i%5])
				if path == "fast" {
					if _, err := DecodeVerdict(in); err != nil {
						b.Fatal(err)
					}
				} else {
					var v abi.Verdict
					if err := json.Unmarshal(in, &v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
