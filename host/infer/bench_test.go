package infer

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

// detectorRegistry opens the trained detector (make model) with the given
// batch bound and runtime. Benchmarks need it and fail, not skip, without it.
func detectorRegistry(b *testing.B, maxBatch int, runtime string) (*Registry, []string) {
	b.Helper()
	root := repoRoot(b)
	raw, err := os.ReadFile(filepath.Join(root, "models", "detector.yaml"))
	if err != nil {
		b.Fatalf("models/detector.yaml: %v (run make model)", err)
	}
	var spec ModelSpec
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		b.Fatal(err)
	}
	spec.MaxBatch, spec.Runtime = maxBatch, runtime
	r, err := New(context.Background(), Options{Models: []ModelSpec{spec}, BaseDir: filepath.Join(root, "build", "models"), LibraryPath: testLibrary(b)})
	if err != nil {
		b.Fatalf("%v (run make model)", err)
	}
	b.Cleanup(func() { r.Close() })
	if st := r.Status().Models[0]; !st.Available() {
		b.Fatalf("detector unavailable: %s", st.Reason)
	}
	f, err := os.Open(filepath.Join(root, "data", "split", "test.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() && len(texts) < 512 {
		var e struct{ Text string }
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			texts = append(texts, e.Text)
		}
	}
	return r, texts
}

func repoRoot(b testing.TB) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BenchmarkDetector measures one Infer call of 1 and of 32 texts (no
// micro-batching: the call is the batch), in Go (runtime auto) and in ONNX Runtime.
func BenchmarkDetector(b *testing.B) {
	for _, tc := range []struct {
		name        string
		n, maxBatch int
		runtime     string
	}{
		{"go/batch=1", 1, 1, RuntimeAuto}, {"go/batch=32", 32, 1, RuntimeAuto},
		{"ort/batch=1", 1, 1, RuntimeONNX}, {"ort/batch=32", 32, 1, RuntimeONNX}, {"ort/batch=1/via-batcher", 1, 32, RuntimeONNX},
	} {
		n := tc.n
		b.Run(tc.name, func(b *testing.B) {
			r, texts := detectorRegistry(b, tc.maxBatch, tc.runtime)
			var lat []time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				req := abi.InferRequest{Model: "detector-v1", Texts: texts[i%(len(texts)-n) : i%(len(texts)-n)+n]}
				i += n
				start := time.Now()
				if _, err := r.Infer(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			testenv.Latencies(lat).Report(b, "", "-µs", time.Microsecond)
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}

// BenchmarkConcurrent64 runs 64 callers of one text each: in Go (never batched), and in ONNX
// Runtime with micro-batching (max 32 texts, no wait: batches form from the queue) and without
// (each call its own session run).
func BenchmarkConcurrent64(b *testing.B) {
	for _, tc := range []struct {
		name     string
		maxBatch int
		runtime  string
	}{{"go", 32, RuntimeAuto}, {"ort/microbatch", 32, RuntimeONNX}, {"ort/nobatch", 1, RuntimeONNX}} {
		b.Run(tc.name, func(b *testing.B) {
			r, texts := detectorRegistry(b, tc.maxBatch, tc.runtime)
			const callers = 64
			var mu sync.Mutex
			var lat []time.Duration
			b.ResetTimer()
			var wg sync.WaitGroup
			per := (b.N + callers - 1) / callers
			for c := range callers {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					mine := make([]time.Duration, 0, per)
					for k := range per {
						req := abi.InferRequest{Model: "detector-v1", Texts: []string{texts[(c*per+k)%len(texts)]}}
						start := time.Now()
						if _, err := r.Infer(context.Background(), req); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}(c)
			}
			wg.Wait()
			b.StopTimer()
			testenv.Latencies(lat).Report(b, "", "-µs", time.Microsecond)
			b.ReportMetric(float64(per*callers)/b.Elapsed().Seconds(), "texts/s")
			st := r.Status().Models[0]
			if st.Batches > 0 {
				b.ReportMetric(float64(st.BatchedTexts)/float64(st.Batches), "texts/batch")
			}
		})
	}
}
