package main

import (
	"github.com/added060/palisade/tools/eval/score"
	"slices"
)

// scored is one example's malicious score (1 - p(benign)) and its truth.
type scored struct {
	score    float64
	label    string // true label
	category string // benign category (file_path, sql...) or ""
	hard     bool   // a hard negative
	pred     string // arg-max label
}

// BenignFPR is the false-positive rate on one kind of benign text.
type BenignFPR struct {
	Category string  `json:"category"`
	N        int     `json:"n"`
	FP       int     `json:"fp"`
	FPR      float64 `json:"fpr"`
}

// benignBreakdown gives the FPR per benign category, then for hard negatives.
func benignBreakdown(s []scored, t float64) []BenignFPR {
	by := map[string]*BenignFPR{}
	var names []string
	count := func(name string, flagged bool) {
		b, ok := by[name]
		if !ok {
			b = &BenignFPR{Category: name}
			by[name] = b
			names = append(names, name)
		}
		b.N++
		if flagged {
			b.FP++
		}
	}
	for _, x := range s {
		if x.label != BenignLabel {
			continue
		}
		cat := x.category
		if cat == "" {
			cat = "other"
		}
		count(cat, x.score >= t)
	}
	slices.Sort(names)
	for _, x := range s {
		if x.label == BenignLabel && x.hard {
			count("(hard negatives)", x.score >= t)
		}
	}
	out := make([]BenignFPR, 0, len(names))
	for _, n := range names {
		b := by[n]
		b.FPR = float64(b.FP) / float64(b.N)
		out = append(out, *b)
	}
	return out
}

// Metrics for one attack category against all benign examples.
type Metrics struct {
	Category  string  `json:"category"`
	Positives int     `json:"positives"`
	Negatives int     `json:"negatives"`
	TPR       float64 `json:"tpr"`
	FPR       float64 `json:"fpr"`
	AUROC     float64 `json:"auroc"`
	LabelAcc  float64 `json:"label_accuracy"` // detected and the arg-max names the right category
}

// evaluate computes per-category and overall metrics at threshold t.
func evaluate(s []scored, t float64) []Metrics {
	var neg []float64
	fp := 0
	for _, x := range s {
		if x.label == BenignLabel {
			neg = append(neg, x.score)
			if x.score >= t {
				fp++
			}
		}
	}
	cats := map[string][]scored{}
	var names []string
	for _, x := range s {
		if x.label == BenignLabel {
			continue
		}
		if _, ok := cats[x.label]; !ok {
			names = append(names, x.label)
		}
		cats[x.label] = append(cats[x.label], x)
	}
	slices.Sort(names)
	fpr := 0.0
	if len(neg) > 0 {
		fpr = float64(fp) / float64(len(neg))
	}
	var out []Metrics
	var allPos []float64
	allTP, allRight := 0, 0
	for _, name := range names {
		var pos []float64
		tp, right := 0, 0
		for _, x := range cats[name] {
			pos = append(pos, x.score)
			if x.score >= t {
				tp++
				if x.pred == name {
					right++
				}
			}
		}
		allPos = append(allPos, pos...)
		allTP += tp
		allRight += right
		out = append(out, Metrics{
			Category: name, Positives: len(pos), Negatives: len(neg),
			TPR: float64(tp) / float64(len(pos)), FPR: fpr, AUROC: auroc(pos, neg),
			LabelAcc: float64(right) / float64(len(pos)),
		})
	}
	if len(allPos) > 0 {
		out = append(out, Metrics{
			Category: "all", Positives: len(allPos), Negatives: len(neg),
			TPR: float64(allTP) / float64(len(allPos)), FPR: fpr, AUROC: auroc(allPos, neg),
			LabelAcc: float64(allRight) / float64(len(allPos)),
		})
	}
	return out
}

// auroc is the probability that a random positive outscores a random negative (ties count
// half): the same figure make eval prints.
func auroc(pos, neg []float64) float64 { return score.AUROC(pos, neg) }

// thresholdForFPR returns the lowest threshold whose FPR on the benign
// scores is at most target.
func thresholdForFPR(benign []float64, target float64) float64 {
	s := slices.Clone(benign)
	slices.Sort(s)
	allowed := int(target * float64(len(s)))
	// Scores at or above t are flagged; keep at most `allowed` benign ones.
	idx := len(s) - allowed - 1
	if idx < 0 {
		return 0
	}
	t := s[idx]
	// Strictly above the idx-th benign score, so it is not flagged.
	return nextAbove(t)
}

func nextAbove(t float64) float64 {
	if t >= 1 {
		return 1
	}
	return t + 1e-6
}
