package train

import (
	"slices"
	"testing"

	"github.com/added060/palisade/host/infer"
)

// TestFitDeterministic: the same examples and options give the same weights, bit for bit; an
// added example changes them.
func TestFitDeterministic(t *testing.T) {
	pre, err := infer.NewPreprocessor(DefaultPreprocessor(infer.FormatSparse, 1024))
	if err != nil {
		t.Fatal(err)
	}
	h := pre.(*infer.HashedNgrams)
	ex := []Example{{Text: "read the notes", Label: BenignLabel}, {Text: "' OR 1=1 --", Label: "sql_injection"}, {Text: "list my files", Label: BenignLabel}}
	y := []int{0, 1, 0}
	o := DefaultOptions()
	o.Epochs = 2
	a := Fit(Featurize(h, ex), y, 1024, 2, o)
	b := Fit(Featurize(h, ex), y, 1024, 2, o)
	if !slices.Equal(a.W, b.W) || !slices.Equal(a.B, b.B) {
		t.Fatal("two fits of the same data differ")
	}
	c := Fit(Featurize(h, append(ex, Example{Text: "x' UNION SELECT 1", Label: "sql_injection"})), append(y, 1), 1024, 2, o)
	if slices.Equal(a.W, c.W) {
		t.Fatal("an added example changed nothing")
	}
}

func TestPickThreshold(t *testing.T) {
	var s []Scored
	for i := range 100 {
		s = append(s, Scored{Score: float64(i)/100 + 0.00007, Label: BenignLabel})
	}
	s = append(s, Scored{Score: 0.995, Label: "xss"})
	// 1% of 100 benign may be flagged: just above the 99th, 0.98007, to 4 decimals.
	got := PickThreshold(s, 0.01)
	if got != 0.9801 {
		t.Errorf("PickThreshold = %v, want 0.9801", got)
	}
	flagged := 0
	for _, x := range s {
		if x.Label == BenignLabel && x.Score >= got {
			flagged++
		}
	}
	if flagged != 1 {
		t.Errorf("%d benign flagged at %v, want 1", flagged, got)
	}
}

// TestCapHeldout: a class's held-out examples weigh at most as much in total as its other
// examples; a class with fewer held-out examples, or none other, keeps full weight.
func TestCapHeldout(t *testing.T) {
	ex := []Example{
		{Label: BenignLabel}, {Label: "xss"}, {Label: "xss"}, // the split and extras
		{Label: BenignLabel}, {Label: BenignLabel}, {Label: BenignLabel}, {Label: BenignLabel}, // held out
		{Label: "xss"}, {Label: "ssrf"},
	}
	rows := make([]Row, len(ex))
	capHeldout(rows, ex, 3, 6)
	for i, want := range []float64{0, 0, 0, 0.25, 0.25, 0.25, 0.25, 0, 0} {
		if rows[i].Weight != want {
			t.Errorf("row %d (%s): weight %v, want %v", i, ex[i].Label, rows[i].Weight, want)
		}
	}
}

// TestCapHeldoutPerFile: each held-out file (Example.Part) is capped on its own against the
// class's examples outside the held-out ones, so a second file does not lower the first's
// weight.
func TestCapHeldoutPerFile(t *testing.T) {
	ex := []Example{
		{Label: BenignLabel}, {Label: BenignLabel}, // the split and extras
		{Label: BenignLabel}, {Label: BenignLabel}, {Label: BenignLabel}, {Label: BenignLabel}, // file 0
		{Label: BenignLabel, Part: 1}, {Label: BenignLabel, Part: 1}, {Label: BenignLabel, Part: 1}, {Label: BenignLabel, Part: 1}, // file 1
		{Label: "xss", Part: 1},
	}
	rows := make([]Row, len(ex))
	capHeldout(rows, ex, 2, 9)
	for i, want := range []float64{0, 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0} {
		if rows[i].Weight != want {
			t.Errorf("row %d (%s, part %d): weight %v, want %v", i, ex[i].Label, ex[i].Part, rows[i].Weight, want)
		}
	}
}

// TestFitOnTop: an example marked OnTop is left out of the class-balanced counts, so the
// class's other examples keep the weight they had without it (the fit differs from one where
// the same example is counted), and the fit is still the same twice.
func TestFitOnTop(t *testing.T) {
	pre, err := infer.NewPreprocessor(DefaultPreprocessor(infer.FormatSparse, 1024))
	if err != nil {
		t.Fatal(err)
	}
	h := pre.(*infer.HashedNgrams)
	ex := []Example{
		{Text: "read the notes", Label: BenignLabel}, {Text: "' OR 1=1 --", Label: "sql_injection"},
		{Text: "list my files", Label: BenignLabel}, {Text: "the manual page of ls", Label: BenignLabel, OnTop: true},
	}
	y := []int{0, 1, 0, 0}
	o := DefaultOptions()
	o.Epochs = 2
	rows := Featurize(h, ex)
	if !rows[3].OnTop || rows[0].OnTop {
		t.Fatalf("Featurize: OnTop %v %v, want false true", rows[0].OnTop, rows[3].OnTop)
	}
	a, b := Fit(rows, y, 1024, 2, o), Fit(Featurize(h, ex), y, 1024, 2, o)
	if !slices.Equal(a.W, b.W) || !slices.Equal(a.B, b.B) {
		t.Fatal("two fits with an OnTop example differ")
	}
	counted := slices.Clone(ex)
	counted[3].OnTop = false
	c := Fit(Featurize(h, counted), y, 1024, 2, o)
	if slices.Equal(a.W, c.W) {
		t.Fatal("OnTop changed nothing: the example was counted in the class weights")
	}
}
