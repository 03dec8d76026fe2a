package onnx

import (
	"fmt"
	"math"
	"sort"
)

// Names of the inputs and outputs of a LinearSoftmax model.
const (
	InputFeatures = "features"      // float[batch, Dim]
	OutputProbs   = "probabilities" // float[batch, Classes]
	OutputLogits  = "logits"        // float[batch, Classes]
)

// Linear is a linear classifier: logits = features · W + B, probabilities =
// softmax(logits). W is row-major [Dim][Classes].
type Linear struct {
	Dim     int
	Classes int
	W       []float32
	B       []float32
}

// LinearSoftmax builds the ONNX model for l: input "features" float[batch,Dim]
// → MatMul(W) → Add(B) → "logits" → Softmax(axis=-1) → "probabilities"
// float[batch,Classes], at opset 13. meta becomes the model's metadata_props
// (labels, preprocessor parameters, training metrics).
func LinearSoftmax(l Linear, name string, meta map[string]string) (Model, error) {
	if l.Dim <= 0 || l.Classes <= 0 {
		return Model{}, fmt.Errorf("onnx: linear model needs dim and classes > 0, have %d, %d", l.Dim, l.Classes)
	}
	if len(l.W) != l.Dim*l.Classes || len(l.B) != l.Classes {
		return Model{}, fmt.Errorf("onnx: linear model: W has %d values (want %d), B has %d (want %d)", len(l.W), l.Dim*l.Classes, len(l.B), l.Classes)
	}
	return Model{
		Producer:        "palisade-train",
		ProducerVersion: "1",
		ModelVersion:    1,
		Opset:           13,
		GraphName:       name,
		Nodes: []Node{
			{Name: "matmul", OpType: "MatMul", Inputs: []string{InputFeatures, "W"}, Outputs: []string{"xw"}},
			{Name: "bias", OpType: "Add", Inputs: []string{"xw", "B"}, Outputs: []string{OutputLogits}},
			{Name: "softmax", OpType: "Softmax", Inputs: []string{OutputLogits}, Outputs: []string{OutputProbs},
				Attrs: []Attribute{{Name: "axis", Kind: "int", Int: -1}}},
		},
		Initializers: []Tensor{
			{Name: "W", Dims: []int64{int64(l.Dim), int64(l.Classes)}, Float32: l.W},
			{Name: "B", Dims: []int64{int64(l.Classes)}, Float32: l.B},
		},
		Inputs: []ValueInfo{{Name: InputFeatures, ElemType: TypeFloat, Dims: []int64{-1, int64(l.Dim)}, DimNames: []string{"batch"}}},
		Outputs: []ValueInfo{
			{Name: OutputProbs, ElemType: TypeFloat, Dims: []int64{-1, int64(l.Classes)}, DimNames: []string{"batch"}},
			{Name: OutputLogits, ElemType: TypeFloat, Dims: []int64{-1, int64(l.Classes)}, DimNames: []string{"batch"}},
		},
		Metadata: meta,
	}, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Probs computes softmax(x·W + B) for one sparse row (indices and values) in
// Go, in float64: the reference the ONNX graph must agree with.
func (l Linear) Probs(idx []int32, val []float32) []float64 {
	z := make([]float64, l.Classes)
	for c := range z {
		z[c] = float64(l.B[c])
	}
	for j, k := range idx {
		row := l.W[int(k)*l.Classes : (int(k)+1)*l.Classes]
		for c := range z {
			z[c] += float64(val[j]) * float64(row[c])
		}
	}
	maxZ := z[0]
	for _, v := range z {
		maxZ = max(maxZ, v)
	}
	var sum float64
	for c := range z {
		z[c] = math.Exp(z[c] - maxZ)
		sum += z[c]
	}
	for c := range z {
		z[c] /= sum
	}
	return z
}
