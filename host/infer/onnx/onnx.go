package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// IRVersion is the ONNX IR version written into every model (IR 8 = ONNX 1.10+).
const IRVersion = 8

// Element types (TensorProto.DataType).
const (
	TypeFloat = 1
	TypeInt64 = 7
)

// Attribute types (AttributeProto.AttributeType).
const (
	attrFloat = 1
	attrInt   = 2
	attrInts  = 7
)

// Tensor is a named constant (an initializer): Float32 data, or Int64 data
// when Int64 is non-nil. Either is written as raw_data, little-endian.
type Tensor struct {
	Name    string
	Dims    []int64
	Float32 []float32
	Int64   []int64
}

func (t Tensor) len() int {
	if t.Int64 != nil {
		return len(t.Int64)
	}
	return len(t.Float32)
}

// ValueInfo declares a graph input or output. A Dim of -1 is symbolic and takes
// the name in the same position of DimNames (e.g. "batch").
type ValueInfo struct {
	Name     string
	ElemType int32
	Dims     []int64
	DimNames []string
}

// Attribute is a node attribute: exactly one of Int, Float or Ints is used,
// chosen by Kind ("int", "float", "ints").
type Attribute struct {
	Name  string
	Kind  string
	Int   int64
	Float float32
	Ints  []int64
}

// Node is one operator call.
type Node struct {
	Name    string
	OpType  string
	Inputs  []string
	Outputs []string
	Attrs   []Attribute
}

// Model is an ONNX model with one graph in the default domain.
type Model struct {
	Producer        string
	ProducerVersion string
	Doc             string
	ModelVersion    int64
	Opset           int64 // default-domain opset, e.g. 13
	GraphName       string
	Nodes           []Node
	Initializers    []Tensor
	Inputs          []ValueInfo
	Outputs         []ValueInfo
	Metadata        map[string]string // metadata_props; written in sorted key order
}

// Marshal encodes m as an ONNX ModelProto. The output is deterministic.
func Marshal(m Model) ([]byte, error) {
	if m.Opset <= 0 {
		return nil, errors.New("onnx: opset must be > 0")
	}
	if m.GraphName == "" {
		return nil, errors.New("onnx: graph name is empty")
	}
	for _, t := range m.Initializers {
		n := int64(1)
		for _, d := range t.Dims {
			n *= d
		}
		if n != int64(t.len()) {
			return nil, fmt.Errorf("onnx: initializer %q: dims %v hold %d values, have %d", t.Name, t.Dims, n, t.len())
		}
	}
	var b []byte
	b = appendVarintField(b, 1, IRVersion)
	b = appendStringField(b, 2, m.Producer)
	b = appendStringField(b, 3, m.ProducerVersion)
	b = appendVarintField(b, 5, uint64(m.ModelVersion))
	b = appendStringField(b, 6, m.Doc)
	b = appendMessage(b, 7, graph(m))
	// opset_import (8): OperatorSetIdProto{domain=1, version=2}
	var op []byte
	op = protowire.AppendTag(op, 1, protowire.BytesType)
	op = protowire.AppendString(op, "")
	op = appendVarintField(op, 2, uint64(m.Opset))
	b = appendMessage(b, 8, op)
	for _, k := range sortedKeys(m.Metadata) {
		var e []byte
		e = appendStringField(e, 1, k)
		e = appendStringField(e, 2, m.Metadata[k])
		b = appendMessage(b, 14, e)
	}
	return b, nil
}

func graph(m Model) []byte {
	var g []byte
	for _, n := range m.Nodes {
		g = appendMessage(g, 1, node(n))
	}
	g = appendStringField(g, 2, m.GraphName)
	for _, t := range m.Initializers {
		g = appendMessage(g, 5, tensor(t))
	}
	for _, v := range m.Inputs {
		g = appendMessage(g, 11, valueInfo(v))
	}
	for _, v := range m.Outputs {
		g = appendMessage(g, 12, valueInfo(v))
	}
	return g
}

func node(n Node) []byte {
	var b []byte
	for _, in := range n.Inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, out := range n.Outputs {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, out)
	}
	b = appendStringField(b, 3, n.Name)
	b = appendStringField(b, 4, n.OpType)
	for _, a := range n.Attrs {
		b = appendMessage(b, 5, attribute(a))
	}
	return b
}

func attribute(a Attribute) []byte {
	var b []byte
	b = appendStringField(b, 1, a.Name)
	switch a.Kind {
	case "float":
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.Float))
		b = appendVarintField(b, 20, attrFloat)
	case "ints":
		var p []byte
		for _, v := range a.Ints {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, p)
		b = appendVarintField(b, 20, attrInts)
	default: // "int"
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.Int))
		b = appendVarintField(b, 20, attrInt)
	}
	return b
}

func tensor(t Tensor) []byte {
	var b []byte
	if len(t.Dims) > 0 {
		var p []byte
		for _, d := range t.Dims {
			p = protowire.AppendVarint(p, uint64(d))
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, p)
	}
	var raw []byte
	if t.Int64 != nil {
		b = appendVarintField(b, 2, TypeInt64)
		raw = make([]byte, 8*len(t.Int64))
		for i, v := range t.Int64 {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
	} else {
		b = appendVarintField(b, 2, TypeFloat)
		raw = make([]byte, 4*len(t.Float32))
		for i, f := range t.Float32 {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
		}
	}
	b = appendStringField(b, 8, t.Name)
	b = protowire.AppendTag(b, 9, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	return b
}

func valueInfo(v ValueInfo) []byte {
	var shape []byte
	for i, d := range v.Dims {
		var dim []byte
		if d < 0 {
			name := "dim"
			if i < len(v.DimNames) && v.DimNames[i] != "" {
				name = v.DimNames[i]
			}
			dim = protowire.AppendTag(dim, 2, protowire.BytesType)
			dim = protowire.AppendString(dim, name)
		} else {
			dim = protowire.AppendTag(dim, 1, protowire.VarintType)
			dim = protowire.AppendVarint(dim, uint64(d))
		}
		shape = appendMessage(shape, 1, dim)
	}
	var tt []byte // TypeProto.Tensor
	tt = appendVarintField(tt, 1, uint64(v.ElemType))
	tt = appendMessage(tt, 2, shape)
	var typ []byte // TypeProto
	typ = appendMessage(typ, 1, tt)
	var b []byte
	b = appendStringField(b, 1, v.Name)
	b = appendMessage(b, 2, typ)
	return b
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendStringField skips empty strings (proto3 default).
func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendMessage always writes the field, even when empty: an empty shape or
// graph is still present.
func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}
