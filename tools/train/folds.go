package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/added060/palisade/host/infer/train"
	"github.com/added060/palisade/plugins/detector/scan"
	"github.com/added060/palisade/sdk/go/abi"
)

// doFolds is -folds: the detector stage on the held-out calib split out of fold (train.RunFolds:
// a model trained on each half of its source groups judges the other half), at the stage
// config -fold-stage with the text cut swept over -fold-text-cuts. The figures are the stage's
// own (the other stages of a chain are not run): attacks it flags per class, benign calls per
// kind. The dev set stands in for the test set, so no test split is read.
func doFolds(c config, stdout io.Writer) error {
	ctx := context.Background()
	var tc train.Config
	var err error
	if tc.Train, err = train.ReadExamples(c.train); err != nil {
		return err
	}
	if tc.Dev, err = train.ReadExamples(c.dev); err != nil {
		return err
	}
	tc.Test = tc.Dev
	if c.extra != "" {
		tc.ExtraFiles = strings.Split(c.extra, ",")
	}
	tc.Name, tc.Epochs, tc.TargetFPR, tc.Library = c.name, c.epochs, c.targetFPR, c.lib
	tc.Preprocessor = train.DefaultPreprocessor(c.format, c.dim)
	// Other held-out files both halves' models train on whole (-folds wide/calib.jsonl
	// -extra-heldout calib.jsonl: main calib, plus one half of wide calib), on top or not.
	if tc.Heldout, tc.HeldoutFile, err = heldoutAll(c, train.LabelsOf(tc.Train), stdout); err != nil {
		return err
	}
	stage, err := scan.ParseConfig([]byte(c.foldStage))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "palisade-folds-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := runFolds(ctx, c, tc, dir, stage)
	if err != nil {
		return err
	}
	var cuts []float64
	for _, s := range strings.Split(c.foldCuts, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("-fold-text-cuts: %w", err)
		}
		cuts = append(cuts, v)
	}
	fmt.Fprintf(stdout, "%s out of fold: models %.12s (half 0) and %.12s (half 1); stage %s\n", c.folds, f.SHA256[0], f.SHA256[1], c.foldStage)
	var keys []string
	n := map[string]int{}
	key := func(r train.FoldRecord) string {
		if r.Label == train.BenignLabel {
			return "benign " + r.Kind
		}
		return r.Label
	}
	for _, r := range f.Records {
		if n[key(r)] == 0 {
			keys = append(keys, key(r))
		}
		n[key(r)]++
		if r.Label == train.BenignLabel && r.HardNegative {
			n["benign hard negative"]++
		}
	}
	slices.Sort(keys)
	keys = append(keys, "benign hard negative")
	fmt.Fprintf(stdout, "%-28s %6s", "flagged by the detector", "n")
	for _, cut := range cuts {
		fmt.Fprintf(stdout, " text≥%-5.3g", cut)
	}
	fmt.Fprintln(stdout)
	hits := make([]map[string]int, len(cuts))
	for j, cut := range cuts {
		sc := stage
		sc.KindThresholds = map[string]float64{}
		for k, v := range stage.KindThresholds {
			sc.KindThresholds[k] = v
		}
		sc.KindThresholds["text"] = cut
		hits[j] = map[string]int{}
		for i, r := range f.Records {
			v, err := scan.EvaluateScores(r.Envelope, sc, f.Score(i))
			if err != nil {
				return fmt.Errorf("record %s: %w", r.ID, err)
			}
			if c.foldList && j == 0 && r.Kind == "tool_output" {
				fmt.Fprintf(stdout, "  tool output %s: best %.4f\n", r.ID, v.Score)
			}
			if v.Action == abi.ActionNone {
				continue
			}
			hits[j][key(r)]++
			if r.Label == train.BenignLabel && r.HardNegative {
				hits[j]["benign hard negative"]++
			}
			if c.foldList && cut == cuts[len(cuts)-1] && r.Label == train.BenignLabel {
				b, _ := json.Marshal(v.Evidence)
				fmt.Fprintf(stdout, "  benign flagged: %s %s %.200s\n", r.ID, v.Reason, b)
			}
		}
	}
	for _, k := range keys {
		fmt.Fprintf(stdout, "%-28s %6d", k, n[k])
		for j := range cuts {
			fmt.Fprintf(stdout, " %10d", hits[j][k])
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// runFolds is train.RunFolds with tc, or with -fold-long-min-bytes the stage with two models:
// texts over that length judged by models trained on all of tc, the shorter ones by models
// trained without the -extra-heldout-on-top files (Folds.Routed).
func runFolds(ctx context.Context, c config, tc train.Config, dir string, stage scan.Config) (*train.Folds, error) {
	if c.foldLong < 0 || c.foldLong > 0 && c.onTop == "" {
		return nil, fmt.Errorf("-fold-long-min-bytes %d: wants a positive length and -extra-heldout-on-top for the long model", c.foldLong)
	}
	if c.foldLong == 0 {
		return train.RunFolds(ctx, tc, c.folds, dir, stage, c.foldNoTrain)
	}
	long, err := train.RunFolds(ctx, tc, c.folds, filepath.Join(dir, "long"), stage, c.foldNoTrain)
	if err != nil {
		return nil, err
	}
	short := tc
	short.Heldout = nil
	for _, e := range tc.Heldout {
		if !e.OnTop {
			short.Heldout = append(short.Heldout, e)
		}
	}
	f, err := train.RunFolds(ctx, short, c.folds, filepath.Join(dir, "short"), stage, c.foldNoTrain)
	if err != nil {
		return nil, err
	}
	return f.Routed(long, c.foldLong)
}
