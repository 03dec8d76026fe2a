package infer

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestSpecYAML decodes a bundle's models: entry as host/bundle will.
func TestSpecYAML(t *testing.T) {
	src := `
name: detector-v1
file: detector-v1.onnx
sha256: abc
preprocessor: {kind: hashed-ngrams, format: sparse, dim: 32768}
labels: [benign, xss]
thresholds: {malicious: 0.4}
provider: kserve
kserve: {url: "http://triton:8000", model: det, timeout: 150ms}
max_batch: 16
max_wait: 2ms
`
	var s ModelSpec
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	s = s.withDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.KServe.Timeout != 150*time.Millisecond || s.MaxWait != 2*time.Millisecond || s.MaxBatch != 16 ||
		s.Thresholds["malicious"] != 0.4 || strings.Join(s.Inputs, ",") != "indices,values" || s.Outputs[0] != "probabilities" {
		t.Errorf("decoded %+v", s)
	}
}

func TestStatusText(t *testing.T) {
	spec, _ := testModel(t, 64)
	spec.Provider = ProviderCUDA
	r := newTestRegistry(t, spec)
	var b bytes.Buffer
	if err := r.Status().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cgo=true", "library=", "model test: provider=cuda active=cpu", "reason: cuda"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("doctor text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestDiagnose(t *testing.T) {
	st := Diagnose(testLibrary(t), true)
	if st.Library == "" || st.RuntimeVersion != "1.24.1" || !strings.HasPrefix(st.CUDA, "unavailable: ") {
		t.Errorf("Diagnose = %+v, want library 1.24.1 and cuda unavailable (no CUDA provider here)", st)
	}
	st = Diagnose("/nonexistent/libonnxruntime.so", false)
	if st.LibraryError == "" || st.Library != "" || st.CUDA != "" {
		t.Errorf("Diagnose(missing) = %+v", st)
	}
}

// TestCloseHammer closes the registry while 32 callers infer: every call
// ends with a result or ErrClosed (no crash, no hang), under -race.
func TestCloseHammer(t *testing.T) {
	spec, _ := testModel(t, 256)
	spec.MaxBatch = 8
	r := newTestRegistry(t, spec)
	var wg sync.WaitGroup
	started := make(chan struct{}, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; ; i++ {
				_, err := r.Infer(ctx, abi.InferRequest{Model: "test", Texts: []string{testTexts[i%len(testTexts)]}})
				if i == 0 {
					started <- struct{}{}
				}
				switch {
				case err == nil:
				case errors.Is(err, ErrClosed), errors.Is(err, ErrUnavailable):
					return
				default:
					t.Errorf("infer during close: %v", err)
					return
				}
			}
		}()
	}
	for range 32 {
		<-started
	}
	r.Close()
	wg.Wait()
}
