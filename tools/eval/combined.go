package main

import (
	"github.com/added060/palisade/plugins/injection/detect"
	"github.com/added060/palisade/tools/eval/score"
)

// The default chain runs the injection rules and the ONNX detector side by side; a call is
// blocked when either stage fires at its own operating point. `go run ./tools/eval -scorer
// combined` scores that pair. Needs `make model` (and ONNX Runtime) like the detector scorer.
func init() {
	scorers["combined"] = func() (score.Scorer, error) {
		d, err := NewDetectorScorer("models/detector.yaml", "")
		if err != nil {
			return nil, err
		}
		return NewCombinedScorer(InjectionScorer{D: detect.New(detect.Options{})}, d), nil
	}
}

// thresholdScorer is a scorer with its own operating point.
type thresholdScorer interface {
	score.Scorer
	score.Threshold
}

// CombinedScorer flags a text when any of its scorers flags it at that scorer's own
// threshold. Each score is first mapped onto a common scale, piecewise linearly and
// monotonically, so that the scorer's threshold lands on 0.5 (0 stays 0, 1 stays 1); the
// combined score is the maximum of the mapped scores. So "combined >= 0.5" is exactly "some
// scorer fires", and AUROC is computed on that maximum.
type CombinedScorer struct{ parts []thresholdScorer }

// NewCombinedScorer combines parts as described on CombinedScorer.
func NewCombinedScorer(parts ...thresholdScorer) CombinedScorer { return CombinedScorer{parts: parts} }

// Score returns the maximum mapped score and the label of the scorer that gave it.
func (c CombinedScorer) Score(text string) (float64, string) {
	best, label := -1.0, score.Benign
	for _, p := range c.parts {
		s, l := p.Score(text)
		if m := calibrate(s, p.Threshold()); m > best {
			best, label = m, l
		}
	}
	if best < 0 {
		best = 0
	}
	return best, label
}

// Threshold is 0.5: every part's operating point after calibrate.
func (CombinedScorer) Threshold() float64 { return 0.5 }

// calibrate maps s in [0,1] so that t goes to 0.5, linearly on each side.
func calibrate(s, t float64) float64 {
	switch {
	case t <= 0:
		return 0.5 + 0.5*s
	case t >= 1:
		return 0.5 * s
	case s < t:
		return 0.5 * s / t
	default:
		return 0.5 + 0.5*(s-t)/(1-t)
	}
}
