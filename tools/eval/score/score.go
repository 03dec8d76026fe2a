package score

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/added060/palisade/host/infer/train"
)

// Scorer scores one text: a maliciousness score in [0,1] and the predicted label
// ("benign" or one of the attack labels).
type Scorer interface {
	Score(text string) (score float64, label string)
}

// Threshold is implemented by scorers that have their own operating point; the report uses
// it unless Options.Threshold is set.
type Threshold interface {
	Threshold() float64
}

// Record is one labelled example of data/split/*.jsonl.
type Record struct {
	Text         string          `json:"text"`
	Label        string          `json:"label"`
	Category     string          `json:"category"`
	HardNegative bool            `json:"hard_negative"`
	Source       string          `json:"source"`
	Group        string          `json:"group"`
	Tool         string          `json:"tool,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
}

// Benign is the label of harmless records.
const Benign = "benign"

// Load reads a JSONL split file.
func Load(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	line := 0
	for sc.Scan() {
		line++
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("load %s:%d: %w", path, line, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return out, nil
}

// Scored is a record with its score and predicted label.
type Scored struct {
	Record
	Score float64
	Pred  string
}

// Row is one attack category's figures.
type Row struct {
	Label    string
	N        int
	Detected int     // score >= threshold
	TPR      float64 // Detected / N
	LabelAcc float64 // share of detected whose predicted label is Label
	AUROC    float64 // this category against all benign
}

// Report holds the figures of one scorer on one split.
type Report struct {
	Scorer       string
	Split        string
	Threshold    float64
	Rows         []Row
	Benign       int
	FalsePos     int
	FPR          float64
	HardNeg      int
	HardNegFP    int
	AttackN      int
	AttackTPR    float64
	AUROC        float64
	TPRAt1FPR    float64 // overall TPR at the highest threshold whose FPR <= 1%
	ThresholdAt1 float64
	Scored       []Scored
}

// Evaluate scores every record and computes the report at threshold.
func Evaluate(name, split string, s Scorer, recs []Record, threshold float64) Report {
	rep := Report{Scorer: name, Split: split, Threshold: threshold}
	rep.Scored = make([]Scored, len(recs))
	for i, r := range recs {
		sc, pred := s.Score(r.Text)
		rep.Scored[i] = Scored{Record: r, Score: sc, Pred: pred}
	}
	var benign, attacks []float64
	byLabel := map[string][]Scored{}
	for _, s := range rep.Scored {
		if s.Label == Benign {
			benign = append(benign, s.Score)
			rep.Benign++
			if s.Score >= threshold {
				rep.FalsePos++
				if s.HardNegative {
					rep.HardNegFP++
				}
			}
			if s.HardNegative {
				rep.HardNeg++
			}
			continue
		}
		attacks = append(attacks, s.Score)
		byLabel[s.Label] = append(byLabel[s.Label], s)
	}
	labels := make([]string, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	detectedAll := 0
	for _, l := range labels {
		ss := byLabel[l]
		row := Row{Label: l, N: len(ss)}
		right := 0
		var pos []float64
		for _, s := range ss {
			pos = append(pos, s.Score)
			if s.Score >= threshold {
				row.Detected++
				if s.Pred == l {
					right++
				}
			}
		}
		row.TPR = ratio(row.Detected, row.N)
		row.LabelAcc = ratio(right, row.Detected)
		row.AUROC = AUROC(pos, benign)
		rep.Rows = append(rep.Rows, row)
		detectedAll += row.Detected
	}
	rep.AttackN = len(attacks)
	rep.AttackTPR = ratio(detectedAll, len(attacks))
	rep.FPR = ratio(rep.FalsePos, rep.Benign)
	rep.AUROC = AUROC(attacks, benign)
	rep.TPRAt1FPR, rep.ThresholdAt1 = TPRAtFPR(attacks, benign, 0.01)
	return rep
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// AUROC is the probability that a random positive scores above a random negative (ties count
// half), computed from ranks: the trainer's own figure (host/infer/train.AUROC), so the model
// card and `make eval` cannot disagree.
func AUROC(pos, neg []float64) float64 { return train.AUROC(pos, neg) }

// TPRAtFPR returns the best TPR over thresholds whose FPR is at most maxFPR, and that threshold.
func TPRAtFPR(pos, neg []float64, maxFPR float64) (float64, float64) {
	if len(pos) == 0 || len(neg) == 0 {
		return 0, 0
	}
	cands := append(append([]float64{}, pos...), neg...)
	sort.Float64s(cands)
	bestTPR, bestT := 0.0, 1.0
	for i := len(cands) - 1; i >= 0; i-- {
		t := cands[i]
		if i < len(cands)-1 && cands[i+1] == t {
			continue
		}
		fp := 0
		for _, s := range neg {
			if s >= t {
				fp++
			}
		}
		if float64(fp)/float64(len(neg)) > maxFPR {
			break
		}
		tp := 0
		for _, s := range pos {
			if s >= t {
				tp++
			}
		}
		if tpr := float64(tp) / float64(len(pos)); tpr >= bestTPR {
			bestTPR, bestT = tpr, t
		}
	}
	return bestTPR, bestT
}

// Print writes the report as a plain-text table.
func Print(w io.Writer, rep Report) {
	fmt.Fprintf(w, "scorer %s on %s split, threshold %.3f\n", rep.Scorer, rep.Split, rep.Threshold)
	fmt.Fprintf(w, "%-18s %6s %8s %8s %8s\n", "category", "n", "TPR", "label_ok", "AUROC")
	fmt.Fprintln(w, strings.Repeat("-", 52))
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%-18s %6d %7.2f%% %7.2f%% %8.4f\n", r.Label, r.N, 100*r.TPR, 100*r.LabelAcc, r.AUROC)
	}
	fmt.Fprintln(w, strings.Repeat("-", 52))
	fmt.Fprintf(w, "%-18s %6d %7.2f%% %8s %8.4f\n", "all attacks", rep.AttackN, 100*rep.AttackTPR, "", rep.AUROC)
	fmt.Fprintf(w, "benign FPR         %6d %7.2f%%  (%d false positives; hard negatives %d/%d)\n",
		rep.Benign, 100*rep.FPR, rep.FalsePos, rep.HardNegFP, rep.HardNeg)
	fmt.Fprintf(w, "TPR at FPR<=1%%: %.2f%% (threshold %.3f)\n", 100*rep.TPRAt1FPR, rep.ThresholdAt1)
}

// PrintErrors lists up to n misses (attacks under threshold) and false positives, only of
// label when it is not empty.
func PrintErrors(w io.Writer, rep Report, n int, label string) {
	shown := 0
	for _, s := range rep.Scored {
		if label != "" && s.Label != label {
			continue
		}
		miss := s.Label != Benign && s.Score < rep.Threshold
		fp := s.Label == Benign && s.Score >= rep.Threshold
		if !miss && !fp || shown >= n {
			continue
		}
		shown++
		kind := "MISS"
		if fp {
			kind = "FP  "
		}
		t := s.Text
		if len(t) > 160 {
			t = t[:160]
		}
		fmt.Fprintf(w, "%s %-17s %.2f %-17s %q\n", kind, s.Label, s.Score, s.Pred, t)
	}
}
