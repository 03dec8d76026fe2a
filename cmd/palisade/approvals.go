package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "approvals", summary: "held calls: `approvals list | approve ID | deny ID [--reason R]`", run: runApprovals})
}

const approvalsUsage = `usage: palisade approvals list [--json]
       palisade approvals approve ID [--scope once|session|minutes] [--minutes N] [--by NAME]
       palisade approvals deny ID [--reason TEXT] [--by NAME]

Talks to a gateway's admin API (--url, --token), or with --nats-url straight to the fleet's
approvals bucket on NATS (no gateway needed).`

// approvalsFlags are the flags every approvals subcommand takes.
type approvalsFlags struct {
	url, token, dataDir, natsURL, bucket, creds string
	asJSON                                      bool
	scope, reason, by                           string
	minutes                                     int
}

func (f *approvalsFlags) set(fs *flag.FlagSet, env *cliEnv) {
	fs.StringVar(&f.url, "url", envOr(env, "PALISADE_ADMIN_URL", "http://127.0.0.1:8420"), "gateway base URL (env PALISADE_ADMIN_URL)")
	fs.StringVar(&f.token, "token", envOr(env, "PALISADE_ADMIN_TOKEN", ""), "admin bearer token (env PALISADE_ADMIN_TOKEN; default: DATA_DIR/admin.token)")
	fs.StringVar(&f.dataDir, "data-dir", envOr(env, "PALISADE_DATA_DIR", ".palisade"), "gateway data dir holding admin.token (env PALISADE_DATA_DIR)")
	fs.StringVar(&f.natsURL, "nats-url", "", "decide over NATS instead of the admin API (the gateway's NATS server)")
	fs.StringVar(&f.bucket, "bucket", approval.DefaultBucket, "approvals KV bucket (with --nats-url)")
	fs.StringVar(&f.creds, "creds", envOr(env, "PALISADE_NATS_CREDS", ""), "approver creds or nkey seed file (with --nats-url; default DATA_DIR/nats-auth/approver.nk; env PALISADE_NATS_CREDS)")
	fs.BoolVar(&f.asJSON, "json", false, "list: print JSON")
	fs.StringVar(&f.scope, "scope", approval.ScopeOnce, "once, session (same session, tool and arguments) or minutes")
	fs.IntVar(&f.minutes, "minutes", 0, "for --scope minutes: how long the grant lasts (default 15)")
	fs.StringVar(&f.reason, "reason", "", "reason (shown to the client on deny)")
	fs.StringVar(&f.by, "by", "", "who decides (default: $USER@cli)")
}

func runApprovals(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, approvalsUsage)
		return exitUsage
	}
	sub := args[0]
	var f approvalsFlags
	fs := flag.NewFlagSet("approvals "+sub, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	f.set(fs, env)
	// Flags may come before or after the ID.
	rest := args[1:]
	var pos []string
	for {
		if err := fs.Parse(rest); err != nil {
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if f.by == "" {
		f.by = envOr(env, "USER", "operator") + "@cli"
	}
	var c approvalsClient
	if f.natsURL != "" {
		// The approver identity: it connects (the embedded server refuses anyone else) and signs
		// decisions (gateways ignore unsigned ones).
		id, err := bus.LoadIdentity(f.dataDir, bus.RoleApprover, f.creds)
		if err != nil {
			fmt.Fprintf(env.Stderr, "palisade approvals: approver identity: %v\n", err)
			return exitFail
		}
		nc, err := bus.Dial(f.natsURL, id, nats.Name("palisade approvals"), nats.Timeout(5*time.Second))
		if err != nil {
			fmt.Fprintf(env.Stderr, "palisade approvals: connect %s: %v\n", f.natsURL, err)
			return exitFail
		}
		defer nc.Close()
		m, err := approval.New(ctx, approval.Options{Conn: nc, Bucket: f.bucket, Signer: id})
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade approvals:", err)
			return exitFail
		}
		defer m.Close()
		c = natsApprovals{m}
	} else {
		tok := f.token
		if tok == "" {
			b, err := os.ReadFile(filepath.Join(f.dataDir, admin.TokenFile))
			if err != nil {
				fmt.Fprintf(env.Stderr, "palisade approvals: no --token and no %s: %v\n", filepath.Join(f.dataDir, admin.TokenFile), err)
				return exitUsage
			}
			tok = strings.TrimSpace(string(b))
		}
		c = httpApprovals{base: strings.TrimRight(f.url, "/") + admin.DefaultPrefix, token: tok}
	}

	switch sub {
	case "list":
		if len(pos) != 0 {
			fmt.Fprintln(env.Stderr, approvalsUsage)
			return exitUsage
		}
		l, err := c.list(ctx)
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade approvals list:", err)
			return exitFail
		}
		if f.asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(l)
			return exitOK
		}
		if len(l) == 0 {
			fmt.Fprintln(env.Stdout, "no held calls")
			return exitOK
		}
		tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAGE\tLEFT\tGATEWAY\tSERVER\tTOOL\tRULE\tREASON")
		now := time.Now()
		for _, p := range l {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, now.Sub(p.Time).Round(time.Second),
				time.Until(p.Expires).Round(time.Second), p.Gateway, p.Server, p.Tool, p.Rule, p.Reason)
		}
		tw.Flush()
		return exitOK
	case "approve", "deny":
		if len(pos) != 1 {
			fmt.Fprintln(env.Stderr, approvalsUsage)
			return exitUsage
		}
		action := "allow"
		if sub == "deny" {
			action = "deny"
		}
		d := approval.Decision{Action: action, By: f.by, Reason: f.reason, Scope: f.scope, Minutes: f.minutes}
		if err := c.decide(ctx, pos[0], d); err != nil {
			fmt.Fprintf(env.Stderr, "palisade approvals %s: %v\n", sub, err)
			if errors.Is(err, approval.ErrBadDecision) {
				return exitUsage
			}
			return exitFail
		}
		word := map[string]string{"allow": "approved", "deny": "denied"}[action]
		fmt.Fprintf(env.Stdout, "%s %s (scope %s, by %s)\n", word, pos[0], f.scope, f.by)
		return exitOK
	}
	fmt.Fprintf(env.Stderr, "palisade approvals: unknown subcommand %q\n%s\n", sub, approvalsUsage)
	return exitUsage
}

// approvalsClient is where the CLI lists and decides: the admin API or NATS.
type approvalsClient interface {
	list(ctx context.Context) ([]approval.Pending, error)
	decide(ctx context.Context, id string, d approval.Decision) error
}

type natsApprovals struct{ m *approval.Manager }

func (n natsApprovals) list(context.Context) ([]approval.Pending, error) { return n.m.List(), nil }
func (n natsApprovals) decide(ctx context.Context, id string, d approval.Decision) error {
	return n.m.Decide(ctx, id, d)
}

type httpApprovals struct{ base, token string }

func (h httpApprovals) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %s", approval.ErrNotFound, e.Error)
		case http.StatusConflict:
			return fmt.Errorf("%w: %s", approval.ErrDecided, e.Error)
		case http.StatusBadRequest:
			return fmt.Errorf("%w: %s", approval.ErrBadDecision, e.Error)
		}
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func (h httpApprovals) list(ctx context.Context) ([]approval.Pending, error) {
	var r struct {
		Approvals []approval.Pending `json:"approvals"`
	}
	err := h.do(ctx, http.MethodGet, "/approvals", nil, &r)
	return r.Approvals, err
}

func (h httpApprovals) decide(ctx context.Context, id string, d approval.Decision) error {
	verb := "approve"
	if d.Action == "deny" {
		verb = "deny"
	}
	return h.do(ctx, http.MethodPost, "/approvals/"+url.PathEscape(id)+"/"+verb,
		admin.DecisionRequest{By: d.By, Reason: d.Reason, Scope: d.Scope, Minutes: d.Minutes}, nil)
}
