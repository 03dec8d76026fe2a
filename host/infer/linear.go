package infer

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/added060/palisade/host/infer/onnx"
)

// Runtimes: what evaluates a local model on the CPU (ModelSpec.Runtime).
const (
	// RuntimeAuto evaluates a linear softmax model written by tools/train (recognised by
	// onnx.ReadLinear: the file must re-encode byte for byte) in Go, and any other model with
	// ONNX Runtime. It is the default.
	RuntimeAuto = "auto"
	// RuntimeONNX always uses ONNX Runtime.
	RuntimeONNX = "onnxruntime"
)

// Names of the local backends (ModelStatus.Runtime).
const (
	runtimeGo  = "go"
	runtimeORT = "onnxruntime"
)

// linearBackend evaluates softmax(x·W + B) in Go, for the graphs onnx.LinearSoftmaxSparse
// (inputs indices int64[n,k], values float[n,k], pad index 0 value 0) and onnx.LinearSoftmax
// (input features float[n,dim]) build. It costs k·classes multiply-adds a text and no cgo
// call, against ONNX Runtime's fixed cost per session run (issue 27: 16 % of the full chain's
// CPU at 16 connections went to it), so its calls are not batched.
type linearBackend struct {
	l      onnx.Linear
	sparse bool
}

// newLinear returns a Go backend for model bytes when they are a linear model for the spec's
// inputs and outputs; nil (and why) when they are not.
func newLinear(data []byte, s ModelSpec) (*linearBackend, string) {
	l, sparse, err := onnx.ReadLinear(data)
	if err != nil {
		return nil, err.Error()
	}
	want := []string{onnx.InputFeatures}
	if sparse {
		want = []string{onnx.InputIndices, onnx.InputValues}
	}
	if !slices.Equal(s.Inputs, want) || !slices.Equal(s.Preprocessor.InputNames(), want) {
		return nil, fmt.Sprintf("inputs %v, preprocessor %v: the linear graph takes %v", s.Inputs, s.Preprocessor.InputNames(), want)
	}
	if len(s.Outputs) == 0 || s.Outputs[0] != onnx.OutputProbs {
		return nil, fmt.Sprintf("outputs %v: the linear graph's first is %q", s.Outputs, onnx.OutputProbs)
	}
	return &linearBackend{l: l, sparse: sparse}, ""
}

func (b *linearBackend) name() string { return ProviderCPU }
func (b *linearBackend) close() error { return nil }

func (b *linearBackend) run(_ context.Context, inputs []Tensor, n int) ([]float32, error) {
	c := b.l.Classes
	out := make([]float32, n*c)
	// A row's logits: on the stack for the few classes a linear model has.
	var zs [16]float64
	var z []float64
	if c <= len(zs) {
		z = zs[:c]
	} else {
		z = make([]float64, c)
	}
	if !b.sparse {
		if len(inputs) != 1 || len(inputs[0].Float32) != n*b.l.Dim {
			return nil, fmt.Errorf("linear model: want one float input of %d×%d values", n, b.l.Dim)
		}
		for i := range n {
			row := inputs[0].Float32[i*b.l.Dim : (i+1)*b.l.Dim]
			copy64(z, b.l.B)
			for k, v := range row {
				if v != 0 {
					b.add(z, k, v)
				}
			}
			softmax(out[i*c:(i+1)*c], z)
		}
		return out, nil
	}
	if len(inputs) != 2 || len(inputs[0].Int64) != len(inputs[1].Float32) || n == 0 || len(inputs[0].Int64)%n != 0 {
		return nil, fmt.Errorf("linear model: want indices and values of %d equal rows", n)
	}
	k := len(inputs[0].Int64) / n
	for i := range n {
		idx, val := inputs[0].Int64[i*k:(i+1)*k], inputs[1].Float32[i*k:(i+1)*k]
		copy64(z, b.l.B)
		for j, x := range idx {
			if x < 0 || x >= int64(b.l.Dim) {
				return nil, fmt.Errorf("linear model: feature index %d outside [0, %d)", x, b.l.Dim)
			}
			if val[j] != 0 {
				b.add(z, int(x), val[j])
			}
		}
		softmax(out[i*c:(i+1)*c], z)
	}
	return out, nil
}

// add adds v times W's row k to z.
func (b *linearBackend) add(z []float64, k int, v float32) {
	row := b.l.W[k*b.l.Classes : (k+1)*b.l.Classes]
	for c, w := range row {
		z[c] += float64(v) * float64(w)
	}
}

func copy64(dst []float64, src []float32) {
	for i, v := range src {
		dst[i] = float64(v)
	}
}

// softmax writes softmax(z) into dst.
func softmax(dst []float32, z []float64) {
	top := slices.Max(z)
	var sum float64
	for c, v := range z {
		z[c] = math.Exp(v - top)
		sum += z[c]
	}
	for c, v := range z {
		dst[c] = float32(v / sum)
	}
}
