package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/bus"
	"github.com/alecthomas/kong"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "approvals", summary: "held calls: `approvals list | approve ID | deny ID [--reason R]`", cmd: &approvalsCmd{}})
}

// approvalsCmd is `palisade approvals`: it talks to a gateway's admin API (--url, --token), or
// with --nats-url straight to the fleet's approvals bucket on NATS (no gateway needed).
type approvalsCmd struct {
	List    approvalsListCmd   `cmd:"" help:"List held calls."`
	Approve approvalsDecideCmd `cmd:"" help:"Release a held call."`
	Deny    approvalsDecideCmd `cmd:"" help:"Deny a held call."`
}

// approvalsFlags are the flags every approvals subcommand takes.
type approvalsFlags struct {
	adminFlags `embed:""`
	NATSURL    string `name:"nats-url" help:"Decide over NATS instead of the admin API (the gateway's NATS server)." placeholder:"URL"`
	Bucket     string `default:"${approvals_bucket}" help:"Approvals KV bucket (with --nats-url)."`
	Creds      string `help:"Approver creds or nkey seed file (with --nats-url; default DATA_DIR/nats-auth/approver.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
}

type approvalsListCmd struct {
	approvalsFlags `embed:""`
	JSON           bool `name:"json" help:"Print JSON."`
}

type approvalsDecideCmd struct {
	approvalsFlags `embed:""`
	ID             string `arg:"" help:"The held call's id (its audit id)."`
	Scope          string `default:"${approvals_scope}" help:"once, session (same session, tool and arguments) or minutes."`
	Minutes        int    `help:"For --scope minutes: how long the grant lasts (default 15)."`
	Reason         string `help:"Reason (shown to the client on deny)."`
	By             string `help:"Who decides, recorded after the approver key's name when deciding over NATS (default: the OS user name, $$USER or the account's, then @cli; required when there is none). The admin API ignores it and records the verified identity of --token (an access token from the identity provider; the admin token is recorded as admin-token)."`
}

// open returns where to list and decide, and a func that closes it.
func (f *approvalsFlags) open(ctx context.Context, env *cliEnv) (approvalsClient, func(), error) {
	if f.NATSURL == "" {
		ac, err := f.client()
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade approvals:", err)
			return nil, nil, exitCode(exitUsage)
		}
		return httpApprovals{ac}, func() {}, nil
	}
	// The approver identity: it connects (the embedded server refuses anyone else) and signs
	// decisions (gateways ignore unsigned ones).
	id, err := bus.LoadIdentity(f.DataDir, bus.RoleApprover, f.Creds)
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade approvals: approver identity: %v\n", err)
		return nil, nil, exitCode(exitFail)
	}
	nc, err := bus.Dial(f.NATSURL, id, nats.Name("palisade approvals"), nats.Timeout(5*time.Second))
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade approvals: connect %s: %v\n", f.NATSURL, err)
		return nil, nil, exitCode(exitFail)
	}
	m, err := approval.New(ctx, approval.Options{Conn: nc, Bucket: f.Bucket, Signer: id})
	if err != nil {
		nc.Close()
		fmt.Fprintln(env.Stderr, "palisade approvals:", err)
		return nil, nil, exitCode(exitFail)
	}
	return natsApprovals{m}, func() { m.Close(); nc.Close() }, nil
}

func (l *approvalsListCmd) Run(ctx context.Context, env *cliEnv) error {
	c, closeFn, err := l.open(ctx, env)
	if err != nil {
		return err
	}
	defer closeFn()
	list, err := c.list(ctx)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade approvals list:", err)
		return exitCode(exitFail)
	}
	if l.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "no held calls")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tLEFT\tGATEWAY\tSERVER\tTOOL\tRULE\tREASON")
	now := time.Now()
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, now.Sub(p.Time).Round(time.Second),
			time.Until(p.Expires).Round(time.Second), p.Gateway, p.Server, p.Tool, p.Rule, p.Reason)
	}
	return tw.Flush()
}

func (d *approvalsDecideCmd) Run(ctx context.Context, env *cliEnv, kctx *kong.Context) error {
	sub := kctx.Selected().Name // approve or deny
	by := d.By
	if by == "" {
		name := osUserName(env)
		if name == "" {
			fmt.Fprintf(env.Stderr, "palisade approvals %s: --by is required: no OS user name to record as who decided\n", sub)
			return exitCode(exitUsage)
		}
		by = name + "@cli"
	}
	c, closeFn, err := d.open(ctx, env)
	if err != nil {
		return err
	}
	defer closeFn()
	action := "allow"
	if sub == "deny" {
		action = "deny"
	}
	dec := approval.Decision{Action: action, By: by, Reason: d.Reason, Scope: d.Scope, Minutes: d.Minutes}
	if err := c.decide(ctx, d.ID, dec); err != nil {
		fmt.Fprintf(env.Stderr, "palisade approvals %s: %v\n", sub, err)
		if errors.Is(err, approval.ErrBadDecision) {
			return exitCode(exitUsage)
		}
		return exitCode(exitFail)
	}
	word := map[string]string{"allow": "approved", "deny": "denied"}[action]
	fmt.Fprintf(env.Stdout, "%s %s (scope %s, by %s)\n", word, d.ID, d.Scope, by)
	return nil
}

// osUserName is who runs the CLI: $USER (through cliEnv), else the account's name
// (cliEnv.Username); "" when neither is known.
func osUserName(env *cliEnv) string {
	if u := envOr(env, "USER", ""); u != "" {
		return u
	}
	if env.Username != nil {
		return env.Username()
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
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

// httpApprovals lists and decides through a gateway's admin API.
type httpApprovals struct{ c *adminClient }

// approvalErr turns the admin API's answer into approval's errors.
func approvalErr(method, path string, err error) error {
	var ae *adminError
	if !errors.As(err, &ae) {
		return err
	}
	var sentinel error
	switch ae.Status {
	case http.StatusNotFound:
		sentinel = approval.ErrNotFound
	case http.StatusConflict:
		sentinel = approval.ErrDecided
	case http.StatusBadRequest:
		sentinel = approval.ErrBadDecision
	default:
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	// The gateway's message already starts with the sentinel's text: say it once.
	msg := strings.TrimPrefix(strings.TrimPrefix(ae.Msg, sentinel.Error()), ": ")
	if msg == "" {
		return sentinel
	}
	return fmt.Errorf("%w: %s", sentinel, msg)
}

func (h httpApprovals) list(ctx context.Context) ([]approval.Pending, error) {
	var r struct {
		Approvals []approval.Pending `json:"approvals"`
	}
	err := h.c.do(ctx, http.MethodGet, "/approvals", nil, "", &r)
	return r.Approvals, approvalErr(http.MethodGet, "/approvals", err)
}

func (h httpApprovals) decide(ctx context.Context, id string, d approval.Decision) error {
	verb := "approve"
	if d.Action == "deny" {
		verb = "deny"
	}
	path := "/approvals/" + url.PathEscape(id) + "/" + verb
	return approvalErr(http.MethodPost, path, h.c.doJSON(ctx, http.MethodPost, path,
		admin.DecisionRequest{By: d.By, Reason: d.Reason, Scope: d.Scope, Minutes: d.Minutes}, nil))
}
