package onnx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// ReadLinear recognises a model this package wrote with LinearSoftmaxSparse (sparse true) or
// LinearSoftmax (sparse false) and returns its weights. It reads the graph's name, its
// metadata and its W and B initializers, builds the model again from them, and accepts data
// only when the encoding is byte for byte the same: any other graph, operator, attribute,
// input or output — a model edited by hand, or another exporter's — is not this one, and ok is
// false with the reason in err.
func ReadLinear(data []byte) (l Linear, sparse bool, err error) {
	name, meta, inits, err := readModel(data)
	if err != nil {
		return Linear{}, false, err
	}
	w, b := inits["W"], inits["B"]
	if len(w.Dims) != 2 || len(b.Dims) != 1 || w.Dims[1] != b.Dims[0] || w.Float32 == nil || b.Float32 == nil {
		return Linear{}, false, errors.New("onnx: no float W[dim,classes] and B[classes] initializers")
	}
	l = Linear{Dim: int(w.Dims[0]), Classes: int(w.Dims[1]), W: w.Float32, B: b.Float32}
	for _, sp := range []bool{true, false} {
		build := LinearSoftmax
		if sp {
			build = LinearSoftmaxSparse
		}
		m, err := build(l, name, meta)
		if err != nil {
			return Linear{}, false, err
		}
		again, err := Marshal(m)
		if err != nil {
			return Linear{}, false, err
		}
		if bytes.Equal(again, data) {
			return l, sp, nil
		}
	}
	return Linear{}, false, errors.New("onnx: not a linear softmax model as tools/train writes it")
}

// readModel reads the parts of a ModelProto that ReadLinear rebuilds from: the graph name
// (GraphProto.name), metadata_props, and the float initializers by name.
func readModel(data []byte) (string, map[string]string, map[string]Tensor, error) {
	var graph []byte
	meta := map[string]string{}
	err := fields(data, func(num protowire.Number, v []byte) error {
		switch num {
		case 7:
			graph = v
		case 14:
			var k, val string
			if err := fields(v, func(n protowire.Number, b []byte) error {
				switch n {
				case 1:
					k = string(b)
				case 2:
					val = string(b)
				}
				return nil
			}); err != nil {
				return err
			}
			meta[k] = val
		}
		return nil
	})
	if err != nil {
		return "", nil, nil, err
	}
	if graph == nil {
		return "", nil, nil, errors.New("onnx: model has no graph")
	}
	var name string
	inits := map[string]Tensor{}
	err = fields(graph, func(num protowire.Number, v []byte) error {
		switch num {
		case 2:
			name = string(v)
		case 5:
			t, err := readTensor(v)
			if err != nil {
				return err
			}
			inits[t.Name] = t
		}
		return nil
	})
	return name, meta, inits, err
}

// readTensor reads a TensorProto written as raw_data: dims, data type, name, raw bytes.
func readTensor(data []byte) (Tensor, error) {
	var t Tensor
	var typ uint64
	var raw []byte
	err := fields(data, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			for len(v) > 0 {
				d, n := protowire.ConsumeVarint(v)
				if n < 0 {
					return protowire.ParseError(n)
				}
				t.Dims = append(t.Dims, int64(d))
				v = v[n:]
			}
		case 2:
			d, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return protowire.ParseError(n)
			}
			typ = d
		case 8:
			t.Name = string(v)
		case 9:
			raw = v
		}
		return nil
	})
	if err != nil {
		return Tensor{}, err
	}
	if typ == TypeFloat {
		if len(raw)%4 != 0 {
			return Tensor{}, fmt.Errorf("onnx: tensor %q: raw data of %d bytes is not float32", t.Name, len(raw))
		}
		t.Float32 = make([]float32, len(raw)/4)
		for i := range t.Float32 {
			t.Float32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return t, nil
}

// fields calls fn for each field of a protobuf message: a varint field's value is handed
// over as its own encoding, a length-delimited field's as its contents; fixed-width fields
// are skipped.
func fields(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("onnx: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			_, n = protowire.ConsumeVarint(b)
			if n >= 0 {
				v = b[:n]
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("onnx: field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if v != nil {
			if err := fn(num, v); err != nil {
				return err
			}
		}
	}
	return nil
}
