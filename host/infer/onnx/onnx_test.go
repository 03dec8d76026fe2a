package onnx

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestMarshalDeterministic(t *testing.T) {
	l := Linear{Dim: 4, Classes: 2, W: []float32{1, 2, 3, 4, 5, 6, 7, 8}, B: []float32{0.5, -0.5}}
	meta := map[string]string{"labels": "a,b", "dim": "4", "z": "last"}
	m1, err := LinearSoftmax(l, "g", meta)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Marshal(m1)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, err := Marshal(m1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatal("Marshal is not deterministic")
		}
	}
	// Walk the top level: it must parse as protobuf and hold the fields we set.
	seen := map[protowire.Number]int{}
	for b := a; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatalf("field %d: %v", num, protowire.ParseError(m))
		}
		if num == 1 {
			v, _ := protowire.ConsumeVarint(b)
			if v != IRVersion {
				t.Errorf("ir_version = %d, want %d", v, IRVersion)
			}
		}
		seen[num]++
		b = b[m:]
	}
	for num, want := range map[protowire.Number]int{1: 1, 7: 1, 8: 1, 14: 3} {
		if seen[num] != want {
			t.Errorf("field %d seen %d times, want %d", num, seen[num], want)
		}
	}
}

func TestLinearSoftmaxRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Linear
	}{
		{"zero dim", Linear{Dim: 0, Classes: 2}},
		{"short W", Linear{Dim: 2, Classes: 2, W: []float32{1}, B: []float32{0, 0}}},
		{"short B", Linear{Dim: 1, Classes: 2, W: []float32{1, 2}, B: []float32{0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LinearSoftmax(tc.l, "g", nil); err == nil {
				t.Error("LinearSoftmax accepted a bad model")
			}
		})
	}
	if _, err := Marshal(Model{Opset: 13, GraphName: "g", Initializers: []Tensor{{Name: "x", Dims: []int64{3}, Float32: []float32{1}}}}); err == nil {
		t.Error("Marshal accepted an initializer whose dims do not match its data")
	}
}

func TestProbs(t *testing.T) {
	l := Linear{Dim: 3, Classes: 2, W: []float32{1, 0, 0, 1, 2, 2}, B: []float32{0, 1}}
	p := l.Probs([]int32{0, 2}, []float32{1, 1})
	// logits: [1+2, 1+2+... ] = class0: 0+1*1+1*2 = 3; class1: 1+0+2 = 3
	if math.Abs(p[0]-0.5) > 1e-12 || math.Abs(p[1]-0.5) > 1e-12 {
		t.Errorf("Probs = %v, want [0.5 0.5]", p)
	}
}
