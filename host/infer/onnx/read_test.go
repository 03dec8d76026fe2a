package onnx

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestReadLinear: both graphs this package writes read back to the same weights and kind;
// the same model with any byte of its graph changed, or with a node or metadata entry more,
// is refused, as is data that is not protobuf.
func TestReadLinear(t *testing.T) {
	l := Linear{Dim: 6, Classes: 3, W: []float32{1, -2, 3, 0.5, 0, -1, 2, 2, 2, -0.25, 4, 1, 0, 0, 1, 9, -9, 0}, B: []float32{0.1, -0.2, 0.3}}
	meta := map[string]string{"labels": "a,b,c", "preprocessor": "hashed"}
	for _, sparse := range []bool{true, false} {
		build := LinearSoftmax
		if sparse {
			build = LinearSoftmaxSparse
		}
		m, err := build(l, "g", meta)
		if err != nil {
			t.Fatal(err)
		}
		data, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, sp, err := ReadLinear(data)
		if err != nil || sp != sparse || got.Dim != l.Dim || got.Classes != l.Classes || !slices.Equal(got.W, l.W) || !slices.Equal(got.B, l.B) {
			t.Fatalf("sparse %v: read %+v sparse %v err %v", sparse, got, sp, err)
		}

		edited := m
		edited.Nodes = append(slices.Clone(m.Nodes), Node{Name: "extra", OpType: "Relu", Inputs: []string{OutputProbs}, Outputs: []string{"r"}})
		more := m
		more.Metadata = map[string]string{"labels": "a,b,c", "preprocessor": "hashed", "x": "y"}
		swapped := m
		swapped.Nodes = slices.Clone(m.Nodes)
		last := len(swapped.Nodes) - 1
		swapped.Nodes[last].OpType = "LogSoftmax"
		for name, mm := range map[string]Model{"extra node": edited, "log softmax": swapped} {
			b, err := Marshal(mm)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := ReadLinear(b); err == nil {
				t.Errorf("sparse %v, %s: read as a linear model", sparse, name)
			}
		}
		if b, _ := Marshal(more); b != nil {
			if got, _, err := ReadLinear(b); err != nil || got.Dim != l.Dim {
				t.Errorf("sparse %v: metadata is the model's own to carry: %v", sparse, err)
			}
		}
		// Flip each byte of the encoding in turn: a flip in the structure is refused.
		accepted := 0
		for i := range data {
			bad := bytes.Clone(data)
			bad[i] ^= 0x41
			got, sp2, err := ReadLinear(bad)
			if err != nil {
				continue
			}
			// It parsed as another linear model (a weight, the name or a metadata
			// value changed): then it is exactly what it says, re-encoding to itself.
			build2 := LinearSoftmax
			if sp2 {
				build2 = LinearSoftmaxSparse
			}
			rb, _ := build2(got, nameOf(t, bad), metaOf(t, bad))
			if b, _ := Marshal(rb); !bytes.Equal(b, bad) {
				t.Fatalf("byte %d flipped: accepted a model that does not re-encode to itself", i)
			}
			accepted++
		}
		// Weights (4·(18+3) bytes), the graph name and the metadata's keys and values are
		// data; everything else is structure.
		if limit := 4*(len(l.W)+len(l.B)) + 1 + len("labels,a,b,c,preprocessor,hashed") - 2; accepted > limit || accepted < 4*len(l.W) {
			t.Errorf("sparse %v: %d of %d single-byte flips accepted, want between %d and %d", sparse, accepted, len(data), 4*len(l.W), limit)
		}
	}
	for _, bad := range [][]byte{nil, []byte("not protobuf at all"), {0x3a, 0xff}} {
		if _, _, err := ReadLinear(bad); err == nil || !strings.HasPrefix(err.Error(), "onnx:") {
			t.Errorf("%q: err %v, want an onnx error", bad, err)
		}
	}
}

func nameOf(t *testing.T, data []byte) string {
	name, _, _, err := readModel(data)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func metaOf(t *testing.T, data []byte) map[string]string {
	_, meta, _, err := readModel(data)
	if err != nil {
		t.Fatal(err)
	}
	return meta
}
