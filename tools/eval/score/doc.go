// Package score is the evaluation harness's library: it loads the labelled split
// (data/split/*.jsonl), runs any Scorer over it and reports per-category TPR, overall FPR,
// AUROC and TPR at 1% FPR as a table. Scorers are plain values: the injection detector, and
// later an ONNX detector, implement Scorer and are registered in tools/eval.
package score
