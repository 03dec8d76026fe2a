package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/infer/onnx"
	"github.com/added060/palisade/sdk/go/abi"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type config struct {
	train, dev, test string
	out, card, spec  string
	name             string
	dim, epochs      int
	targetFPR        float64
	eval             bool
	model, specIn    string
	lib              string
	extra            string
	format           string
	probe            string
}

func run(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.train, "train", "data/split/train.jsonl", "training set (JSONL)")
	fs.StringVar(&c.dev, "dev", "data/split/dev.jsonl", "dev set: picks the threshold")
	fs.StringVar(&c.test, "test", "data/split/test.jsonl", "test set: the card's metrics")
	fs.StringVar(&c.out, "out", "build/models/detector-v1.onnx", "ONNX output")
	fs.StringVar(&c.card, "card", "models/MODEL_CARD.md", "model card output (\"\" = none)")
	fs.StringVar(&c.spec, "spec", "models/detector.yaml", "model spec output (\"\" = none)")
	fs.StringVar(&c.name, "name", "detector-v1", "model name")
	fs.IntVar(&c.dim, "dim", 1<<15, "hashed feature dimension")
	fs.IntVar(&c.epochs, "epochs", 0, "epochs (0 = default)")
	fs.Float64Var(&c.targetFPR, "target-fpr", 0.01, "dev-set FPR the threshold is chosen for")
	fs.BoolVar(&c.eval, "eval", false, "evaluate -model on -test instead of training")
	fs.StringVar(&c.model, "model", "build/models/detector-v1.onnx", "model to evaluate (-eval)")
	fs.StringVar(&c.specIn, "model-spec", "models/detector.yaml", "spec of the model to evaluate (-eval)")
	fs.StringVar(&c.extra, "extra-benign", "models/data/benign_short.txt,models/data/benign_outputs.jsonl,models/data/benign_long.jsonl", "extra benign texts for training, comma-separated .txt (one per line) or .jsonl (text field) files (\"\" = none)")
	fs.StringVar(&c.format, "format", infer.FormatSparse, "model input format: sparse (indices+values) or dense (features)")
	fs.StringVar(&c.probe, "probe-benign", "models/data/benign_long_holdout.jsonl", "held-out long benign texts (.jsonl) whose FPR the card reports (\"\" = none)")
	fs.StringVar(&c.lib, "lib", "", "ONNX Runtime library (\"\" = search)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	if c.eval {
		err = doEval(c, stdout)
	} else {
		err = doTrain(c, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "train:", err)
		return 1
	}
	return 0
}

func doTrain(c config, stdout io.Writer) error {
	trainEx, err := readExamples(c.train)
	if err != nil {
		return err
	}
	devEx, err := readExamples(c.dev)
	if err != nil {
		return err
	}
	testEx, err := readExamples(c.test)
	if err != nil {
		return err
	}
	var extraFiles []string
	if c.extra != "" {
		extraFiles = strings.Split(c.extra, ",")
	}
	extras, err := benignExtras(trainEx, extraFiles)
	if err != nil {
		return err
	}
	fitEx := append(slices.Clip(trainEx), extras...)
	labels := labelsOf(trainEx)
	index := map[string]int{}
	for i, l := range labels {
		index[l] = i
	}
	pspec := infer.PreprocessorSpec{Kind: infer.KindHashedNgrams, Format: c.format, Dim: c.dim, CharMin: 3, CharMax: 5, WordMax: 2, MaxBytes: 8192}
	pre, err := infer.NewPreprocessor(pspec)
	if err != nil {
		return err
	}
	h := pre.(*infer.HashedNgrams)
	rows := featurize(h, fitEx)
	y := make([]int, len(fitEx))
	for i, e := range fitEx {
		y[i] = index[e.Label]
	}
	to := defaultTrainOptions()
	if c.epochs > 0 {
		to.Epochs = c.epochs
	}
	lin := train(rows, y, c.dim, len(labels), to)

	pj, _ := json.Marshal(pspec)
	meta := map[string]string{
		"labels":       strings.Join(labels, ","),
		"preprocessor": string(pj),
		"trainer":      fmt.Sprintf("palisade tools/train: softmax regression, AdaGrad lr=%g l2=%g epochs=%d seed=%d, class-balanced", to.LearningRate, to.L2, to.Epochs, to.Seed),
	}
	build := onnx.LinearSoftmaxSparse
	if c.format == infer.FormatDense {
		build = onnx.LinearSoftmax
	}
	m, err := build(lin, c.name, meta)
	if err != nil {
		return err
	}
	data, err := onnx.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(c.out, data, 0o644); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	spec := infer.ModelSpec{
		Name: c.name, File: filepath.Base(c.out), SHA256: hex.EncodeToString(sum[:]),
		Preprocessor: pspec, Outputs: []string{onnx.OutputProbs, onnx.OutputLogits},
		Labels: labels, Benign: BenignLabel,
	}

	// Score through ONNX Runtime: the numbers in the card are the deployed model's.
	reg, err := openRegistry(c.lib, filepath.Dir(c.out), spec)
	if err != nil {
		return err
	}
	defer reg.Close()
	devScores, _, err := scoreAll(reg, c.name, devEx, nil, nil)
	if err != nil {
		return err
	}
	var benign []float64
	for _, s := range devScores {
		if s.label == BenignLabel {
			benign = append(benign, s.score)
		}
	}
	threshold := math.Round(thresholdForFPR(benign, c.targetFPR)*1e4) / 1e4
	spec.Thresholds = map[string]float64{"malicious": threshold}
	testScores, maxDiff, err := scoreAll(reg, c.name, testEx, h, &lin)
	if err != nil {
		return err
	}
	var probe probeResult
	if c.probe != "" {
		if probe, err = probeFPR(reg, c.name, c.probe, threshold); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "long benign probe %s: %d of %d flagged (FPR %.4f)\n", c.probe, probe.flagged, probe.n, probe.fpr())
	}
	metrics := evaluate(testScores, threshold)
	devMetrics := evaluate(devScores, threshold)
	benignTest := benignBreakdown(testScores, threshold)
	printMetrics(stdout, fmt.Sprintf("test set %s, threshold %.4f (dev FPR ≤ %.0f%%)", c.test, threshold, 100*c.targetFPR), metrics, benignTest)
	fmt.Fprintf(stdout, "model %s: %d bytes, sha256 %s; max |onnx - go| = %.2e\n", c.out, len(data), spec.SHA256, maxDiff)

	if c.spec != "" {
		b, err := yaml.Marshal(spec)
		if err != nil {
			return err
		}
		hdr := "# Generated by `make model` (tools/train). The bundle's models: entry for the detector.\n# file is relative to the bundle (or to build/models for make eval/bench).\n"
		if err := os.WriteFile(c.spec, append([]byte(hdr), b...), 0o644); err != nil {
			return err
		}
	}
	if c.card != "" {
		card := modelCard(cardInput{
			spec: spec, size: len(data), train: trainEx, extras: len(extras), extraFiles: extraFiles, dev: devEx, test: testEx, opts: to,
			threshold: threshold, targetFPR: c.targetFPR, metrics: metrics, devMetrics: devMetrics, maxDiff: maxDiff,
			paths: [3]string{c.train, c.dev, c.test}, probe: probe, probePath: c.probe, benign: benignTest,
		})
		if err := os.WriteFile(c.card, []byte(card), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func openRegistry(lib, baseDir string, spec infer.ModelSpec) (*infer.Registry, error) {
	reg, err := infer.New(context.Background(), infer.Options{Models: []infer.ModelSpec{spec}, BaseDir: baseDir, LibraryPath: lib, MaxTexts: 1024})
	if err != nil {
		return nil, err
	}
	if st := reg.Status().Models[0]; !st.Available() {
		reg.Close()
		return nil, fmt.Errorf("model %s unavailable: %s", spec.Name, st.Reason)
	}
	return reg, nil
}

// scoreAll runs every example through the registry in batches of 256. With
// h and lin it also returns the largest difference between ONNX Runtime's
// probabilities and the Go reference.
func scoreAll(reg *infer.Registry, model string, ex []Example, h *infer.HashedNgrams, lin *onnx.Linear) ([]scored, float64, error) {
	out := make([]scored, 0, len(ex))
	var maxDiff float64
	spec, _ := reg.Spec(model)
	for start := 0; start < len(ex); start += 256 {
		end := min(start+256, len(ex))
		texts := make([]string, 0, end-start)
		for _, e := range ex[start:end] {
			texts = append(texts, e.Text)
		}
		resp, err := reg.Infer(context.Background(), abi.InferRequest{Model: model, Texts: texts})
		if err != nil {
			return nil, 0, err
		}
		for i, r := range resp.Results {
			e := ex[start+i]
			out = append(out, scored{score: 1 - r.Scores[spec.Benign], label: e.Label, category: e.Category, hard: e.HardNegative, pred: r.Label})
			if lin != nil {
				ref := lin.Probs(h.Sparse(e.Text))
				for c, p := range ref {
					maxDiff = max(maxDiff, math.Abs(p-r.Scores[spec.Labels[c]]))
				}
			}
		}
	}
	return out, maxDiff, nil
}

func doEval(c config, stdout io.Writer) error {
	raw, err := os.ReadFile(c.specIn)
	if err != nil {
		return err
	}
	var spec infer.ModelSpec
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("%s: %w", c.specIn, err)
	}
	spec.File = filepath.Base(c.model)
	reg, err := openRegistry(c.lib, filepath.Dir(c.model), spec)
	if err != nil {
		return err
	}
	defer reg.Close()
	testEx, err := readExamples(c.test)
	if err != nil {
		return err
	}
	scores, _, err := scoreAll(reg, spec.Name, testEx, nil, nil)
	if err != nil {
		return err
	}
	t := spec.Thresholds["malicious"]
	if t == 0 {
		t = 0.5
	}
	printMetrics(stdout, fmt.Sprintf("detector %s on %s, threshold %.4f (ONNX Runtime %s)", spec.Name, c.test, t, infer.RuntimeVersion()), evaluate(scores, t), benignBreakdown(scores, t))
	return nil
}

func printMetrics(w io.Writer, title string, ms []Metrics, benign []BenignFPR) {
	fmt.Fprintln(w, title)
	fmt.Fprintf(w, "%-20s %6s %6s %7s %7s %7s %9s\n", "category", "pos", "neg", "TPR", "FPR", "AUROC", "label-acc")
	for _, m := range ms {
		fmt.Fprintf(w, "%-20s %6d %6d %7.4f %7.4f %7.4f %9.4f\n", m.Category, m.Positives, m.Negatives, m.TPR, m.FPR, m.AUROC, m.LabelAcc)
	}
	for _, b := range benign {
		fmt.Fprintf(w, "benign %-20s n=%-5d false positives=%-3d FPR %.4f\n", b.Category, b.N, b.FP, b.FPR)
	}
}

type probeResult struct {
	n, flagged int
	worst      []string // sources of flagged texts
}

func (p probeResult) fpr() float64 {
	if p.n == 0 {
		return 0
	}
	return float64(p.flagged) / float64(p.n)
}

// probeFPR scores held-out benign texts (JSONL with text and source) and
// counts those at or above the threshold.
func probeFPR(reg *infer.Registry, model, path string, threshold float64) (probeResult, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return probeResult{}, fmt.Errorf("probe: %w", err)
	}
	var ex []Example
	var sources []string
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e struct{ Text, Source string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return probeResult{}, fmt.Errorf("probe: %s:%d: %w", path, i+1, err)
		}
		ex = append(ex, Example{Text: e.Text, Label: BenignLabel})
		sources = append(sources, e.Source)
	}
	scores, _, err := scoreAll(reg, model, ex, nil, nil)
	if err != nil {
		return probeResult{}, err
	}
	p := probeResult{n: len(scores)}
	for i, s := range scores {
		if s.score >= threshold {
			p.flagged++
			p.worst = append(p.worst, fmt.Sprintf("%s (%s, %.3f)", sources[i], s.pred, s.score))
		}
	}
	return p, nil
}
