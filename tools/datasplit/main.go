package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("datasplit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.CorpusDir, "corpus", "data/corpus", "corpus folder")
	fs.StringVar(&o.OutDir, "out", "data/split", "output folder")
	fs.StringVar(&o.Seed, "seed", "palisade-split-v1", "salt of the group hash")
	fs.IntVar(&o.DevPct, "dev", 15, "percent of groups in dev")
	fs.IntVar(&o.TestPct, "test", 20, "percent of groups in test")
	fs.Float64Var(&o.Jaccard, "jaccard", 0.5, "near-duplicate Jaccard threshold")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	counts, err := Run(o)
	if err != nil {
		fmt.Fprintln(stderr, "datasplit:", err)
		return 1
	}
	labels := append([]string{"benign"}, Labels...)
	sort.Strings(labels)
	fmt.Fprintf(stdout, "%-18s %6s %6s %6s\n", "label", "train", "dev", "test")
	for _, l := range labels {
		fmt.Fprintf(stdout, "%-18s %6d %6d %6d\n", l, counts["train"][l], counts["dev"][l], counts["test"][l])
	}
	return 0
}
