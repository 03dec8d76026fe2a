package infer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

func newTestRegistry(t testing.TB, specs ...ModelSpec) *Registry {
	t.Helper()
	r, err := New(context.Background(), Options{Models: specs, LibraryPath: testLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestLocalMatchesGoMath: both local runtimes — ONNX Runtime, and the Go evaluation that
// runtime auto picks for a linear model (issue 27) — give the float64 reference's
// probabilities, for sparse and dense features.
func TestLocalMatchesGoMath(t *testing.T) {
	for _, format := range []string{FormatSparse, FormatDense} {
		for rt, want := range map[string]string{RuntimeAuto: runtimeGo, RuntimeONNX: runtimeORT} {
			t.Run(format+"/"+rt, func(t *testing.T) { testLocalMatchesGoMath(t, format, rt, want) })
		}
	}
}

func testLocalMatchesGoMath(t *testing.T, format, rt, wantRuntime string) {
	spec, lin := testModelFormat(t, 1024, format)
	spec.Runtime = rt
	r := newTestRegistry(t, spec)
	if st := r.Status().Models[0]; st.Active != ProviderCPU || st.Runtime != wantRuntime {
		t.Fatalf("active = %q runtime %q (%s), want cpu on %s", st.Active, st.Runtime, st.Reason, wantRuntime)
	}
	resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "test", Texts: testTexts})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != len(testTexts) {
		t.Fatalf("%d results for %d texts", len(resp.Results), len(testTexts))
	}
	pre, _ := NewPreprocessor(spec.Preprocessor)
	h := pre.(*HashedNgrams)
	for i, text := range testTexts {
		want := lin.Probs(h.Sparse(text))
		got := resp.Results[i]
		best := 0
		for c, p := range want {
			if math.Abs(got.Scores[testLabels[c]]-p) > 1e-5 {
				t.Errorf("text %d label %s: onnx %.7f, go %.7f", i, testLabels[c], got.Scores[testLabels[c]], p)
			}
			if p > want[best] {
				best = c
			}
		}
		if got.Label != testLabels[best] {
			t.Errorf("text %d: label %q, want %q", i, got.Label, testLabels[best])
		}
	}
}

func TestBatchEqualsSingle(t *testing.T) {
	spec, _ := testModel(t, 2048)
	spec.Runtime = RuntimeONNX // a Go linear model is not batched
	single := spec
	single.Name, single.MaxBatch = "single", 1
	batched := spec
	batched.Name, batched.MaxBatch = "batched", 8
	r := newTestRegistry(t, single, batched)

	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s #%d", testTexts[i%len(testTexts)], i)
	}
	want := make([]abi.InferResult, len(texts))
	for i, text := range texts {
		resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "single", Texts: []string{text}})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = resp.Results[0]
	}
	// 64 concurrent callers of one or two texts each through the batcher.
	got := make([][]abi.InferResult, len(texts))
	var wg sync.WaitGroup
	errs := make(chan error, len(texts))
	for i := 0; i < len(texts); i += 1 + i%2 {
		n := 1 + i%2
		if i+n > len(texts) {
			n = len(texts) - i
		}
		wg.Add(1)
		go func(i, n int) {
			defer wg.Done()
			resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "batched", Texts: texts[i : i+n]})
			if err != nil {
				errs <- err
				return
			}
			for k := range n {
				got[i+k] = resp.Results[k : k+1]
			}
		}(i, n)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range texts {
		if len(got[i]) != 1 {
			t.Fatalf("text %d: no result", i)
		}
		g, w := got[i][0], want[i]
		if g.Label != w.Label {
			t.Errorf("text %d: batched label %q, single %q", i, g.Label, w.Label)
		}
		for label, p := range w.Scores {
			if math.Abs(g.Scores[label]-p) > 1e-6 {
				t.Errorf("text %d %s: batched %.7f, single %.7f", i, label, g.Scores[label], p)
			}
		}
	}
	st := r.Status().Models[1]
	if st.BatchedTexts != uint64(len(texts)) || st.Batches == 0 || st.Batches > st.Requests {
		t.Errorf("batched status: %+v", st)
	}
}

func TestCUDAFallsBackToCPU(t *testing.T) {
	spec, _ := testModel(t, 256)
	spec.Provider = ProviderCUDA
	r := newTestRegistry(t, spec)
	st := r.Status().Models[0]
	// This runtime (onnxruntime-node's CPU build) and this machine have no
	// CUDA: appending the provider must fail, be reported, and fall back.
	if st.Local != ProviderCPU || st.Active != ProviderCPU {
		t.Fatalf("status %+v, want cpu fallback", st)
	}
	if !strings.Contains(strings.ToLower(st.Reason), "cuda") {
		t.Errorf("reason %q does not say why cuda failed", st.Reason)
	}
	t.Logf("cuda fallback reason: %s", st.Reason)
	resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "test", Texts: testTexts[:2]})
	if err != nil || len(resp.Results) != 2 {
		t.Fatalf("infer after fallback: %v, %d results", err, len(resp.Results))
	}
}

func TestRegistryErrors(t *testing.T) {
	spec, _ := testModel(t, 128)
	r := newTestRegistry(t, spec)
	if _, err := r.Infer(context.Background(), abi.InferRequest{Model: "nope", Texts: []string{"x"}}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := r.Infer(context.Background(), abi.InferRequest{Model: "test", Texts: make([]string, 257)}); !errors.Is(err, ErrTooManyTexts) {
		t.Errorf("too many texts: %v", err)
	}
	resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "test"})
	if err != nil || len(resp.Results) != 0 {
		t.Errorf("no texts: %v %v", resp, err)
	}

	bad := spec
	bad.SHA256 = strings.Repeat("0", 64)
	if _, err := New(context.Background(), Options{Models: []ModelSpec{bad}, LibraryPath: testLibrary(t)}); !errors.Is(err, ErrChecksum) {
		t.Errorf("checksum mismatch: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*ModelSpec)
	}{
		{"no name", func(s *ModelSpec) { s.Name = "" }},
		{"one label", func(s *ModelSpec) { s.Labels = []string{"x"} }},
		{"bad provider", func(s *ModelSpec) { s.Provider = "tpu" }},
		{"kserve without url", func(s *ModelSpec) { s.Provider = ProviderKServe }},
		{"bad preprocessor", func(s *ModelSpec) { s.Preprocessor.Kind = "bpe" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec
			tc.edit(&s)
			if _, err := New(context.Background(), Options{Models: []ModelSpec{s}, LibraryPath: testLibrary(t)}); err == nil {
				t.Error("New accepted a bad spec")
			}
		})
	}

	r.Close()
	if _, err := r.Infer(context.Background(), abi.InferRequest{Model: "test", Texts: []string{"x"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}
