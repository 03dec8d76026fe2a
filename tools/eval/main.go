package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/added060/palisade/plugins/injection/detect"
	"github.com/added060/palisade/tools/eval/score"
)

// scorers maps a name to a constructor. Another scorer (an ONNX detector) registers itself
// here from its own file with an init func.
var scorers = map[string]func() (score.Scorer, error){
	"injection": func() (score.Scorer, error) { return InjectionScorer{D: detect.New(detect.Options{})}, nil },
}

// InjectionScorer runs the injection plugin's detector natively (the same Go code the plugin
// compiles to Wasm).
type InjectionScorer struct{ D *detect.Detector }

// Score returns the top category score and label, or benign when nothing scored.
func (s InjectionScorer) Score(text string) (float64, string) {
	r := s.D.Scan(text)
	c, sc := r.Top()
	if sc <= 0 {
		return 0, score.Benign
	}
	return sc, c.String()
}

// Threshold is the detector's effective default cut (threshold minus margin).
func (s InjectionScorer) Threshold() float64 { return s.D.Cut(detect.PromptInjection) }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data", "data/split", "folder of split files")
	split := fs.String("split", "test", "split to score: train, dev or test")
	name := fs.String("scorer", "injection", "scorer name")
	thr := fs.Float64("threshold", -1, "decision threshold (default: the scorer's own, else 0.5)")
	errs := fs.Int("errors", 0, "print up to this many misses and false positives")
	only := fs.String("only", "", "with -errors: only records of this label")
	explain := fs.String("explain", "", "print the injection detector's votes for this text and exit")
	heldout := fs.String("heldout", "", "score a held-out file (data/heldout/test.jsonl) instead of the split: text scorers, then the served chain")
	bundle := fs.String("bundle", "", "with -heldout: the bundle folder whose chain to run in process (make bundle → build/bundle); \"\" = text scorers only")
	dataDir := fs.String("data-dir", "", "with -bundle: state and plugin cache folder (default: a temporary folder)")
	heldScorers := fs.String("scorers", "injection,combined", "with -heldout: comma-separated text scorers")
	baseline := fs.String("baseline", "", "with -heldout and -bundle: compare the guard sample with this baseline file")
	writeBaseline := fs.Bool("write-baseline", false, "with -baseline: write the baseline instead of comparing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *explain != "" {
		r := detect.New(detect.Options{}).Scan(*explain)
		fmt.Fprintf(stdout, "normalized: %q\n", r.Norm.Text)
		for c, sc := range r.Scores {
			if sc > 0 {
				fmt.Fprintf(stdout, "%-18s %.3f\n", detect.Category(c), sc)
			}
		}
		for _, h := range r.Hits {
			fmt.Fprintf(stdout, "  %-18s %-28s %.2f %q\n", h.Category, h.Rule, h.Weight, h.Match)
		}
		return 0
	}
	if *heldout != "" {
		dd := *dataDir
		if dd == "" && *bundle != "" {
			tmp, err := os.MkdirTemp("", "palisade-eval-")
			if err != nil {
				fmt.Fprintln(stderr, "eval:", err)
				return 1
			}
			defer os.RemoveAll(tmp)
			dd = tmp
		}
		return heldoutMain(context.Background(), stdout, stderr, *heldout, *bundle, dd, *baseline, *writeBaseline, strings.Split(*heldScorers, ","), *errs)
	}
	mk, ok := scorers[*name]
	if !ok {
		names := make([]string, 0, len(scorers))
		for n := range scorers {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(stderr, "eval: unknown scorer %q (have %v)\n", *name, names)
		return 2
	}
	s, err := mk()
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	recs, err := score.Load(filepath.Join(*dir, *split+".jsonl"))
	if err != nil {
		fmt.Fprintln(stderr, "eval:", err)
		return 1
	}
	t := *thr
	if t < 0 {
		t = 0.5
		if th, ok := s.(score.Threshold); ok {
			t = th.Threshold()
		}
	}
	rep := score.Evaluate(*name, *split, s, recs, t)
	score.Print(stdout, rep)
	if *errs > 0 {
		score.PrintErrors(stdout, rep, *errs, *only)
	}
	return 0
}
