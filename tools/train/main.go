package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/infer/train"
)

// exampleStage is the example bundle's detector stage config (examples/bundle/bundle.yaml;
// TestExampleStage keeps them equal): -folds judges with it unless -fold-stage says otherwise.
const exampleStage = `{"threshold":0.9,"kind_thresholds":{"text":0.96},"kind_label_thresholds":{"query":{"sensitive_paths":0.99}},"kind_sure":{"text":0.99},"statement_sure":1,"kind_label_sure":{"query":{"prompt_injection":1,"sql_injection":1}}}`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type config struct {
	train, dev, test string
	out, card, spec  string
	name             string
	dim, epochs      int
	targetFPR        float64
	eval             bool
	evalList         bool
	model, specIn    string
	lib              string
	extra            string
	heldout          string
	format           string
	probe            string
	folds            string
	foldStage        string
	foldCuts         string
	foldList         bool
	foldNoTrain      bool
	onTop            string
	foldLong         int
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
	fs.BoolVar(&c.evalList, "eval-list", false, "with -eval: also list each text's score (1 - p(benign)), arg-max label and own label, in -test's order")
	fs.StringVar(&c.model, "model", "build/models/detector-v1.onnx", "model to evaluate (-eval)")
	fs.StringVar(&c.specIn, "model-spec", "models/detector.yaml", "spec of the model to evaluate (-eval)")
	fs.StringVar(&c.extra, "extra-benign", "models/data/benign_short.txt,models/data/benign_outputs.jsonl,models/data/benign_long.jsonl,models/data/benign_llm_docs.jsonl", "extra benign texts for training, comma-separated .txt (one per line) or .jsonl (text field) files (\"\" = none)")
	fs.StringVar(&c.heldout, "extra-heldout", "", "held-out tool calls to train on, comma-separated files (data/heldout/calib.jsonl, the tuning side; never test.jsonl), each capped on its own; FILE@kind+kind trains on those kinds' records only: the texts the detector stage scores in each record, labelled by the record (\"\" = none)")
	fs.StringVar(&c.onTop, "extra-heldout-on-top", "", "held-out files to train on as -extra-heldout does (comma-separated, FILE@kind+kind), after its files, each capped on its own, but left out of the class-balanced weights' counts: they add to their class's weight instead of diluting its other texts (\"\" = none)")
	fs.StringVar(&c.format, "format", infer.FormatSparse, "model input format: sparse (indices+values) or dense (features)")
	fs.StringVar(&c.probe, "probe-benign", "models/data/benign_long_holdout.jsonl", "held-out long benign texts (.jsonl) whose FPR the card reports (\"\" = none)")
	fs.StringVar(&c.lib, "lib", "", "ONNX Runtime library (\"\" = search)")
	fs.StringVar(&c.folds, "folds", "", "instead of training: the detector stage on this held-out file (data/heldout/calib.jsonl) out of fold, a model trained on each half of its source groups judging the other half (FILE@kind+kind: trained on those kinds only, every record judged)")
	fs.StringVar(&c.foldStage, "fold-stage", exampleStage, "with -folds: the detector stage's config (JSON; the example bundle's by default)")
	fs.StringVar(&c.foldCuts, "fold-text-cuts", "0.9,0.93,0.95,0.96,0.97,0.98,0.99", "with -folds: text cuts (kind_thresholds.text) to report")
	fs.BoolVar(&c.foldNoTrain, "fold-no-train", false, "with -folds: train on neither half (the model without the held-out texts, for comparison)")
	fs.IntVar(&c.foldLong, "fold-long-min-bytes", 0, "with -folds: a second model for texts over this many bytes (the stage's long_model and long_min_bytes, det66): the -extra-heldout-on-top files train it alone, the model for shorter texts is trained without them (0 = one model)")
	fs.BoolVar(&c.foldList, "fold-list", false, "with -folds: list the benign calls flagged at the last cut and each tool-output attack's best score")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	switch {
	case c.eval:
		err = doEval(c, stdout)
	case c.folds != "":
		err = doFolds(c, stdout)
	default:
		err = doTrain(c, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "train:", err)
		return 1
	}
	return 0
}

func doTrain(c config, stdout io.Writer) error {
	ctx := context.Background()
	var tc train.Config
	var err error
	if tc.Train, err = train.ReadExamples(c.train); err != nil {
		return err
	}
	if tc.Dev, err = train.ReadExamples(c.dev); err != nil {
		return err
	}
	if tc.Test, err = train.ReadExamples(c.test); err != nil {
		return err
	}
	if c.extra != "" {
		tc.ExtraFiles = strings.Split(c.extra, ",")
	}
	if tc.Heldout, tc.HeldoutFile, err = heldoutAll(c, train.LabelsOf(tc.Train), stdout); err != nil {
		return err
	}
	tc.Name, tc.Out, tc.Epochs, tc.TargetFPR, tc.Probe, tc.Library = c.name, c.out, c.epochs, c.targetFPR, c.probe, c.lib
	tc.Preprocessor = train.DefaultPreprocessor(c.format, c.dim)
	r, err := train.Run(ctx, tc)
	if err != nil {
		return err
	}
	if c.probe != "" {
		fmt.Fprintf(stdout, "long benign probe %s: %d of %d flagged (FPR %.4f)\n", c.probe, r.Probe.Flagged, r.Probe.N, r.Probe.FPR())
	}
	printMetrics(stdout, fmt.Sprintf("test set %s, threshold %.4f (dev FPR ≤ %.0f%%)", c.test, r.Threshold, 100*c.targetFPR), r.Metrics, r.Benign)
	fmt.Fprintf(stdout, "model %s: %d bytes, sha256 %s; max |onnx - go| = %.2e\n", c.out, r.Size, r.Spec.SHA256, r.MaxDiff)

	if c.spec != "" {
		b, err := yaml.Marshal(r.Spec)
		if err != nil {
			return err
		}
		hdr := "# Generated by `make model` (tools/train). The bundle's models: entry for the detector.\n# file is relative to the bundle (or to build/models for make eval/bench).\n"
		if err := os.WriteFile(c.spec, append([]byte(hdr), b...), 0o644); err != nil {
			return err
		}
	}
	if c.card != "" {
		if err := os.WriteFile(c.card, []byte(train.ModelCard(r, [3]string{c.train, c.dev, c.test})), 0o644); err != nil {
			return err
		}
	}
	return nil
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
	ctx := context.Background()
	reg, err := train.OpenRegistry(ctx, c.lib, filepath.Dir(c.model), spec)
	if err != nil {
		return err
	}
	defer reg.Close()
	testEx, err := train.ReadExamples(c.test)
	if err != nil {
		return err
	}
	scores, _, err := train.Score(ctx, reg, spec.Name, testEx, nil, nil)
	if err != nil {
		return err
	}
	t := spec.Thresholds["malicious"]
	if t == 0 {
		t = 0.5
	}
	printMetrics(stdout, fmt.Sprintf("detector %s on %s, threshold %.4f (ONNX Runtime %s)", spec.Name, c.test, t, infer.RuntimeVersion()), train.Evaluate(scores, t), train.BenignBreakdown(scores, t))
	if c.evalList {
		for i, s := range scores {
			fmt.Fprintf(stdout, "text %.4f %s %s %q\n", s.Score, s.Pred, s.Label, testEx[i].Text)
		}
	}
	return nil
}

func printMetrics(w io.Writer, title string, ms []train.Metrics, benign []train.BenignFPR) {
	fmt.Fprintln(w, title)
	fmt.Fprintf(w, "%-20s %6s %6s %7s %7s %7s %9s\n", "category", "pos", "neg", "TPR", "FPR", "AUROC", "label-acc")
	for _, m := range ms {
		fmt.Fprintf(w, "%-20s %6d %6d %7.4f %7.4f %7.4f %9.4f\n", m.Category, m.Positives, m.Negatives, m.TPR, m.FPR, m.AUROC, m.LabelAcc)
	}
	for _, b := range benign {
		fmt.Fprintf(w, "benign %-20s n=%-5d false positives=%-3d FPR %.4f\n", b.Category, b.N, b.FP, b.FPR)
	}
}

// heldoutAll reads -extra-heldout's files and then -extra-heldout-on-top's, whose examples
// come after (their parts numbered on) and are marked OnTop; it returns them and the files'
// names for the model card ("" and nil when there are none).
func heldoutAll(c config, labels []string, out io.Writer) ([]train.Example, string, error) {
	var all []train.Example
	var names []string
	if c.heldout != "" {
		ex, err := heldoutFiles(c.heldout, labels, out)
		if err != nil {
			return nil, "", err
		}
		all, names = ex, append(names, c.heldout)
	}
	if c.onTop != "" {
		ex, err := heldoutFiles(c.onTop, labels, out)
		if err != nil {
			return nil, "", err
		}
		part := 0
		for _, e := range all {
			part = max(part, e.Part+1)
		}
		for i := range ex {
			ex[i].Part += part
			ex[i].OnTop = true
		}
		all, names = append(all, ex...), append(names, c.onTop+" (on top)")
	}
	return all, strings.Join(names, ", "), nil
}

// heldoutFiles reads the training texts of the comma-separated held-out files in files
// (train.HeldoutExamples: each capped on its own, "path@kind+kind" for some kinds only), and
// says how many each gave on out.
func heldoutFiles(files string, labels []string, out io.Writer) ([]train.Example, error) {
	all, err := train.HeldoutExamples(files, labels)
	if err != nil {
		return nil, err
	}
	n := map[int]int{}
	for _, e := range all {
		n[e.Part]++
	}
	for i, file := range strings.Split(files, ",") {
		fmt.Fprintf(out, "held-out training texts %s: %d\n", file, n[i])
	}
	return all, nil
}
