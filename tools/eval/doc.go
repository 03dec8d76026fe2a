// Command eval scores a detector on the project's labelled split (data/split) and prints
// per-category TPR, overall FPR, AUROC and TPR at 1% FPR. Scorers are registered by name in
// the scorers map; the injection plugin's detector is built in. See tools/eval/README.md.
package main
