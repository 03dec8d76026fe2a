package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/gateway"
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
	ExtraBenign  []string `name:"extra-benign" default:"models/data/benign_short.txt,models/data/benign_outputs.jsonl,models/data/benign_long.jsonl,models/data/benign_llm_docs.jsonl" help:"Extra benign training texts, as make model uses them (.txt lines or .jsonl text)." placeholder:"FILE"`
	ExtraHeldout string   `name:"extra-heldout" default:"data/heldout/calib.jsonl" help:"Held-out tool calls the detector also trains on, as make model uses them (tools/train -extra-heldout); \"\" = none." placeholder:"FILE"`
	JSON         bool     `name:"json" help:"Print the report as JSON."`
	// The events of --events files must carry signatures (audit tail --json --signed) by a
	// trusted signer, unless --trust-unsigned.
	TrustedSigner []string `name:"trusted-signer" help:"With --events: an audit signer's public nkey (U...), or a file holding one, whose signed events are trusted (repeatable); DATA_DIR's gateway key is trusted too." placeholder:"KEY" sep:"none"`
	TrustUnsigned bool     `name:"trust-unsigned" help:"With --events: use events whose signature is missing or does not verify (counted in the report)."`
	// Shadow loads the proposal into the gateway's shadow slot: it judges copies of the live
	// calls beside the active bundle, off the hot path, until a person promotes it.
	Shadow bool `name:"shadow" help:"Load the proposal as the gateway's shadow bundle (--url, --token; sign it with --key unless the gateway allows unsigned bundles), so it judges live traffic beside the active bundle before anyone promotes it."`
	// NoCheck skips building the proposal to run its fixtures (an exclusion that would let a
	// fixture's denied or asked call through is then not left out here).
	NoCheck bool `name:"no-check" help:"Do not build the proposal and run its fixtures (by default an exclusion that would let through a call the bundle's fixtures say must be denied or asked is left out, and the report says so)."`
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
	var check *tune.EventCheck
	if len(c.Events) > 0 {
		signers, err := c.signers(ctx)
		if err != nil {
			return fail(exitUsage, err)
		}
		check = &tune.EventCheck{Skipped: map[string]int{}}
		for _, f := range c.Events {
			lines, err := readEvents(env, f)
			if err != nil {
				return fail(exitUsage, err)
			}
			for _, l := range lines {
				problem := audit.ProblemUnsigned
				if l.signed != nil {
					problem = signers.VerifyEvent(ctx, *l.signed)
				}
				switch {
				case problem == "":
					check.Verified++
				case c.TrustUnsigned:
					check.Unverified++
				default:
					check.Skipped[problem]++
					continue
				}
				events = append(events, l.ev)
			}
		}
		if check.Verified+check.Unverified == 0 && len(check.Skipped) > 0 {
			return fail(exitUsage, fmt.Errorf("no event of %s verified against a trusted signer (%s): write them with `palisade audit tail --json --signed` and name the signer with --trusted-signer, or use --trust-unsigned",
				strings.Join(c.Events, ", "), skippedText(check)))
		}
	}
	opts := tune.Options{Bundle: c.Bundle, Out: c.Out, MinApprovals: c.MinApprovals,
		TrainData: c.TrainData, ExtraBenign: c.ExtraBenign, ExtraHeldout: c.ExtraHeldout}
	if !c.NoCheck {
		core, err := gateway.NewCore(ctx, gateway.CoreOptions{MemoryCache: true, Logger: newLogger(env, "error", "text")})
		if err != nil {
			return fail(exitFail, err)
		}
		defer core.Close(context.WithoutCancel(ctx))
		opts.Check = func(ctx context.Context, dir string) error {
			b, err := core.Build(ctx, dir, false)
			if err != nil {
				return err
			}
			b.Chain.CloseWhenDrained(ctx)
			return nil
		}
	}
	r, err := tune.Propose(ctx, events, opts)
	if err != nil {
		return fail(exitFail, err)
	}
	r.Events = check
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
	} else {
		printTuneReport(env.Stdout, r, c.Out, signed)
	}
	if !c.Shadow {
		return nil
	}
	body, err := packBody(c.Out)
	if err != nil {
		return fail(exitFail, err)
	}
	ac, err := c.client()
	if err != nil {
		return fail(exitUsage, err)
	}
	var res admin.BundleResult
	if err := ac.do(ctx, http.MethodPut, "/bundles/shadow", body, "application/gzip", &res); err != nil {
		return fail(exitFail, fmt.Errorf("loading the proposal as the shadow: %w", err))
	}
	fmt.Fprintf(env.Stderr, "loaded as the gateway's shadow: %s %s sha256:%s; watch `palisade audit disagreements`, then `palisade bundle promote-shadow`\n",
		res.Bundle.Name, res.Bundle.Version, res.Bundle.Digest)
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
	if ec := r.Events; ec != nil {
		fmt.Fprintf(w, "events     %d with a verified signature", ec.Verified)
		if ec.Unverified > 0 {
			fmt.Fprintf(w, ", %d used unverified (--trust-unsigned)", ec.Unverified)
		}
		if len(ec.Skipped) > 0 {
			fmt.Fprintf(w, ", %d skipped (%s)", ec.SkippedTotal(), skippedText(ec))
		}
		fmt.Fprintln(w)
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

// signers are the keys --events files are checked against: --trusted-signer and DATA_DIR's
// gateway key.
func (c *tuneCmd) signers(ctx context.Context) (*audit.Signers, error) {
	var keys []string
	for _, k := range c.TrustedSigner {
		if b, err := os.ReadFile(k); err == nil {
			k = strings.TrimSpace(string(b))
		}
		if !nkeys.IsValidPublicUserKey(k) {
			return nil, fmt.Errorf("--trusted-signer %.20q: not a public user nkey (U...) or a file holding one", k)
		}
		keys = append(keys, k)
	}
	if gw, err := bus.LoadIdentity(c.DataDir, bus.RoleGateway, ""); err == nil {
		keys = append(keys, gw.PublicKey())
	}
	return audit.NewSigners(ctx, nil, "", keys...), nil
}

// eventLine is one line of an events file: an event, signed (audit tail --json --signed) or
// not.
type eventLine struct {
	ev     audit.Event
	signed *audit.SignedEvent
}

// readEvents reads NDJSON audit events from file ("-" = stdin). A history export's lines are
// events with extra fields (verified, held), which are ignored; a signed line carries the
// event's stored bytes and signature; a line that is neither is an error naming the file and
// line.
func readEvents(env *cliEnv, file string) ([]eventLine, error) {
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
	return parseEventLines(r, file)
}

// parseEvents reads NDJSON audit events from r, naming errors by where and line.
func parseEvents(r io.Reader, file string) ([]audit.Event, error) {
	lines, err := parseEventLines(r, file)
	out := make([]audit.Event, len(lines))
	for i, l := range lines {
		out[i] = l.ev
	}
	return out, err
}

// parseEventLines reads NDJSON lines of events, signed or not, from r.
func parseEventLines(r io.Reader, file string) ([]eventLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []eventLine
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l eventLine
		var se audit.SignedEvent
		if json.Unmarshal(line, &se) == nil && len(se.Event) > 0 {
			l.signed = &se
			line = se.Event
		}
		err := json.Unmarshal(line, &l.ev)
		if err != nil || l.ev.ID == "" {
			if err == nil {
				err = fmt.Errorf("no id")
			}
			return nil, fmt.Errorf("%s:%d: not an audit event: %v", file, n, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// skippedText is "2 unsigned, 1 bad-signature": the skipped events by problem.
func skippedText(ec *tune.EventCheck) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ec.Skipped)) {
		parts = append(parts, fmt.Sprintf("%d %s", ec.Skipped[k], k))
	}
	return strings.Join(parts, ", ")
}
