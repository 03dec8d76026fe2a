package infer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestBatcherGathers holds the first batch in the model call, queues five
// one-text jobs behind it and checks they run as one batch of five, each
// caller getting its own result. No timing is involved: the gather ends
// when the batch is full, and the wait bound is an hour.
func TestBatcherGathers(t *testing.T) {
	// maxWait 0 (opportunistic) takes what queued; an hour-long wait ends
	// when the batch is full. Both give [5 5] here.
	for _, wait := range []time.Duration{0, time.Hour} {
		t.Run(wait.String(), func(t *testing.T) { testBatcherGathers(t, wait) })
	}
}

func testBatcherGathers(t *testing.T, wait time.Duration) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	// Each text is one row of an int64 tensor holding its id; its row of
	// output (two values) echoes the id, so each caller can check it got its own rows.
	run := func(in []Tensor, n int) ([]float32, error) {
		mu.Lock()
		first := len(sizes) == 0
		sizes = append(sizes, n)
		mu.Unlock()
		if first {
			<-release
		}
		out := make([]float32, 2*n)
		for i := range n {
			out[2*i], out[2*i+1] = float32(in[0].Int64[i]), -float32(in[0].Int64[i])
		}
		return out, nil
	}
	b := newBatcher(5, wait, 1, run, nil)
	defer b.close()

	done := make(chan []float32, 6)
	do := func(ids ...int64) {
		in := []Tensor{{Name: "id", Shape: []int64{int64(len(ids)), 1}, Int64: ids}}
		res, err := b.do(context.Background(), in, len(ids))
		if err != nil {
			t.Error(err)
		}
		if len(res) != 2*len(ids) {
			t.Errorf("caller of %v got %d values, want %d", ids, len(res), 2*len(ids))
		}
		for i := 0; i+1 < len(res) && i/2 < len(ids); i += 2 {
			if res[i] != float32(ids[i/2]) || res[i+1] != -float32(ids[i/2]) {
				t.Errorf("caller of %v got %v for row %d", ids, res[i:i+2], i/2)
			}
		}
		done <- res
	}
	// Five texts fill the first batch at once.
	go do(0, 1, 2, 3, 4)
	testenv.Eventually(t, 10*time.Second, "one batch", func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
	q0 := b.queued.Load()
	for i := range 5 {
		go do(int64(10 + i))
	}
	// With maxWait 0 the first caller runs its batch itself and holds the one slot; a worker
	// may already hold the first of the queued jobs while it waits for the slot.
	testenv.Eventually(t, 10*time.Second, "five queued jobs", func() bool { return b.queued.Load() == q0+5 })
	close(release)
	got := map[float32]bool{}
	for range 6 {
		res := <-done
		for i := 0; i < len(res); i += 2 {
			got[res[i]] = true
		}
	}
	if len(got) != 10 {
		t.Errorf("results %v, want 10 distinct texts back", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(sizes) != "[5 5]" {
		t.Errorf("batch sizes %v, want [5 5]", sizes)
	}
}

func TestBatcherErrorsAndCancel(t *testing.T) {
	boom := errors.New("boom")
	b := newBatcher(4, time.Millisecond, 1, func([]Tensor, int) ([]float32, error) { return nil, boom }, nil)
	one := []Tensor{{Name: "x", Shape: []int64{1, 1}, Int64: []int64{1}}}
	if _, err := b.do(context.Background(), one, 1); !errors.Is(err, boom) {
		t.Errorf("error not passed to caller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.do(ctx, one, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: %v", err)
	}
	b.close()
	// After close, a submit that cannot be queued reports ErrClosed; one
	// that was queued may never be served, so bound it with a context.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 64 {
		if _, err := b.do(ctx, one, 1); errors.Is(err, ErrClosed) {
			return
		}
	}
	t.Error("batcher accepted work after close")
}

func TestConcatRows(t *testing.T) {
	a := []Tensor{
		{Name: "indices", Shape: []int64{1, 2}, Int64: []int64{7, 8}},
		{Name: "values", Shape: []int64{1, 2}, Float32: []float32{0.5, 0.25}},
	}
	b := []Tensor{
		{Name: "indices", Shape: []int64{2, 3}, Int64: []int64{1, 2, 3, 4, 0, 0}},
		{Name: "values", Shape: []int64{2, 3}, Float32: []float32{1, 2, 3, 4, 0, 0}},
	}
	got, err := concatRows([][]Tensor{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got[0].Shape, got[0].Int64) != "[3 3] [7 8 0 1 2 3 4 0 0]" {
		t.Errorf("indices = %v %v", got[0].Shape, got[0].Int64)
	}
	if fmt.Sprint(got[1].Shape, got[1].Float32) != "[3 3] [0.5 0.25 0 1 2 3 4 0 0]" {
		t.Errorf("values = %v %v", got[1].Shape, got[1].Float32)
	}
	if _, err := concatRows([][]Tensor{a, b[:1]}); err == nil {
		t.Error("concatRows accepted requests with different inputs")
	}
}

func TestUnavailable(t *testing.T) {
	spec, _ := testModel(t, 64)
	spec.Runtime = RuntimeONNX
	// A missing library (or a CGO_ENABLED=0 build) must not fail New: the
	// model reports unavailable and Infer fails with ErrUnavailable.
	r, err := New(context.Background(), Options{Models: []ModelSpec{spec}, LibraryPath: "/nonexistent/libonnxruntime.so"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := r.Status()
	if st.Models[0].Available() || st.LibraryError == "" || st.Cgo != CgoEnabled {
		t.Errorf("status %+v, want unavailable with a library error", st)
	}
	if _, err := r.Infer(context.Background(), abi.InferRequest{Model: "test", Texts: []string{"x"}}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("infer on unavailable model: %v", err)
	}
	if st := r.Status().Models[0]; st.Errors != 1 {
		t.Errorf("errors = %d, want 1", st.Errors)
	}
}

// TestLinearNeedsNoLibrary: with runtime auto, a linear model runs in Go without ONNX Runtime
// (the library is not even looked for), unbatched; the same file with runtime onnxruntime
// beside it reports unavailable, and each names its runtime in the doctor's text.
func TestLinearNeedsNoLibrary(t *testing.T) {
	spec, lin := testModel(t, 64)
	spec.MaxBatch = 8
	ort := spec
	ort.Name, ort.Runtime = "ort", RuntimeONNX
	r, err := New(context.Background(), Options{Models: []ModelSpec{spec}, LibraryPath: "/nonexistent/libonnxruntime.so"})
	if err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	if m := st.Models[0]; !m.Available() || m.Runtime != runtimeGo || st.LibraryError != "" || len(st.LibraryCandidates) != 0 {
		t.Errorf("status %+v, want the model on go and no library looked for", st)
	}
	resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "test", Texts: testTexts})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := NewPreprocessor(spec.Preprocessor)
	for i, text := range testTexts {
		want := lin.Probs(h.(*HashedNgrams).Sparse(text))
		for c, p := range want {
			if math.Abs(resp.Results[i].Scores[testLabels[c]]-p) > 1e-6 {
				t.Errorf("text %d %s: %.7f, reference %.7f", i, testLabels[c], resp.Results[i].Scores[testLabels[c]], p)
			}
		}
	}
	if m := r.Status().Models[0]; m.Batches != 1 || m.BatchedTexts != uint64(len(testTexts)) {
		t.Errorf("counters %+v, want one run of %d texts", m, len(testTexts))
	}
	if m := r.models["test"]; m.batch != nil {
		t.Error("a Go linear model has a batcher")
	}
	r.Close()

	r, err = New(context.Background(), Options{Models: []ModelSpec{spec, ort}, LibraryPath: "/nonexistent/libonnxruntime.so"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b strings.Builder
	if err := r.Status().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model test: provider=cpu active=cpu local=cpu runtime=go", "model ort: provider=cpu active=unavailable local=unavailable runtime= "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("doctor text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestBatcherLoneCallRunsInline: with maxWait 0, a call that finds a slot free and nothing
// queued runs its batch on its own goroutine, handing nothing to a worker (issue 27: two
// goroutine wake-ups a call at c=1); with maxWait > 0 every call goes through the workers.
func TestBatcherLoneCallRunsInline(t *testing.T) {
	run := func(in []Tensor, n int) ([]float32, error) { return make([]float32, 2*n), nil }
	for _, tc := range []struct {
		wait   time.Duration
		queued int64
	}{{0, 0}, {time.Millisecond, 3}} {
		b := newBatcher(8, tc.wait, 2, run, nil)
		for range 3 {
			in := []Tensor{{Name: "id", Shape: []int64{1, 1}, Int64: []int64{1}}}
			if res, err := b.do(context.Background(), in, 1); err != nil || len(res) != 2 {
				t.Fatalf("maxWait %s: %v %v", tc.wait, res, err)
			}
		}
		if got := b.queued.Load(); got != tc.queued {
			t.Errorf("maxWait %s: %d of 3 lone calls handed to a worker, want %d", tc.wait, got, tc.queued)
		}
		b.close()
	}
}
