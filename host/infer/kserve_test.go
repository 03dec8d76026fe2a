package infer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/infer/onnx"
	"github.com/added060/palisade/sdk/go/abi"
)

// v2Server is a KServe v2 / Triton-style HTTP server for one linear model. It
// speaks the real JSON wire format: POST /v2/models/{name}/infer with FP32
// inputs, answering named FP32 outputs, and {"error": ...} with a 4xx/5xx.
type v2Server struct {
	name  string
	lin   onnx.Linear
	calls atomic.Int64
	fail  atomic.Bool // answer 503
	stall atomic.Bool // wait until the client gives up
}

func (s *v2Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	writeErr := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(V2Error{Error: msg})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v2/models/"+s.name+"/infer" {
		writeErr(http.StatusNotFound, "no such model or path: "+r.URL.Path)
		return
	}
	if s.stall.Load() {
		// Read the body first: only then does net/http notice the client
		// hanging up and cancel r.Context().
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		return
	}
	if s.fail.Load() {
		writeErr(http.StatusServiceUnavailable, "model not ready")
		return
	}
	var req V2Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeErr(http.StatusBadRequest, err.Error())
		return
	}
	rows, err := s.rows(req.Inputs)
	if err != nil {
		writeErr(http.StatusBadRequest, err.Error())
		return
	}
	n := len(rows)
	probs := make([]float32, 0, n*s.lin.Classes)
	for _, r := range rows {
		for _, p := range s.lin.Probs(r.idx, r.val) {
			probs = append(probs, float32(p))
		}
	}
	data, _ := json.Marshal(probs)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(V2Response{
		ModelName: s.name, ModelVersion: "1",
		Outputs: []V2Tensor{{Name: onnx.OutputProbs, Shape: []int64{int64(n), int64(s.lin.Classes)}, Datatype: "FP32", Data: data}},
	})
}

type sparseRow struct {
	idx []int32
	val []float32
}

// rows decodes either one FP32 "features" [batch, dim] input (dense) or
// INT64 "indices" + FP32 "values" [batch, K] (sparse) into sparse rows.
func (s *v2Server) rows(in []V2Tensor) ([]sparseRow, error) {
	switch {
	case len(in) == 1 && in[0].Name == InputFeatures && in[0].Datatype == "FP32" && len(in[0].Shape) == 2 && in[0].Shape[1] == int64(s.lin.Dim):
		var x []float32
		if err := json.Unmarshal(in[0].Data, &x); err != nil {
			return nil, err
		}
		rows := make([]sparseRow, in[0].Shape[0])
		for i := range rows {
			for k, v := range x[i*s.lin.Dim : (i+1)*s.lin.Dim] {
				if v != 0 {
					rows[i].idx = append(rows[i].idx, int32(k))
					rows[i].val = append(rows[i].val, v)
				}
			}
		}
		return rows, nil
	case len(in) == 2 && in[0].Name == InputIndices && in[0].Datatype == "INT64" && in[1].Name == InputValues && in[1].Datatype == "FP32":
		var idx []int64
		var val []float32
		if err := json.Unmarshal(in[0].Data, &idx); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(in[1].Data, &val); err != nil {
			return nil, err
		}
		n, k := int(in[0].Shape[0]), int(in[0].Shape[1])
		if len(idx) != n*k || len(val) != n*k {
			return nil, fmt.Errorf("indices/values hold %d/%d values for [%d, %d]", len(idx), len(val), n, k)
		}
		rows := make([]sparseRow, n)
		for i := range rows {
			for j := range k {
				rows[i].idx = append(rows[i].idx, int32(idx[i*k+j]))
				rows[i].val = append(rows[i].val, val[i*k+j])
			}
		}
		return rows, nil
	}
	return nil, fmt.Errorf("want FP32 features [batch, %d], or INT64 indices + FP32 values [batch, K]", s.lin.Dim)
}

func TestKServeRemoteAndFallback(t *testing.T) {
	for _, format := range []string{FormatSparse, FormatDense} {
		t.Run(format, func(t *testing.T) { testKServeRemoteAndFallback(t, format) })
	}
}

func testKServeRemoteAndFallback(t *testing.T, format string) {
	spec, lin := testModelFormat(t, 512, format)
	srv := &v2Server{name: "remote-name", lin: lin}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	spec.Provider = ProviderKServe
	spec.KServe = KServeSpec{URL: hs.URL, Model: "remote-name", Timeout: 2 * time.Second}
	spec.MaxBatch = 1
	local := spec
	local.Name, local.Provider, local.KServe = "local", ProviderCPU, KServeSpec{}
	r := newTestRegistry(t, spec, local)

	infer := func(model string) abi.InferResponse {
		t.Helper()
		resp, err := r.Infer(context.Background(), abi.InferRequest{Model: model, Texts: testTexts})
		if err != nil {
			t.Fatalf("infer %s: %v", model, err)
		}
		return resp
	}
	want := infer("local")
	same := func(name string, got abi.InferResponse) {
		t.Helper()
		for i := range want.Results {
			if got.Results[i].Label != want.Results[i].Label {
				t.Errorf("%s text %d: label %q, local %q", name, i, got.Results[i].Label, want.Results[i].Label)
			}
			for l, p := range want.Results[i].Scores {
				if math.Abs(got.Results[i].Scores[l]-p) > 1e-5 {
					t.Errorf("%s text %d %s: %.7f, local %.7f", name, i, l, got.Results[i].Scores[l], p)
				}
			}
		}
	}

	same("remote", infer("test"))
	if srv.calls.Load() != 1 {
		t.Fatalf("server saw %d calls, want 1", srv.calls.Load())
	}
	st := r.Status().Models[0]
	if st.Active != ProviderKServe || st.RemoteCalls != 1 || st.RemoteFallbacks != 0 {
		t.Fatalf("after a remote call: %+v", st)
	}

	srv.fail.Store(true)
	same("fallback after 503", infer("test"))
	if st := r.Status().Models[0]; st.RemoteFallbacks != 1 {
		t.Errorf("after a 503: fallbacks = %d, want 1", st.RemoteFallbacks)
	}

	srv.fail.Store(false)
	srv.stall.Store(true)
	r.models["test"].spec.KServe.Timeout = 50 * time.Millisecond // bound the stalled call
	same("fallback after timeout", infer("test"))
	if st := r.Status().Models[0]; st.RemoteFallbacks != 2 {
		t.Errorf("after a timeout: fallbacks = %d, want 2", st.RemoteFallbacks)
	}
}

func TestKServeWithoutLocalFails(t *testing.T) {
	_, lin := testModelFormat(t, 64, FormatDense)
	srv := &v2Server{name: "m", lin: lin}
	srv.fail.Store(true)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	r, err := New(context.Background(), Options{Models: []ModelSpec{{
		Name: "m", Provider: ProviderKServe, KServe: KServeSpec{URL: hs.URL},
		Preprocessor: PreprocessorSpec{Dim: 64, Format: FormatDense}, Labels: testLabels,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Infer(context.Background(), abi.InferRequest{Model: "m", Texts: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "model not ready") {
		t.Errorf("remote-only model with a failing server: %v", err)
	}
	srv.fail.Store(false)
	resp, err := r.Infer(context.Background(), abi.InferRequest{Model: "m", Texts: []string{"x", "y"}})
	if err != nil || len(resp.Results) != 2 {
		t.Errorf("remote-only model: %v %+v", err, resp)
	}
}

// FuzzDecodeV2Output: any response body is rejected or yields exactly
// n × classes values; it never panics.
func FuzzDecodeV2Output(f *testing.F) {
	f.Add([]byte(`{"model_name":"m","outputs":[{"name":"probabilities","shape":[1,2],"datatype":"FP32","data":[0.25,0.75]}]}`), 1)
	f.Add([]byte(`{"outputs":[{"name":"probabilities","shape":[2,2],"datatype":"FP32","data":[1]}]}`), 2)
	f.Add([]byte(`{"outputs":[{"name":"probabilities","shape":[1,-3],"datatype":"FP32","data":[]}]}`), 1)
	f.Add([]byte(`{"outputs":[{"name":"other"}]}`), 1)
	f.Add([]byte(`{"outputs":`), 1)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		data, err := decodeV2Output(body, "probabilities", n)
		if err != nil {
			return
		}
		if n <= 0 || len(data)%n != 0 || len(data) == 0 {
			t.Fatalf("accepted %d values for %d texts", len(data), n)
		}
	})
}
