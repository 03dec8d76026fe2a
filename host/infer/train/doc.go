// Package train fits the detector's model: a deterministic softmax regression over hashed
// n-grams (host/infer's HashedNgrams, so features match at inference), written as ONNX by
// host/infer/onnx, scored through ONNX Runtime, with the threshold picked on a dev set and a
// model card. tools/train (`make model`) and host/tune (`palisade tune`, which retrains with
// people's labelled texts) both drive it. HeldoutExamples turns data/heldout records into the
// texts the detector stage scores, through plugins/detector/scan (plain Go, no host import);
// RunFolds scores them out of fold, by halves of their source groups.
//
// Deterministic: one thread, a fixed seed and a fixed order; the same examples give the same
// model bytes.
//
// This package must not import bundle, chain, hostfn, tune or anything that serves HTTP.
package train
