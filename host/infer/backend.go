package infer

import "context"

// backend runs a model on already-encoded inputs.
type backend interface {
	// run returns the first output (class probabilities) row-major, n rows.
	run(ctx context.Context, inputs []Tensor, n int) ([]float32, error)
	// name is the provider actually in use ("cpu", "cuda", "kserve").
	name() string
	close() error
}

// localOptions configures a local ONNX Runtime session.
type localOptions struct {
	libPath  string
	model    []byte
	inputs   []string
	outputs  []string
	threads  int
	cuda     bool
	device   int
	warnings func(msg string, err error) // called when CUDA falls back to CPU
}
