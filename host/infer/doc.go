// Package infer is Palisade's host-managed inference: a registry of ONNX
// models declared in the bundle, run by ONNX Runtime through cgo
// (github.com/yalue/onnxruntime_go), on the CPU by default, on CUDA when
// configured and possible (falling back to the CPU, with the reason in
// Status), or on a remote KServe v2 / Triton endpoint with fallback to the
// local model. Concurrent calls are gathered into micro-batches. A linear
// softmax model as tools/train writes it (recognised by onnx.ReadLinear) is
// evaluated in Go instead (runtime auto, linear.go): no cgo, no library, no
// batching.
//
// A Preprocessor turns texts into model inputs in Go (hashed character and
// word n-grams today; a tokenizer can implement the same interface). The
// trainer (host/infer/train, run by tools/train and palisade tune) shares
// it, so features match at training and at inference.
//
// (*Registry).Infer has the shape the `infer` host function needs
// (host/hostfn declares the Inferer interface). Status feeds doctor and
// metrics.
//
// Built with CGO_ENABLED=0, or without the library, New still succeeds: local
// models report "unavailable" and Infer fails with ErrUnavailable, so a stage
// using them applies its failure mode.
//
// This package must not import Extism, hostfn, chain, bundle or anything that
// serves HTTP; its only driver is onnxruntime_go (and host/infer/onnx, which
// reads the trainer's models back).
package infer
