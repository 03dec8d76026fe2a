package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/tools/eval/score"
)

// The ONNX detector (plugins/detector's model, run by host/infer) as a
// scorer: `go run ./tools/eval -scorer detector`. Needs `make model`.
func init() {
	scorers["detector"] = func() (score.Scorer, error) { return NewDetectorScorer("models/detector.yaml", "") }
}

// DetectorScorer scores a text with the trained detector model through ONNX
// Runtime, exactly as the infer host function does.
type DetectorScorer struct {
	reg  *infer.Registry
	spec infer.ModelSpec
}

// NewDetectorScorer opens the model spec at specPath; the .onnx is looked for
// in modelDir ("" = $PALISADE_BUILD/models, else build/models).
func NewDetectorScorer(specPath, modelDir string) (*DetectorScorer, error) {
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("detector scorer: %w", err)
	}
	var spec infer.ModelSpec
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("detector scorer: %s: %w", specPath, err)
	}
	if modelDir == "" {
		modelDir = filepath.Join("build", "models")
		if b := os.Getenv("PALISADE_BUILD"); b != "" {
			modelDir = filepath.Join(b, "models")
		}
	}
	reg, err := infer.New(context.Background(), infer.Options{Models: []infer.ModelSpec{spec}, BaseDir: modelDir})
	if err != nil {
		return nil, fmt.Errorf("detector scorer: %w (run make model)", err)
	}
	if st := reg.Status().Models[0]; !st.Available() {
		reg.Close()
		return nil, fmt.Errorf("detector scorer: model unavailable: %s", st.Reason)
	}
	return &DetectorScorer{reg: reg, spec: spec}, nil
}

// Score returns 1 - p(benign) and the arg-max label. A failed inference
// panics: a silent zero would flatter the false-positive rate.
func (d *DetectorScorer) Score(text string) (float64, string) {
	resp, err := d.reg.Infer(context.Background(), abi.InferRequest{Model: d.spec.Name, Texts: []string{text}})
	if err != nil {
		panic(fmt.Sprintf("detector scorer: %v", err))
	}
	r := resp.Results[0]
	return 1 - r.Scores[d.spec.Benign], r.Label
}

// Threshold is the model's dev-set operating point from models/detector.yaml.
func (d *DetectorScorer) Threshold() float64 {
	if t, ok := d.spec.Thresholds["malicious"]; ok {
		return t
	}
	return 0.5
}
