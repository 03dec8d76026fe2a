package scan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/sdk/go/abi"
)

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// noRuntime, given as the library to detectorRegistry, opens the models on ONNX Runtime from
// a library that does not exist: every call fails as unavailable.
const noRuntime = "/nonexistent/libonnxruntime.so"

// detectorRegistry opens the trained detector model (make model) on the ONNX
// Runtime library (make setup-onnxruntime). Tests fail, never skip, without
// them. lib "" = the fetched library.
func detectorRegistry(t testing.TB, lib string) (*infer.Registry, infer.ModelSpec) {
	t.Helper()
	r, specs := detectorModels(t, lib, "detector.yaml")
	return r, specs[0]
}

// detectorModels opens the trained models whose specs are the named files of models/ (make
// model), as detectorRegistry does.
func detectorModels(t testing.TB, lib string, specFiles ...string) (*infer.Registry, []infer.ModelSpec) {
	t.Helper()
	rt := ""
	if lib == noRuntime {
		// The trained models are linear: runtime auto evaluates them in Go and needs no
		// library. A stage without a runtime is one whose model needs ONNX Runtime.
		rt = infer.RuntimeONNX
	}
	return detectorModelsOn(t, lib, rt, specFiles...)
}

// detectorModelsOn is detectorModels with the models' runtime set ("" = the spec's).
func detectorModelsOn(t testing.TB, lib, runtime string, specFiles ...string) (*infer.Registry, []infer.ModelSpec) {
	t.Helper()
	root := repoRoot(t)
	var specs []infer.ModelSpec
	for _, f := range specFiles {
		raw, err := os.ReadFile(filepath.Join(root, "models", f))
		if err != nil {
			t.Fatal(err)
		}
		var spec infer.ModelSpec
		if err := yaml.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	for i := range specs {
		if runtime != "" {
			specs[i].Runtime = runtime
		}
	}
	if lib == "" {
		lib = os.Getenv(infer.LibraryEnv)
	}
	if lib == "" {
		lib = filepath.Join(root, "build", "ort", infer.LibraryFile)
	}
	r, err := infer.New(context.Background(), infer.Options{
		Models: specs, BaseDir: filepath.Join(root, "build", "models"), LibraryPath: lib,
	})
	if err != nil {
		t.Fatalf("open detector model: %v (run `make model`)", err)
	}
	t.Cleanup(func() { r.Close() })
	return r, specs
}

// inferVia answers like the infer host function (host/hostfn): JSON in,
// the registry, JSON out with errors as {"error": ...}.
func inferVia(r *infer.Registry) CallFunc {
	return func(raw []byte) ([]byte, error) {
		var req abi.InferRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, err
		}
		resp, err := r.Infer(context.Background(), req)
		if err != nil {
			resp = abi.InferResponse{Error: err.Error()}
		}
		return json.Marshal(resp)
	}
}
