package train

import (
	"slices"
	"sort"
)

// Scored is one example's malicious score (1 - p(benign)) and its truth.
type Scored struct {
	Score    float64
	Label    string // true label
	Category string // benign category (file_path, sql...) or ""
	Hard     bool   // a hard negative
	Pred     string // arg-max label
}

// BenignFPR is the false-positive rate on one kind of benign text.
type BenignFPR struct {
	Category string  `json:"category"`
	N        int     `json:"n"`
	FP       int     `json:"fp"`
	FPR      float64 `json:"fpr"`
}

// BenignBreakdown gives the FPR per benign category, then for hard negatives.
func BenignBreakdown(s []Scored, t float64) []BenignFPR {
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
		if x.Label != BenignLabel {
			continue
		}
		cat := x.Category
		if cat == "" {
			cat = "other"
		}
		count(cat, x.Score >= t)
	}
	slices.Sort(names)
	for _, x := range s {
		if x.Label == BenignLabel && x.Hard {
			count("(hard negatives)", x.Score >= t)
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

// Evaluate computes per-category and overall metrics at threshold t.
func Evaluate(s []Scored, t float64) []Metrics {
	var neg []float64
	fp := 0
	for _, x := range s {
		if x.Label == BenignLabel {
			neg = append(neg, x.Score)
			if x.Score >= t {
				fp++
			}
		}
	}
	cats := map[string][]Scored{}
	var names []string
	for _, x := range s {
		if x.Label == BenignLabel {
			continue
		}
		if _, ok := cats[x.Label]; !ok {
			names = append(names, x.Label)
		}
		cats[x.Label] = append(cats[x.Label], x)
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
			pos = append(pos, x.Score)
			if x.Score >= t {
				tp++
				if x.Pred == name {
					right++
				}
			}
		}
		allPos = append(allPos, pos...)
		allTP += tp
		allRight += right
		out = append(out, Metrics{
			Category: name, Positives: len(pos), Negatives: len(neg),
			TPR: float64(tp) / float64(len(pos)), FPR: fpr, AUROC: AUROC(pos, neg),
			LabelAcc: float64(right) / float64(len(pos)),
		})
	}
	if len(allPos) > 0 {
		out = append(out, Metrics{
			Category: "all", Positives: len(allPos), Negatives: len(neg),
			TPR: float64(allTP) / float64(len(allPos)), FPR: fpr, AUROC: AUROC(allPos, neg),
			LabelAcc: float64(allRight) / float64(len(allPos)),
		})
	}
	return out
}

// auroc is the probability that a random positive outscores a random negative (ties count
// half): the same figure make eval prints.
// AUROC is the probability that a random positive outscores a random negative (ties count
// half), from ranks. tools/eval/score.AUROC (`make eval`) is this function, so the model card
// and the evaluation report the same figure.
func AUROC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return 0
	}
	type item struct {
		s   float64
		pos bool
	}
	all := make([]item, 0, len(pos)+len(neg))
	for _, s := range pos {
		all = append(all, item{s, true})
	}
	for _, s := range neg {
		all = append(all, item{s, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s < all[j].s })
	rankSum := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].s == all[i].s {
			j++
		}
		avg := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if all[k].pos {
				rankSum += avg
			}
		}
		i = j
	}
	np, nn := float64(len(pos)), float64(len(neg))
	return (rankSum - np*(np+1)/2) / (np * nn)
}

// ThresholdForFPR returns the lowest threshold whose FPR on the benign
// scores is at most target.
func ThresholdForFPR(benign []float64, target float64) float64 {
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
	return NextAbove(t)
}

func NextAbove(t float64) float64 {
	if t >= 1 {
		return 1
	}
	return t + 1e-6
}
