package onnx

import (
	"fmt"
	"math"
	"sort"
)

// Names of the inputs and outputs of LinearSoftmax and LinearSoftmaxSparse.
const (
	InputFeatures = "features"      // float[batch, Dim]
	InputIndices  = "indices"       // int64[batch, K]
	InputValues   = "values"        // float[batch, K]
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

// LinearSoftmaxSparse builds the ONNX model for l over sparse rows: inputs
// "indices" int64[batch,K] and "values" float[batch,K] (pad with index 0,
// value 0) → Gather(W, indices) [batch,K,Classes] × Unsqueeze(values)
// → ReduceSum over K → Add(B) → "logits" → Softmax → "probabilities", at
// opset 13. It costs K·Classes per text instead of Dim·Classes, and sends
// K·12 bytes instead of Dim·4.
func LinearSoftmaxSparse(l Linear, name string, meta map[string]string) (Model, error) {
	m, err := LinearSoftmax(l, name, meta)
	if err != nil {
		return Model{}, err
	}
	m.Nodes = []Node{
		{Name: "gather", OpType: "Gather", Inputs: []string{"W", InputIndices}, Outputs: []string{"rows"},
			Attrs: []Attribute{{Name: "axis", Kind: "int", Int: 0}}},
		{Name: "unsqueeze", OpType: "Unsqueeze", Inputs: []string{InputValues, "axis2"}, Outputs: []string{"v3"}},
		{Name: "scale", OpType: "Mul", Inputs: []string{"rows", "v3"}, Outputs: []string{"weighted"}},
		{Name: "sum", OpType: "ReduceSum", Inputs: []string{"weighted", "axis1"}, Outputs: []string{"xw"},
			Attrs: []Attribute{{Name: "keepdims", Kind: "int", Int: 0}}},
		{Name: "bias", OpType: "Add", Inputs: []string{"xw", "B"}, Outputs: []string{OutputLogits}},
		{Name: "softmax", OpType: "Softmax", Inputs: []string{OutputLogits}, Outputs: []string{OutputProbs},
			Attrs: []Attribute{{Name: "axis", Kind: "int", Int: -1}}},
	}
	m.Initializers = append(m.Initializers,
		Tensor{Name: "axis1", Dims: []int64{1}, Int64: []int64{1}},
		Tensor{Name: "axis2", Dims: []int64{1}, Int64: []int64{2}},
	)
	m.Inputs = []ValueInfo{
		{Name: InputIndices, ElemType: TypeInt64, Dims: []int64{-1, -1}, DimNames: []string{"batch", "k"}},
		{Name: InputValues, ElemType: TypeFloat, Dims: []int64{-1, -1}, DimNames: []string{"batch", "k"}},
	}
	return m, nil
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
