package infer

import "errors"

// Sentinel errors. Match them with errors.Is.
var (
	// ErrUnavailable means local inference cannot run in this process: the
	// binary was built without cgo, or the ONNX Runtime library is missing or
	// failed to load. A stage that needs infer then fails per its failure mode.
	ErrUnavailable = errors.New("infer: onnx runtime unavailable")
	// ErrUnknownModel means a request named a model the registry does not hold.
	ErrUnknownModel = errors.New("infer: unknown model")
	// ErrUnknownKind means a spec named an unknown preprocessor or provider.
	ErrUnknownKind = errors.New("infer: unknown kind")
	// ErrChecksum means a model file's sha256 differs from its declaration.
	ErrChecksum = errors.New("infer: sha256 mismatch")
	// ErrClosed means the registry was closed.
	ErrClosed = errors.New("infer: registry closed")
	// ErrTooManyTexts means a request carried more texts than MaxTexts.
	ErrTooManyTexts = errors.New("infer: too many texts")
)

var errNoCgo = errors.Join(ErrUnavailable, errors.New("built without cgo"))
