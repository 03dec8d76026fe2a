//go:build !cgo

package infer

import "context"

// CgoEnabled reports whether this binary can run ONNX Runtime at all.
const CgoEnabled = false

// RuntimeVersion is the loaded ONNX Runtime's version, or "" before loading.
func RuntimeVersion() string { return "" }

type ortBackend struct{}

func newLocal(localOptions) (*ortBackend, error) { return nil, errNoCgo }

func (*ortBackend) name() string { return ProviderCPU }

func (*ortBackend) run(context.Context, []Tensor, int) ([]float32, error) { return nil, errNoCgo }

func (*ortBackend) close() error { return nil }

func initORT(string) error { return errNoCgo }

func probeCUDA() error { return errNoCgo }
