// Command train is Palisade's model trainer, a thin wrapper over host/infer/train: it fits the
// detector's softmax regression over hashed n-grams (host/infer's HashedNgrams, so features
// match at inference) on data/split, writes ONNX with host/infer/onnx, scores the dev and test
// sets through ONNX Runtime, and writes models/MODEL_CARD.md and models/detector.yaml. `-eval`
// prints TPR/FPR/AUROC per category.
//
// Deterministic: one thread, a fixed seed and a fixed order; the same data gives the same
// model bytes.
package main
