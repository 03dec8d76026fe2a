package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/sdk/go/abi"
)

// benchSample measures Judge.Sample with the local provider: prompt building, normalization,
// hashing, provider call, strict parsing and (when cached) the cache. It reports p50/p99.
func benchSample(b *testing.B, cacheSize int, distinct int) {
	j, err := llm.New(llm.Options{CacheSize: cacheSize, Providers: []llm.ProviderConfig{{Kind: "local"}}})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]abi.SampleRequest, distinct)
	for i := range reqs {
		reqs[i] = abi.SampleRequest{
			Guidance:  "Writes outside the project need a human.",
			Tool:      "write_file",
			Server:    "filesystem",
			Arguments: json.RawMessage(fmt.Sprintf(`{"path":"/home/dev/project/file-%d.txt","content":"hello world, this is a small file body"}`, i)),
		}
	}
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := j.Sample(ctx, reqs[i%distinct]); err != nil {
			b.Fatal(err)
		}
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(t0))
		}
		i++
	}
	testenv.Latencies(lat).Report(b, "", "-ns", time.Nanosecond)
}

func BenchmarkSampleLocalUncached(b *testing.B) { benchSample(b, -1, 1024) }
func BenchmarkSampleLocalCached(b *testing.B)   { benchSample(b, 1024, 64) }
