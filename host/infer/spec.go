package infer

import (
	"fmt"
	"time"
)

// Providers: where a model runs.
const (
	ProviderCPU    = "cpu"    // ONNX Runtime on the CPU (default)
	ProviderCUDA   = "cuda"   // ONNX Runtime with the CUDA execution provider; falls back to CPU
	ProviderKServe = "kserve" // a remote KServe v2 / Triton endpoint; falls back to the local model
)

// ModelSpec declares one model, as a bundle's `models:` entry does.
type ModelSpec struct {
	// Name is what plugins ask for in InferRequest.Model.
	Name string `yaml:"name" json:"name"`
	// File is the .onnx path, relative to Options.BaseDir unless absolute.
	// It may be "" only for a kserve model without local fallback.
	File string `yaml:"file" json:"file"`
	// SHA256 is the hex digest of File; "" skips the check (logged as a warning).
	SHA256 string `yaml:"sha256" json:"sha256"`
	// Preprocessor turns texts into the model's inputs.
	Preprocessor PreprocessorSpec `yaml:"preprocessor" json:"preprocessor"`
	// Inputs are the model's input names, in the order the preprocessor
	// returns tensors; nil = the preprocessor's tensor names.
	Inputs []string `yaml:"inputs,omitempty" json:"inputs,omitempty"`
	// Outputs are the model's output names; the first must be float[batch,
	// len(Labels)] class probabilities. nil = ["probabilities"].
	Outputs []string `yaml:"outputs,omitempty" json:"outputs,omitempty"`
	// Labels name the classes in output order.
	Labels []string `yaml:"labels" json:"labels"`
	// Benign is the label meaning "nothing found"; "" = "benign".
	Benign string `yaml:"benign,omitempty" json:"benign,omitempty"`
	// Thresholds are operating points per label (for plugins and doctor);
	// "malicious" is the point on 1 - p(benign).
	Thresholds map[string]float64 `yaml:"thresholds,omitempty" json:"thresholds,omitempty"`
	// Provider is cpu (default), cuda or kserve.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// Runtime is what runs a local model on the CPU: auto (default) evaluates a linear softmax
	// model written by tools/train in Go and any other with ONNX Runtime; onnxruntime always
	// uses ONNX Runtime. The cuda provider always uses ONNX Runtime.
	Runtime string `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	// CUDADevice is the GPU ordinal for the cuda provider.
	CUDADevice int `yaml:"cuda_device,omitempty" json:"cuda_device,omitempty"`
	// KServe configures the kserve provider.
	KServe KServeSpec `yaml:"kserve,omitempty" json:"kserve,omitempty"`
	// Threads is ONNX Runtime's intra-op thread count; 0 = 1 (the gateway
	// runs many small requests; parallelism comes from callers).
	Threads int `yaml:"threads,omitempty" json:"threads,omitempty"`
	// MaxBatch bounds a micro-batch; 0 = 32; 1 turns batching off.
	MaxBatch int `yaml:"max_batch,omitempty" json:"max_batch,omitempty"`
	// MaxWait is how long the first text of a batch waits for company; 0 =
	// never wait: a batch is what queued while the workers were busy (no
	// added latency for a lone call).
	MaxWait time.Duration `yaml:"max_wait,omitempty" json:"max_wait,omitempty"`
}

// KServeSpec points a model at a KServe v2 (Open Inference Protocol) or Triton
// HTTP endpoint: POST {URL}/v2/models/{Model}/infer.
type KServeSpec struct {
	// URL is the server's base URL, e.g. http://triton:8000.
	URL string `yaml:"url" json:"url"`
	// Model is the name on the server; "" = ModelSpec.Name.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// Timeout bounds one remote call; 0 = 500ms. On timeout or error the
	// local model answers (when File is set).
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

func (s ModelSpec) withDefaults() ModelSpec {
	s.Preprocessor = s.Preprocessor.withDefaults()
	if s.Inputs == nil {
		s.Inputs = s.Preprocessor.InputNames()
	}
	if s.Outputs == nil {
		s.Outputs = []string{"probabilities"}
	}
	if s.Benign == "" {
		s.Benign = "benign"
	}
	if s.Provider == "" {
		s.Provider = ProviderCPU
	}
	if s.Runtime == "" {
		s.Runtime = RuntimeAuto
	}
	if s.Threads == 0 {
		s.Threads = 1
	}
	if s.MaxBatch == 0 {
		s.MaxBatch = 32
	}
	if s.KServe.Model == "" {
		s.KServe.Model = s.Name
	}
	if s.KServe.Timeout == 0 {
		s.KServe.Timeout = 500 * time.Millisecond
	}
	return s
}

// Validate names the first bad field of a spec (after defaults).
func (s ModelSpec) Validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("model: name is empty")
	case len(s.Labels) < 2:
		return fmt.Errorf("model %q: labels: need at least 2, have %d", s.Name, len(s.Labels))
	case s.File == "" && s.Provider != ProviderKServe:
		return fmt.Errorf("model %q: file is empty", s.Name)
	case s.Provider == ProviderKServe && s.KServe.URL == "":
		return fmt.Errorf("model %q: kserve.url is empty", s.Name)
	case s.MaxBatch < 1:
		return fmt.Errorf("model %q: max_batch %d < 1", s.Name, s.MaxBatch)
	}
	switch s.Provider {
	case ProviderCPU, ProviderCUDA, ProviderKServe, "":
	default:
		return fmt.Errorf("model %q: provider %q: %w", s.Name, s.Provider, ErrUnknownKind)
	}
	switch s.Runtime {
	case RuntimeAuto, RuntimeONNX, "":
	default:
		return fmt.Errorf("model %q: runtime %q: %w (want %s or %s)", s.Name, s.Runtime, ErrUnknownKind, RuntimeAuto, RuntimeONNX)
	}
	return nil
}
