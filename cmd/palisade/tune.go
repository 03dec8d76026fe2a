package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/tune"
)

func init() {
	register(command{name: "tune", summary: "propose a bundle from people's labels and approvals: tune --bundle DIR --events FILE -o DIR [--key KEY]", cmd: &tuneCmd{}})
}

// tuneCmd is `palisade tune`: host/tune over audit events read from NDJSON files (the
// dashboard's history export, `audit tail --json`, a gateway's GET /history/export?format=ndjson).
type tuneCmd struct {
	keyFlag      `embed:""`
	adminFlags   `embed:""`
	Bundle       string   `required:"" help:"The active bundle's folder." env:"PALISADE_BUNDLE" placeholder:"DIR"`
	Events       []string `help:"NDJSON file of audit events: labels and decisions (repeatable; - = stdin)." placeholder:"FILE" sep:"none"`
	FromGateway  bool     `name:"from-gateway" help:"Read the decisions and labels from the gateway's admin API (--url, --token): GET /history/export and /labels, since --since."`
	Since        string   `default:"720h" help:"With --from-gateway: events since this (RFC 3339, or a duration back from now)."`
	Out          string   `short:"o" required:"" help:"Folder to write the proposal to (must not exist or be empty)." placeholder:"DIR"`
	MinApprovals int      `default:"3" help:"Approvals of one kind of call before an allow rule is proposed."`
	TrainData    string   `name:"train-data" default:"data/split" help:"The detector's training data (train.jsonl, dev.jsonl, test.jsonl): labelled detector texts retrain its model; \"\" = do not retrain." env:"PALISADE_TRAIN_DATA" placeholder:"DIR"`
	ExtraBenign  []string `name:"extra-benign" default:"models/data/benign_short.txt,models/data/benign_outputs.jsonl,models/data/benign_long.jsonl" help:"Extra benign training texts, as make model uses them (.txt lines or .jsonl text)." placeholder:"FILE"`
	JSON         bool     `name:"json" help:"Print the report as JSON."`
}

func (c *tuneCmd) Run(ctx context.Context, env *cliEnv) error {
	fail := func(code int, err error) error {
		fmt.Fprintln(env.Stderr, "palisade tune:", err)
		return exitCode(code)
	}
	if len(c.Events) == 0 && !c.FromGateway {
		return fail(exitUsage, fmt.Errorf("say where the events are: --events FILE (an NDJSON export) or --from-gateway"))
	}
	var events []audit.Event
	if c.FromGateway {
		ac, err := c.client()
		if err != nil {
			return fail(exitUsage, err)
		}
		for _, path := range []string{"/history/export?format=ndjson&from=", "/labels?format=ndjson&from="} {
			b, err := ac.get(ctx, path+url.QueryEscape(c.Since))
			if err != nil {
				return fail(exitFail, fmt.Errorf("GET %s: %w", strings.SplitN(path, "?", 2)[0], err))
			}
			evs, err := parseEvents(bytes.NewReader(b), c.URL+strings.SplitN(path, "?", 2)[0])
			if err != nil {
				return fail(exitFail, err)
			}
			events = append(events, evs...)
		}
	}
	for _, f := range c.Events {
		evs, err := readEvents(env, f)
		if err != nil {
			return fail(exitUsage, err)
		}
		events = append(events, evs...)
	}
	r, err := tune.Propose(ctx, events, tune.Options{Bundle: c.Bundle, Out: c.Out, MinApprovals: c.MinApprovals,
		TrainData: c.TrainData, ExtraBenign: c.ExtraBenign})
	if err != nil {
		return fail(exitFail, err)
	}
	signed := ""
	if c.Key != "" {
		if _, err := bundle.CheckPins(c.Out); err != nil {
			return fail(exitFail, err)
		}
		sig, err := signDir(c.Out, c.Key)
		if err != nil {
			return fail(exitFail, err)
		}
		signed = sig.Digest
	}
	if c.JSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	printTuneReport(env.Stdout, r, c.Out, signed)
	return nil
}

func printTuneReport(w io.Writer, r *tune.Report, out, signed string) {
	fmt.Fprintf(w, "read %d labels (%d false positive, %d false negative, %d correct) and %d approved, %d denied held calls\n",
		r.Labels, r.FalsePositives, r.FalseNegatives, r.Correct, r.Approved, r.Denied)
	for _, x := range r.Exclusions {
		rules := ""
		if len(x.Rules) > 0 {
			rules = " rules " + strings.Join(x.Rules, ",")
		}
		fmt.Fprintf(w, "exclusion  %s: %s in %s of %s%s (%d labels)\n", x.Stage, strings.Join(x.Labels, ","), strings.Join(x.Paths, ","), toolOn(x.Tool, x.Server), rules, len(x.Support))
	}
	for _, ru := range r.Rules {
		fmt.Fprintf(w, "rule       %s %s priority %d: %s %v (%d decisions)\n", ru.ID, ru.Action, ru.Priority, toolOn(ru.Tool, ru.Server), ru.Arguments, len(ru.Support))
	}
	for _, th := range r.Thresholds {
		if th.Moved {
			fmt.Fprintf(w, "threshold  %s %s: %.4f → %.4f (%s)\n", th.Stage, th.Key, th.Old, th.New, th.Why)
		} else {
			fmt.Fprintf(w, "threshold  %s %s: kept at %.4f (%s)\n", th.Stage, th.Key, th.Old, th.Why)
		}
	}
	if d := r.Detector; d != nil && d.Skipped != "" {
		fmt.Fprintf(w, "detector   %s: %s\n", d.Stage, d.Skipped)
	} else if d != nil {
		fmt.Fprintf(w, "detector   %s: model %s retrained with %d labelled texts (%d benign, %d attack) in %.1fs: sha256 %.12s → %.12s, threshold %.4f → %.4f\n",
			d.Stage, d.Model, len(d.Added), d.AddedBenign, d.AddedAttack, d.TrainSeconds, d.OldSHA256, d.NewSHA256, d.OldThreshold, d.NewThreshold)
		fmt.Fprintf(w, "detector   at the stage's threshold %.4g: labelled false positives flagged %d → %d of %d, false negatives %d → %d of %d; model card diff in %s\n",
			d.StageThreshold, d.FPFlaggedBefore, d.FPFlaggedAfter, d.AddedBenign, d.FNFlaggedBefore, d.FNFlaggedAfter, d.AddedAttack, filepath.Join(out, d.CardDiff))
	}
	for _, u := range r.Unused {
		fmt.Fprintf(w, "not used   %s\n", u)
	}
	fmt.Fprintf(w, "wrote %s: version %s, %d fixtures from labelled calls\n", out, r.Version, r.Fixtures)
	if signed == "" {
		fmt.Fprintf(w, "next: palisade bundle sign --key KEY %s; palisade policy test --bundle %s; palisade bundle shadow %s\n", out, out, out)
	} else {
		fmt.Fprintf(w, "signed %s; next: palisade policy test --bundle %s; palisade bundle shadow %s\n", signed, out, out)
	}
}

func toolOn(tool, server []string) string {
	t := "any tool"
	if len(tool) > 0 {
		t = strings.Join(tool, ",")
	}
	if len(server) > 0 {
		t += " on " + strings.Join(server, ",")
	}
	return t
}

// readEvents reads NDJSON audit events from file ("-" = stdin). A history export's lines are
// events with extra fields (verified, held), which are ignored; a line that is not an event is
// an error naming the file and line.
func readEvents(env *cliEnv, file string) ([]audit.Event, error) {
	var r io.Reader
	if file == "-" {
		r = env.Stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return parseEvents(r, file)
}

// parseEvents reads NDJSON audit events from r, naming errors by where and line.
func parseEvents(r io.Reader, file string) ([]audit.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []audit.Event
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ev audit.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.ID == "" {
			if err == nil {
				err = fmt.Errorf("no id")
			}
			return nil, fmt.Errorf("%s:%d: not an audit event: %v", file, n, err)
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}
