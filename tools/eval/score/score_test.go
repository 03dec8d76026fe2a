package score

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestAUROC(t *testing.T) {
	tests := []struct {
		pos, neg []float64
		want     float64
	}{
		{[]float64{0.9, 0.8}, []float64{0.1, 0.2}, 1},
		{[]float64{0.1, 0.2}, []float64{0.9, 0.8}, 0},
		{[]float64{0.5}, []float64{0.5}, 0.5},
		{[]float64{0.9, 0.4}, []float64{0.5, 0.1}, 0.75},
	}
	for _, tc := range tests {
		if got := AUROC(tc.pos, tc.neg); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("AUROC(%v, %v) = %v, want %v", tc.pos, tc.neg, got, tc.want)
		}
	}
}

func TestTPRAtFPR(t *testing.T) {
	neg := make([]float64, 100)
	for i := range neg {
		neg[i] = float64(i) / 1000 // 0 .. 0.099
	}
	neg[99] = 0.95 // one benign outlier: 1% FPR allows it
	pos := []float64{0.96, 0.9, 0.5, 0.05}
	tpr, thr := TPRAtFPR(pos, neg, 0.01)
	if tpr != 0.75 || thr != 0.5 {
		t.Errorf("TPRAtFPR = %v at %v, want 0.75 at 0.5", tpr, thr)
	}
}

type fixed map[string]float64

func (f fixed) Score(text string) (float64, string) {
	if strings.HasPrefix(text, "bad") {
		return f[text], "sql_injection"
	}
	return f[text], Benign
}

func TestEvaluateAndPrint(t *testing.T) {
	recs := []Record{
		{Text: "bad1", Label: "sql_injection"}, {Text: "bad2", Label: "sql_injection"},
		{Text: "bad3", Label: "xss"}, {Text: "ok1", Label: Benign}, {Text: "ok2", Label: Benign, HardNegative: true},
	}
	s := fixed{"bad1": 0.9, "bad2": 0.3, "bad3": 0.8, "ok1": 0.1, "ok2": 0.7}
	rep := Evaluate("fixed", "test", s, recs, 0.5)
	if rep.AttackTPR != 2.0/3 || rep.FalsePos != 1 || rep.HardNegFP != 1 || rep.FPR != 0.5 {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Label != "sql_injection" || rep.Rows[0].TPR != 0.5 || rep.Rows[1].LabelAcc != 0 {
		t.Errorf("rows %+v", rep.Rows)
	}
	var b bytes.Buffer
	Print(&b, rep)
	PrintErrors(&b, rep, 10, "")
	out := b.String()
	for _, want := range []string{"sql_injection", "50.00%", "benign FPR", "MISS sql_injection", "FP   benign"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
