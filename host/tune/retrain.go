package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/infer/train"
	"github.com/added060/palisade/sdk/go/exclude"
)

// Retrain is what retraining the detector's model with the labelled texts did, or why it did
// not happen (Skipped).
type Retrain struct {
	Stage string `json:"stage"`           // the detector stage whose model it is
	Model string `json:"model,omitempty"` // the model's name (bundle.yaml models:)
	// Skipped says why the model was not retrained ("" = it was).
	Skipped string `json:"skipped,omitempty"`

	// The labelled texts added to the training data: false positives as benign, false
	// negatives as their attack category.
	AddedBenign int            `json:"added_benign"`
	AddedAttack int            `json:"added_attack"`
	Added       []AddedExample `json:"added,omitempty"`

	OldSHA256    string  `json:"old_sha256,omitempty"`
	NewSHA256    string  `json:"new_sha256,omitempty"`
	OldThreshold float64 `json:"old_threshold,omitempty"` // the model's thresholds.malicious
	NewThreshold float64 `json:"new_threshold,omitempty"` // re-picked on dev by tools/train's rule
	// StageThreshold is the stage's own cut (config threshold, 0.9 when unset): the flagged
	// counts below are at it.
	StageThreshold  float64 `json:"stage_threshold,omitempty"`
	FPFlaggedBefore int     `json:"fp_flagged_before"` // added benign texts the old model flags
	FPFlaggedAfter  int     `json:"fp_flagged_after"`  // ... and the new one
	FNFlaggedBefore int     `json:"fn_flagged_before"` // added attack texts the old model flags
	FNFlaggedAfter  int     `json:"fn_flagged_after"`

	// Before and After are the old and the new model's metrics on the test split, each at its
	// own threshold (the model card's figures).
	Before []train.Metrics `json:"before,omitempty"`
	After  []train.Metrics `json:"after,omitempty"`

	TrainSeconds float64 `json:"train_seconds,omitempty"`
	CardDiff     string  `json:"card_diff,omitempty"` // the proposal's file holding the model card diff
}

// AddedExample is one labelled text added to the training data.
type AddedExample struct {
	Ref   string `json:"ref"`   // the labelled decision's audit id
	Label string `json:"label"` // the training label
	Path  string `json:"path"`  // where in the call the text was
	// ScoreBefore and ScoreAfter are the old and the new model's 1 - p(benign) of the text.
	ScoreBefore float64 `json:"score_before"`
	ScoreAfter  float64 `json:"score_after"`
}

// CardDiffFile is the proposal's file holding the model card diff when the detector was
// retrained.
const CardDiffFile = "MODEL_CARD.diff.md"

// genericAttack is the label a false negative gets when nothing names its category (when the
// model has it; else the model's first attack label).
const genericAttack = "prompt_injection"

// detectorText is what a labelled decision gives the detector's training data: the text a
// detector stage flagged on a false positive (one candidate), or the string arguments of a
// false negative it missed (the candidate the old model scores highest is added: the one
// closest to being caught, so the others, often short benign values, are not taught as
// attacks).
type detectorText struct {
	ref, stage string
	fn         bool
	hints      []string // false negative: words of the note, then the stages' labels
	cands      []leaf
}

type leaf struct{ path, text string }

// collectFP records the texts a detector stage flagged on a decision marked false positive.
func (p *proposer) collectFP(ev audit.Event, stage string, paths []string) {
	if len(ev.Arguments) == 0 {
		p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: detector false positive; its arguments were not recorded (audit.arguments: full), so its text cannot retrain the model", ev.Label.Ref))
		return
	}
	for _, path := range paths {
		text, ok := textAt(ev.Arguments, path)
		if !ok {
			p.r.Unused = append(p.r.Unused, fmt.Sprintf("%s: detector false positive at %s: the text is not in the recorded arguments, not added to the training data", ev.Label.Ref, path))
			continue
		}
		p.texts = append(p.texts, detectorText{ref: ev.Label.Ref, stage: stage, cands: []leaf{{path, text}}})
	}
}

// collectFN records the string arguments of a decision marked false negative that a detector
// stage looked at and did not flag.
func (p *proposer) collectFN(ev audit.Event) {
	stage := ""
	for _, s := range ev.Stages {
		if p.kinds[s.Stage] == kindDetector && !s.Skipped && s.Error == "" && !s.Observe && !flagged(s.Action) {
			stage = s.Stage
			break
		}
	}
	var v any
	if stage == "" || json.Unmarshal(ev.Arguments, &v) != nil {
		return
	}
	d := detectorText{ref: ev.Label.Ref, stage: stage, fn: true}
	walkLeaves("arguments", v, func(path, s string) {
		if len(strings.TrimSpace(s)) >= 4 {
			d.cands = append(d.cands, leaf{path, s})
		}
	})
	if len(d.cands) == 0 {
		return
	}
	d.hints = strings.FieldsFunc(strings.ToLower(ev.Label.Note), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_') })
	for _, s := range ev.Stages {
		d.hints = append(d.hints, s.Labels...)
		for _, e := range s.Evidence {
			d.hints = append(d.hints, e.Label)
		}
	}
	p.texts = append(p.texts, d)
}

// walkLeaves calls f with every string under v and its path, as the detector names paths
// (`arguments.items[3].text`), in a fixed order.
func walkLeaves(path string, v any, f func(path, s string)) {
	switch v := v.(type) {
	case string:
		f(path, v)
	case []any:
		for i, x := range v {
			walkLeaves(path+"["+strconv.Itoa(i)+"]", x, f)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			walkLeaves(path+"."+k, v[k], f)
		}
	}
}

// textAt returns the string at a detector evidence path in the call's arguments: the path
// walks object keys and array indices from `arguments`, and a trailing window
// (`[start:end]`, byte offsets) cuts the string as the detector did.
func textAt(args json.RawMessage, path string) (string, bool) {
	base := exclude.WithoutWindow(path)
	win := path[len(base):]
	var v any
	if json.Unmarshal(args, &v) != nil {
		return "", false
	}
	found, ok := "", false
	walkLeaves("arguments", v, func(p, s string) {
		if p == base && !ok {
			found, ok = s, true
		}
	})
	if !ok || win == "" {
		return found, ok
	}
	a, b, _ := strings.Cut(win[1:len(win)-1], ":")
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || start > end || end > len(found) {
		return "", false
	}
	return found[start:end], true
}

// retrain adds the collected texts to the training data, retrains the detector's model and
// scores both models. It fills p.r.Detector; the new model is written by write.
func (p *proposer) retrain(ctx context.Context, m *bundle.Manifest) {
	if len(p.texts) == 0 {
		return
	}
	stage := p.texts[0].stage
	rt := &Retrain{Stage: stage}
	p.r.Detector = rt
	skip := func(format string, a ...any) { rt.Skipped = fmt.Sprintf(format, a...) }
	if p.o.TrainData == "" {
		skip("no training data given (--train-data DIR): the detector's model was not retrained")
		return
	}
	var st *bundle.StageSpec
	for i := range m.Stages {
		if m.Stages[i].Name == stage {
			st = &m.Stages[i]
		}
	}
	if st == nil {
		skip("stage %s is not in bundle.yaml", stage)
		return
	}
	name, _ := st.Config["model"].(string)
	rt.Model = name
	spec, idx, ok := modelSpec(m, name)
	if !ok {
		skip("stage %s's model %q is not in bundle.yaml models:", stage, name)
		return
	}
	rt.StageThreshold = 0.9
	if t, ok := number(st.Config["threshold"]); ok && t > 0 {
		rt.StageThreshold = t
	}
	split := [3][]train.Example{}
	for i, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl"} {
		fp := filepath.Join(p.o.TrainData, f)
		if _, err := os.Stat(fp); err != nil {
			skip("training data not found (%s): the detector's model was not retrained", fp)
			return
		}
		ex, err := train.ReadExamples(fp)
		if err != nil {
			skip("training data: %v: the detector's model was not retrained", err)
			return
		}
		split[i] = ex
	}
	if got := train.LabelsOf(split[0]); !slices.Equal(got, spec.Labels) {
		skip("the training data's labels %v are not the model's %v: the detector's model was not retrained", got, spec.Labels)
		return
	}
	baseFile := spec.File
	if !filepath.IsAbs(baseFile) {
		baseFile, _ = filepath.Abs(filepath.Join(p.o.Bundle, baseFile))
	}
	old := spec
	old.File = baseFile
	reg, err := train.OpenRegistry(ctx, p.o.ONNXRuntime, "", old)
	if err != nil {
		skip("the bundle's model could not be loaded (%v): the detector's model was not retrained", err)
		return
	}
	rt.OldSHA256, rt.OldThreshold = spec.SHA256, spec.Thresholds["malicious"]
	if rt.OldSHA256 == "" {
		rt.OldSHA256 = fileSHA256(baseFile)
	}

	// Which text of each false negative, and under which label.
	var added []train.Example
	for _, d := range p.texts {
		best := 0
		if len(d.cands) > 1 {
			ex := make([]train.Example, len(d.cands))
			for i, c := range d.cands {
				ex[i] = train.Example{Text: c.text, Label: train.BenignLabel}
			}
			sc, _, err := train.Score(ctx, reg, name, ex, nil, nil)
			if err != nil {
				reg.Close()
				skip("scoring with the bundle's model: %v", err)
				return
			}
			for i := range sc {
				if sc[i].Score > sc[best].Score {
					best = i
				}
			}
		}
		label := train.BenignLabel
		if d.fn {
			label = attackLabel(d.hints, spec.Labels)
		}
		added = append(added, train.Example{Text: d.cands[best].text, Label: label, Category: "tune"})
		rt.Added = append(rt.Added, AddedExample{Ref: d.ref, Label: label, Path: d.cands[best].path})
	}
	before, err := scoreWith(ctx, reg, name, added)
	if err == nil && rt.OldThreshold == 0 {
		var dev []train.Scored
		if dev, _, err = train.Score(ctx, reg, name, split[1], nil, nil); err == nil {
			rt.OldThreshold = train.PickThreshold(dev, 0.01)
		}
	}
	var testBefore []train.Scored
	if err == nil {
		testBefore, _, err = train.Score(ctx, reg, name, split[2], nil, nil)
	}
	reg.Close()
	if err != nil {
		skip("scoring with the bundle's model: %v", err)
		return
	}
	rt.Before = train.Evaluate(testBefore, rt.OldThreshold)

	dir, err := os.MkdirTemp("", "palisade-tune-model-")
	if err != nil {
		skip("%v", err)
		return
	}
	p.cleanup = append(p.cleanup, func() { _ = os.RemoveAll(dir) })
	start := time.Now()
	var heldout []train.Example
	if p.o.ExtraHeldout != "" {
		if heldout, err = train.HeldoutExamples(p.o.ExtraHeldout, spec.Labels); err != nil {
			skip("training data: %v: the detector's model was not retrained", err)
			return
		}
	}
	res, err := train.Run(ctx, train.Config{
		Train: split[0], Dev: split[1], Test: split[2], ExtraFiles: p.o.ExtraBenign, Added: added,
		Heldout: heldout, HeldoutFile: p.o.ExtraHeldout,
		Name: name, Out: filepath.Join(dir, filepath.Base(spec.File)), Preprocessor: spec.Preprocessor, Labels: spec.Labels,
		Epochs: p.o.Epochs, Library: p.o.ONNXRuntime,
	})
	if err != nil {
		skip("retraining failed: %v", err)
		return
	}
	rt.TrainSeconds = time.Since(start).Seconds()
	rt.NewSHA256, rt.NewThreshold, rt.After = res.Spec.SHA256, res.Threshold, res.Metrics
	nreg, err := train.OpenRegistry(ctx, p.o.ONNXRuntime, dir, res.Spec)
	if err != nil {
		skip("the retrained model could not be loaded: %v", err)
		return
	}
	after, err := scoreWith(ctx, nreg, name, added)
	nreg.Close()
	if err != nil {
		skip("scoring with the retrained model: %v", err)
		return
	}
	for i := range added {
		a := &rt.Added[i]
		a.ScoreBefore, a.ScoreAfter = round4(before[i]), round4(after[i])
		fb, fa := before[i] >= rt.StageThreshold, after[i] >= rt.StageThreshold
		if a.Label == train.BenignLabel {
			rt.AddedBenign++
			rt.FPFlaggedBefore += b2i(fb)
			rt.FPFlaggedAfter += b2i(fa)
		} else {
			rt.AddedAttack++
			rt.FNFlaggedBefore += b2i(fb)
			rt.FNFlaggedAfter += b2i(fa)
		}
	}
	p.model = &newModel{file: res.Spec.File, dir: dir, relFile: spec.File, index: idx, spec: res.Spec}
	rt.CardDiff = CardDiffFile
}

// newModel is a retrained model waiting to be written into the proposal.
type newModel struct {
	dir, file string // where Run wrote it
	relFile   string // its path in the bundle (the models: entry's file)
	index     int    // its entry in models:
	spec      infer.ModelSpec
}

func scoreWith(ctx context.Context, reg *infer.Registry, model string, ex []train.Example) ([]float64, error) {
	sc, _, err := train.Score(ctx, reg, model, ex, nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(sc))
	for i, s := range sc {
		out[i] = s.Score
	}
	return out, nil
}

// attackLabel is the first hint that is one of the model's attack labels, else genericAttack
// when the model has it, else its first attack label.
func attackLabel(hints, labels []string) string {
	for _, h := range hints {
		if h != train.BenignLabel && slices.Contains(labels, h) {
			return h
		}
	}
	if slices.Contains(labels, genericAttack) {
		return genericAttack
	}
	for _, l := range labels {
		if l != train.BenignLabel {
			return l
		}
	}
	return train.BenignLabel
}

// modelSpec finds the models: entry named name.
func modelSpec(m *bundle.Manifest, name string) (infer.ModelSpec, int, bool) {
	for i, n := range m.Models {
		var s infer.ModelSpec
		if n.Decode(&s) == nil && s.Name == name {
			return s, i, true
		}
	}
	return infer.ModelSpec{}, 0, false
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cardDiff renders the model card diff: what was added, and the figures before and after.
func cardDiff(rt *Retrain) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Model card diff: %s (palisade tune)\n\n", rt.Model)
	p("The detector stage `%s`'s model, retrained by `palisade tune` on the base training data plus %d labelled texts ", rt.Stage, len(rt.Added))
	p("(%d false positives as `benign`, %d false negatives as their attack category), with the same deterministic trainer as `make model` (host/infer/train).\n\n", rt.AddedBenign, rt.AddedAttack)
	p("| | before | after |\n|---|---|---|\n")
	p("| sha256 | `%s` | `%s` |\n", rt.OldSHA256, rt.NewSHA256)
	p("| threshold (`thresholds.malicious`, dev FPR ≤ 1%%) | %.4f | %.4f |\n", rt.OldThreshold, rt.NewThreshold)
	p("| labelled false positives flagged at the stage's threshold %.4g | %d of %d | %d of %d |\n", rt.StageThreshold, rt.FPFlaggedBefore, rt.AddedBenign, rt.FPFlaggedAfter, rt.AddedBenign)
	p("| labelled false negatives flagged at the stage's threshold %.4g | %d of %d | %d of %d |\n", rt.StageThreshold, rt.FNFlaggedBefore, rt.AddedAttack, rt.FNFlaggedAfter, rt.AddedAttack)
	p("\n## Test split, per category (each model at its own threshold)\n\n")
	p("| category | positives | TPR before | TPR after | FPR before | FPR after | AUROC before | AUROC after |\n|---|---|---|---|---|---|---|---|\n")
	after := map[string]train.Metrics{}
	for _, m := range rt.After {
		after[m.Category] = m
	}
	for _, m := range rt.Before {
		a := after[m.Category]
		p("| %s | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |\n", m.Category, m.Positives, m.TPR, a.TPR, m.FPR, a.FPR, m.AUROC, a.AUROC)
	}
	p("\n## Added examples\n\n| decision | label | path | score before | score after |\n|---|---|---|---|---|\n")
	for _, a := range rt.Added {
		p("| %s | %s | `%s` | %.4f | %.4f |\n", a.Ref, a.Label, a.Path, a.ScoreBefore, a.ScoreAfter)
	}
	return b.String()
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// fileSHA256 is the hex sha256 of a file ("" when it cannot be read).
func fileSHA256(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeModel puts the retrained model and its card diff into the proposal and points the
// models: entry at it (sha256, thresholds.malicious).
func (p *proposer) writeModel(models *yaml.Node) error {
	nm := p.model
	src, err := os.ReadFile(filepath.Join(nm.dir, nm.file))
	if err != nil {
		return err
	}
	dst := nm.relFile
	if filepath.IsAbs(dst) {
		return fmt.Errorf("tune: model %s: its file is outside the bundle (%s)", nm.spec.Name, dst)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(p.o.Out, dst)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.o.Out, dst), src, 0o644); err != nil {
		return err
	}
	if models == nil || models.Kind != yaml.SequenceNode || nm.index >= len(models.Content) {
		return fmt.Errorf("tune: bundle.yaml models: entry %d not found", nm.index)
	}
	entry := models.Content[nm.index]
	setScalar(entry, "sha256", nm.spec.SHA256)
	setScalar(mapping(entry, "thresholds"), "malicious", strconv.FormatFloat(nm.spec.Thresholds["malicious"], 'f', -1, 64))
	return os.WriteFile(filepath.Join(p.o.Out, CardDiffFile), []byte(cardDiff(p.r.Detector)), 0o644)
}
