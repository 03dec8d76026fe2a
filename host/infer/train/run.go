package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/infer/onnx"
	"github.com/added060/palisade/sdk/go/abi"
)

// DefaultPreprocessor is the detector's feature extractor: hashed char 3–5-grams and word
// 1–2-grams into dim buckets, in format (infer.FormatSparse or infer.FormatDense).
func DefaultPreprocessor(format string, dim int) infer.PreprocessorSpec {
	return infer.PreprocessorSpec{Kind: infer.KindHashedNgrams, Format: format, Dim: dim, CharMin: 3, CharMax: 5, WordMax: 2, MaxBytes: 8192}
}

// Config is one training run.
type Config struct {
	Train, Dev, Test []Example // Train fits, Dev picks the threshold, Test gives the metrics
	ExtraFiles       []string  // extra benign texts (BenignExtras); nil = none
	// Heldout are labelled texts of real tool calls from other sources (tools/train's
	// -extra-heldout: the texts the detector scores in data/heldout/calib.jsonl), fitted after
	// the extras; nil = none. Within a class the examples of one held-out file (Example.Part)
	// weigh at most as much in total as the class's other examples (capHeldout). HeldoutFile
	// names their files for the model card.
	Heldout     []Example
	HeldoutFile string
	// Added are appended to the fitted examples after the extras, in their order (palisade
	// tune's labelled texts); their labels must be in Labels.
	Added []Example
	Name  string // the model's name
	Out   string // the ONNX file written (its folder is created)
	// Preprocessor is the feature extractor; zero = DefaultPreprocessor(infer.FormatSparse, 1<<15).
	Preprocessor infer.PreprocessorSpec
	// Labels is the model's label set, benign first; nil = LabelsOf(Train).
	Labels    []string
	Epochs    int     // 0 = DefaultOptions().Epochs
	TargetFPR float64 // the dev-set FPR the threshold is picked for; 0 = 0.01
	Probe     string  // held-out long benign texts (.jsonl, text and source); "" = none
	Library   string  // ONNX Runtime library; "" = search as host/infer does
}

// Result is what a run wrote and measured, every figure through ONNX Runtime.
type Result struct {
	Spec    infer.ModelSpec // the model's spec: sha256, labels, thresholds.malicious
	Size    int             // bytes of the ONNX file
	Options Options         // the hyper-parameters used
	Extras  int             // extra benign texts fitted (BenignExtras)
	Added   int             // Config.Added fitted
	// Heldout counts Config.Heldout's texts per label; HeldoutFile is Config.HeldoutFile.
	Heldout     map[string]int
	HeldoutFile string
	Threshold   float64 // on 1 - p(benign): the lowest with dev FPR ≤ TargetFPR, 4 decimals
	TargetFPR   float64
	// Metrics per attack category on Test, DevMetrics on Dev, Benign the test FPR per benign
	// kind, all at Threshold.
	Metrics, DevMetrics []Metrics
	Benign              []BenignFPR
	MaxDiff             float64 // max |ONNX Runtime − Go reference| over Test
	Probe               ProbeResult
	ExtraFiles          []string
	Counts              [3]map[string]int // examples per label of Train, Dev, Test
	TrainN, DevN, TestN int
}

// Run trains on c, writes the ONNX model to c.Out and scores it through ONNX Runtime. The
// same Config gives the same model bytes: one thread, a fixed seed and a fixed order.
func Run(ctx context.Context, c Config) (*Result, error) {
	pspec := c.Preprocessor
	if pspec.Kind == "" {
		pspec = DefaultPreprocessor(infer.FormatSparse, 1<<15)
	}
	targetFPR := c.TargetFPR
	if targetFPR == 0 {
		targetFPR = 0.01
	}
	extras, err := BenignExtras(c.Train, c.ExtraFiles)
	if err != nil {
		return nil, err
	}
	fitEx := append(append(append(slices.Clip(c.Train), extras...), c.Heldout...), c.Added...)
	labels := c.Labels
	if labels == nil {
		labels = LabelsOf(c.Train)
	}
	index := map[string]int{}
	for i, l := range labels {
		index[l] = i
	}
	for _, e := range c.Added {
		if _, ok := index[e.Label]; !ok {
			return nil, fmt.Errorf("train: added example label %q is not one of the model's labels %v", e.Label, labels)
		}
	}
	for _, e := range c.Heldout {
		if _, ok := index[e.Label]; !ok {
			return nil, fmt.Errorf("train: held-out example label %q is not one of the model's labels %v", e.Label, labels)
		}
	}
	pre, err := infer.NewPreprocessor(pspec)
	if err != nil {
		return nil, err
	}
	h, ok := pre.(*infer.HashedNgrams)
	if !ok {
		return nil, fmt.Errorf("train: preprocessor %s: only %s is trainable", pspec.Kind, infer.KindHashedNgrams)
	}
	rows := Featurize(h, fitEx)
	capHeldout(rows, fitEx, len(c.Train)+len(extras), len(c.Heldout))
	y := make([]int, len(fitEx))
	for i, e := range fitEx {
		l, ok := index[e.Label]
		if !ok {
			return nil, fmt.Errorf("train: label %q is not one of %v", e.Label, labels)
		}
		y[i] = l
	}
	to := DefaultOptions()
	if c.Epochs > 0 {
		to.Epochs = c.Epochs
	}
	lin := Fit(rows, y, pspec.Dim, len(labels), to)

	pj, _ := json.Marshal(pspec)
	meta := map[string]string{
		"labels":       strings.Join(labels, ","),
		"preprocessor": string(pj),
		"trainer":      fmt.Sprintf("palisade tools/train: softmax regression, AdaGrad lr=%g l2=%g epochs=%d seed=%d, class-balanced", to.LearningRate, to.L2, to.Epochs, to.Seed),
	}
	build := onnx.LinearSoftmaxSparse
	if pspec.Format == infer.FormatDense {
		build = onnx.LinearSoftmax
	}
	m, err := build(lin, c.Name, meta)
	if err != nil {
		return nil, err
	}
	data, err := onnx.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(c.Out), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.Out, data, 0o644); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	spec := infer.ModelSpec{
		Name: c.Name, File: filepath.Base(c.Out), SHA256: hex.EncodeToString(sum[:]),
		Preprocessor: pspec, Outputs: []string{onnx.OutputProbs, onnx.OutputLogits},
		Labels: labels, Benign: BenignLabel,
	}

	// Score through ONNX Runtime: the numbers are the deployed model's.
	reg, err := OpenRegistry(ctx, c.Library, filepath.Dir(c.Out), spec)
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	devScores, _, err := Score(ctx, reg, c.Name, c.Dev, nil, nil)
	if err != nil {
		return nil, err
	}
	threshold := PickThreshold(devScores, targetFPR)
	spec.Thresholds = map[string]float64{"malicious": threshold}
	testScores, maxDiff, err := Score(ctx, reg, c.Name, c.Test, h, &lin)
	if err != nil {
		return nil, err
	}
	r := &Result{
		Spec: spec, Size: len(data), Options: to, Extras: len(extras), Added: len(c.Added),
		Heldout: countLabels(c.Heldout), HeldoutFile: c.HeldoutFile, Threshold: threshold, TargetFPR: targetFPR,
		Metrics: Evaluate(testScores, threshold), DevMetrics: Evaluate(devScores, threshold), Benign: BenignBreakdown(testScores, threshold),
		MaxDiff: maxDiff, ExtraFiles: c.ExtraFiles, TrainN: len(c.Train), DevN: len(c.Dev), TestN: len(c.Test),
		Counts: [3]map[string]int{countLabels(c.Train), countLabels(c.Dev), countLabels(c.Test)},
	}
	if c.Probe != "" {
		if r.Probe, err = ProbeFPR(ctx, reg, c.Name, c.Probe, threshold); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// capHeldout weighs the held-out examples (fitEx[from:from+n]) of a class at most as much in
// total as the class's other examples (the labelled split, the extras and Config.Added), each
// held-out file (Example.Part) on its own: a part's example of a class that the part has more
// of than the others have weighs others/part's. Calib holds about 6,300 benign texts, mostly
// long (documentation windows, code, paths), and short attacks; fitted at full weight they
// drowned the split's short benign texts and taught the model that a short phrase is an attack
// ("still here", the gateway tests' echo message, scored 0.92; 0.05 before calib). A cap
// shared by several files halved main calib's weight when the wide set's calib was added
// (tools/train/README.md), hence one cap per file. The class weights stay balanced (Fit
// computes them on the weighted counts).
func capHeldout(rows []Row, fitEx []Example, from, n int) {
	type key struct {
		part  int
		label string
	}
	held, other := map[key]float64{}, map[string]float64{}
	for i, e := range fitEx {
		if i >= from && i < from+n {
			held[key{e.Part, e.Label}]++
		} else {
			other[e.Label]++
		}
	}
	for i := from; i < from+n; i++ {
		l := fitEx[i].Label
		if h := held[key{fitEx[i].Part, l}]; h > other[l] && other[l] > 0 {
			rows[i].Weight = other[l] / h
		}
	}
}

// PickThreshold is the rule `make model` picks the detector's threshold by: the lowest
// threshold on 1 - p(benign) whose FPR on the benign scores is at most targetFPR, rounded to
// 4 decimals.
func PickThreshold(s []Scored, targetFPR float64) float64 {
	var benign []float64
	for _, x := range s {
		if x.Label == BenignLabel {
			benign = append(benign, x.Score)
		}
	}
	return math.Round(ThresholdForFPR(benign, targetFPR)*1e4) / 1e4
}

// OpenRegistry loads one model (spec.File under baseDir) into ONNX Runtime, failing when it is
// unavailable.
func OpenRegistry(ctx context.Context, lib, baseDir string, spec infer.ModelSpec) (*infer.Registry, error) {
	reg, err := infer.New(ctx, infer.Options{Models: []infer.ModelSpec{spec}, BaseDir: baseDir, LibraryPath: lib, MaxTexts: 1024})
	if err != nil {
		return nil, err
	}
	if st := reg.Status().Models[0]; !st.Available() {
		reg.Close()
		return nil, fmt.Errorf("model %s unavailable: %s", spec.Name, st.Reason)
	}
	return reg, nil
}

// Score runs every example through the registry in batches of 256. With h and lin it also
// returns the largest difference between ONNX Runtime's probabilities and the Go reference.
func Score(ctx context.Context, reg *infer.Registry, model string, ex []Example, h *infer.HashedNgrams, lin *onnx.Linear) ([]Scored, float64, error) {
	out := make([]Scored, 0, len(ex))
	var maxDiff float64
	spec, _ := reg.Spec(model)
	for start := 0; start < len(ex); start += 256 {
		end := min(start+256, len(ex))
		texts := make([]string, 0, end-start)
		for _, e := range ex[start:end] {
			texts = append(texts, e.Text)
		}
		resp, err := reg.Infer(ctx, abi.InferRequest{Model: model, Texts: texts})
		if err != nil {
			return nil, 0, err
		}
		for i, r := range resp.Results {
			e := ex[start+i]
			out = append(out, Scored{Score: 1 - r.Scores[spec.Benign], Label: e.Label, Category: e.Category, Hard: e.HardNegative, Pred: r.Label})
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

// ProbeResult is how many held-out benign texts were flagged.
type ProbeResult struct {
	Path       string
	N, Flagged int
	Worst      []string // sources of flagged texts, with label and score
}

// FPR is Flagged / N (0 when N is 0).
func (p ProbeResult) FPR() float64 {
	if p.N == 0 {
		return 0
	}
	return float64(p.Flagged) / float64(p.N)
}

// ProbeFPR scores held-out benign texts (JSONL with text and source) and counts those at or
// above the threshold.
func ProbeFPR(ctx context.Context, reg *infer.Registry, model, path string, threshold float64) (ProbeResult, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ProbeResult{}, fmt.Errorf("probe: %w", err)
	}
	var ex []Example
	var sources []string
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e struct{ Text, Source string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return ProbeResult{}, fmt.Errorf("probe: %s:%d: %w", path, i+1, err)
		}
		ex = append(ex, Example{Text: e.Text, Label: BenignLabel})
		sources = append(sources, e.Source)
	}
	scores, _, err := Score(ctx, reg, model, ex, nil, nil)
	if err != nil {
		return ProbeResult{}, err
	}
	p := ProbeResult{Path: path, N: len(scores)}
	for i, s := range scores {
		if s.Score >= threshold {
			p.Flagged++
			p.Worst = append(p.Worst, fmt.Sprintf("%s (%s, %.3f)", sources[i], s.Pred, s.Score))
		}
	}
	return p, nil
}
