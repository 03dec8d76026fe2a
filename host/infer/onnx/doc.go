// Package onnx writes small ONNX models by hand, as protobuf, with
// google.golang.org/protobuf/encoding/protowire. It knows just enough of the
// ModelProto schema (onnx/onnx.proto, IR version 8) to emit a graph of standard
// operators with float initializers: the linear + softmax classifier that
// tools/train produces.
//
// It exists because the project has no Python toolchain: the trainer is Go and
// must still hand ONNX Runtime a standard model file.
//
// It imports only protowire and the standard library, and must not import
// onnxruntime_go or anything under host/ (it is a leaf).
package onnx
