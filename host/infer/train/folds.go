package train

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"

	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/sdk/go/abi"
)

// HeldoutHalf is the calib fold a source group belongs to, 0 or 1 (FNV-1a of the group): a
// fold holds whole groups, so no source feeds both the model and the records that judge it.
func HeldoutHalf(group string) int {
	h := fnv.New32a()
	h.Write([]byte(group))
	return int(h.Sum32() & 1)
}

// FoldRecord is one record of a held-out file as the detector stage sees it.
type FoldRecord struct {
	ID, Label, Kind string
	HardNegative    bool
	Half            int    // HeldoutHalf of its group
	Envelope        []byte // the envelope the stage reads (request, or response with the output)
}

// Folds are a held-out file's records scored out of fold: each record's texts by the model
// trained on the other half's source groups.
type Folds struct {
	Records []FoldRecord
	Labels  []string  // the models' labels, in their order
	SHA256  [2]string // of the model trained on half 0 and on half 1
	scores  [2]map[string]abi.InferScore
}

// RunFolds trains c twice (under dir/half0 and dir/half1), each time with c.Heldout followed by
// the examples (HeldoutExamples) of one half of path's source groups, a part of their own
// (capped on their own), and scores the texts the detector stage reads (scan.Texts with stage,
// as served) of every record of the other half through ONNX Runtime. path may name kinds as
// HeldoutExamples takes them ("path@kind+kind"): only those kinds' records are trained on,
// every record is judged. Everything else of c is used as given; c.Test should not be a split a
// tuning run may read (tools/train passes the dev set).
//
// With noTrain the halves are not trained on (c.Heldout = nil both times): the same records
// judged by the model the rest of c gives, for comparison.
func RunFolds(ctx context.Context, c Config, path, dir string, stage scan.Config, noTrain bool) (*Folds, error) {
	path, kinds := HeldoutSpec(path)
	recs, err := readHeldout(path)
	if err != nil {
		return nil, err
	}
	part := 0 // the half's part: after c.Heldout's
	for _, e := range c.Heldout {
		part = max(part, e.Part+1)
	}
	labels := c.Labels
	if labels == nil {
		labels = LabelsOf(c.Train)
	}
	f := &Folds{Labels: labels}
	var halves [2][]heldoutRecord
	for _, r := range recs {
		h := HeldoutHalf(r.Group)
		halves[h] = append(halves[h], r)
		env, err := r.envelope()
		if err != nil {
			return nil, err
		}
		f.Records = append(f.Records, FoldRecord{ID: r.ID, Label: r.Label, Kind: r.Kind, HardNegative: r.HardNegative, Half: h, Envelope: env})
	}
	for h := range 2 {
		fc := c
		half, err := heldoutExamples(path, filterKinds(halves[h], kinds), labels)
		if err != nil {
			return nil, err
		}
		for i := range half {
			half[i].Part = part
		}
		// c.Heldout (other held-out files, trained on whole) comes first, then the half.
		fc.Heldout = append(slices.Clone(c.Heldout), half...)
		fc.HeldoutFile = strings.TrimPrefix(c.HeldoutFile+", "+fmt.Sprintf("%s (half %d)", path, h), ", ")
		if noTrain {
			fc.Heldout, fc.HeldoutFile = c.Heldout, c.HeldoutFile
		}
		fc.Out = filepath.Join(dir, fmt.Sprintf("half%d", h), c.Name+".onnx")
		res, err := Run(ctx, fc)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", h, err)
		}
		f.SHA256[h] = res.Spec.SHA256
		// Score the other half's texts with this model.
		var texts []string
		seen := map[string]bool{}
		for _, r := range f.Records {
			if r.Half == h {
				continue
			}
			for _, t := range scan.Texts(r.Envelope, stage) {
				if !seen[t.Value] {
					seen[t.Value] = true
					texts = append(texts, t.Value)
				}
			}
		}
		reg, err := OpenRegistry(ctx, c.Library, filepath.Dir(fc.Out), res.Spec)
		if err != nil {
			return nil, err
		}
		f.scores[1-h] = map[string]abi.InferScore{}
		for start := 0; start < len(texts); start += 256 {
			end := min(start+256, len(texts))
			ls, probs, err := reg.Probs(ctx, c.Name, texts[start:end])
			if err != nil {
				reg.Close()
				return nil, err
			}
			for i, s := range abi.ReduceScores(ls, probs, BenignLabel) {
				f.scores[1-h][texts[start+i]] = s
			}
		}
		reg.Close()
	}
	return f, nil
}

// Score is the infer_score host function answered, for record i, by the model that did not
// train on it (scan.EvaluateScores decides a record with it exactly as the stage would).
func (f *Folds) Score(i int) scan.ScoreFunc {
	m := f.scores[f.Records[i].Half]
	return func(req abi.ScoreRequest) (abi.ScoreResponse, error) {
		resp := abi.ScoreResponse{Labels: f.Labels}
		for _, t := range req.Texts {
			s, ok := m[t]
			if !ok {
				return abi.ScoreResponse{}, fmt.Errorf("folds: text not scored: %.40q", t)
			}
			resp.Scores = append(resp.Scores, s)
		}
		return resp, nil
	}
}

// Routed is f with every text longer than minBytes scored by long instead (scan.Config's
// LongModel and LongMinBytes, issue 26 class 8): the stage out of fold with a second model for
// long texts. long must hold the same records (RunFolds on the same file and stage).
func (f *Folds) Routed(long *Folds, minBytes int) (*Folds, error) {
	if len(long.Records) != len(f.Records) || !slices.Equal(long.Labels, f.Labels) {
		return nil, fmt.Errorf("folds: the long model's folds hold other records or labels")
	}
	out := &Folds{Records: f.Records, Labels: f.Labels, SHA256: f.SHA256}
	for h := range 2 {
		out.scores[h] = make(map[string]abi.InferScore, len(f.scores[h]))
		for t, s := range f.scores[h] {
			if len(t) > minBytes {
				ls, ok := long.scores[h][t]
				if !ok {
					return nil, fmt.Errorf("folds: text not scored by the long model: %.40q", t)
				}
				s = ls
			}
			out.scores[h][t] = s
		}
	}
	return out, nil
}
