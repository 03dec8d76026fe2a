package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

// auditSinkCmd is `palisade audit sink`: where the audit stream is copied to.
type auditSinkCmd struct {
	Postgres auditSinkPostgresCmd `cmd:"" help:"Copy the audit stream into PostgreSQL until interrupted: verified, exactly once, in batches (host/auditsink)."`
}

type auditSinkPostgresCmd struct {
	DSN        string        `name:"dsn" required:"" help:"PostgreSQL connection string (libpq keywords or postgres:// URL; PG* variables fill the rest)." env:"PALISADE_AUDIT_DSN" placeholder:"DSN"`
	NATSURL    string        `name:"nats-url" default:"nats://127.0.0.1:4222" help:"NATS server." env:"PALISADE_NATS_URL" placeholder:"URL"`
	Creds      string        `help:"Sink creds or nkey seed file (default DATA_DIR/nats-auth/sink.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	DataDir    string        `default:".palisade" help:"Gateway data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Stream     string        `default:"PALISADE_AUDIT" help:"Audit stream." placeholder:"NAME"`
	Durable    string        `default:"palisade-sink-postgres" help:"Durable consumer name: sinks sharing it share the work." placeholder:"NAME"`
	Retention  time.Duration `help:"Delete events older than this (e.g. 720h); 0 keeps everything."`
	BatchSize  int           `default:"1000" help:"Most events per transaction."`
	TrustedKey []string      `name:"trusted-key" help:"Signer public key trusted besides the signers bucket and DATA_DIR's gateway key; repeatable." placeholder:"KEY"`
	LogLevel   string        `default:"info" enum:"debug,info,warn,error" help:"Log level (debug, info, warn, error)." env:"PALISADE_LOG_LEVEL"`
}

// Run copies the stream until ctx ends (SIGINT, SIGTERM), then prints what it wrote.
func (a *auditSinkPostgresCmd) Run(ctx context.Context, env *cliEnv) error {
	fail := func(err error) error {
		fmt.Fprintln(env.Stderr, "palisade audit sink postgres:", err)
		return exitCode(exitFail)
	}
	if err := auditsink.CheckDSN(a.DSN); err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit sink postgres: --dsn:", err)
		return exitCode(exitUsage)
	}
	if a.Retention < 0 || a.BatchSize < 0 {
		fmt.Fprintln(env.Stderr, "palisade audit sink postgres: --retention and --batch-size must not be negative")
		return exitCode(exitUsage)
	}
	nc, trusted, err := dialAudit(a.NATSURL, bus.RoleSink, a.Creds, a.DataDir, "palisade audit sink postgres", nats.MaxReconnects(-1))
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	s, err := auditsink.New(ctx, auditsink.Options{DSN: a.DSN, Conn: nc, Stream: a.Stream, Durable: a.Durable,
		TrustedKeys: append(trusted, a.TrustedKey...), BatchSize: a.BatchSize, Retention: a.Retention,
		Logger: newLogger(env, a.LogLevel, "text")})
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	if err := s.Run(ctx); err != nil {
		return fail(err)
	}
	st := s.Stats()
	fmt.Fprintf(env.Stdout, "stopped: %d events stored (%d unverified), %d duplicates, %d rejected, %d pruned\n",
		st.Stored, st.Unverified, st.Duplicates, st.Rejected, st.Pruned)
	return nil
}

// auditQueryCmd is `palisade audit query`: the record in PostgreSQL, asked the common questions.
type auditQueryCmd struct {
	DSN        string   `name:"dsn" required:"" help:"PostgreSQL connection string." env:"PALISADE_AUDIT_DSN" placeholder:"DSN"`
	ID         string   `name:"id" help:"A call's whole story: every event with this audit id, trace id or approval decision id, in time order." placeholder:"AUDIT_ID"`
	Since      string   `default:"24h" help:"From this long ago (10m, 24h) or this RFC 3339 time."`
	Until      string   `help:"Up to this long ago or this RFC 3339 time (default now)."`
	Action     []string `help:"Only this final action (allow, deny, ask...); repeatable." placeholder:"ACTION"`
	Rule       []string `help:"Only this rule; repeatable." placeholder:"RULE"`
	Tool       []string `help:"Only this tool; repeatable." placeholder:"TOOL"`
	Server     []string `help:"Only this server (upstream); repeatable." placeholder:"SERVER"`
	Principal  []string `help:"Only this principal (subject or client id); repeatable." placeholder:"PRINCIPAL"`
	Kind       []string `help:"Only this event kind (decision, approval, bundle.activated...); repeatable." placeholder:"KIND"`
	By         string   `help:"Count events grouped by this field: action, rule, tool, server, principal, client, issuer, agent, gateway, session, kind, method, stage, bundle, risk." placeholder:"FIELD"`
	Limit      int      `default:"50" help:"Most rows (events or groups)."`
	Unverified bool     `help:"Include events that failed signature verification (flagged FORGED(why))."`
	JSON       bool     `name:"json" help:"Print JSON (one array) instead of a table."`
}

// Run answers the query.
func (a *auditQueryCmd) Run(ctx context.Context, env *cliEnv) error {
	usage := func(format string, args ...any) error {
		fmt.Fprintf(env.Stderr, "palisade audit query: "+format+"\n", args...)
		return exitCode(exitUsage)
	}
	if err := auditsink.CheckDSN(a.DSN); err != nil {
		return usage("--dsn: %v", err)
	}
	now := time.Now()
	var q auditsink.Query
	var err error
	if a.Since != "" {
		if q.Since, err = audit.ParseSince(a.Since, now); err != nil {
			return usage("--since: %v", err)
		}
	}
	if a.Until != "" {
		if q.Until, err = audit.ParseSince(a.Until, now); err != nil {
			return usage("--until: %v", err)
		}
	}
	if _, ok := auditsink.GroupFields[a.By]; a.By != "" && !ok {
		return usage("--by %q: want one of action, rule, tool, server, principal, client, issuer, agent, gateway, session, kind, method, stage, bundle, risk", a.By)
	}
	if a.Limit < 0 {
		return usage("--limit must not be negative")
	}
	q.Action, q.Rule, q.Tool, q.Server, q.Principal, q.Kind = a.Action, a.Rule, a.Tool, a.Server, a.Principal, a.Kind
	q.Unverified, q.Limit = a.Unverified, a.Limit

	st, err := auditsink.Open(ctx, a.DSN)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit query:", err)
		return exitCode(exitFail)
	}
	defer st.Close()
	var out any
	switch {
	case a.ID != "":
		rows, err := st.Story(ctx, a.ID)
		if err == nil && len(rows) == 0 {
			err = fmt.Errorf("no event with audit id, trace id or decision id %s", a.ID)
		}
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade audit query:", err)
			return exitCode(exitFail)
		}
		out = rows
		if !a.JSON {
			writeRows(env.Stdout, rows, true)
		}
	case a.By != "":
		counts, err := st.Counts(ctx, q, a.By)
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade audit query:", err)
			return exitCode(exitFail)
		}
		out = counts
		if !a.JSON {
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "%s\tCOUNT\n", strings.ToUpper(a.By))
			for _, c := range counts {
				fmt.Fprintf(tw, "%s\t%d\n", orDash(c.Value), c.Count)
			}
			tw.Flush()
		}
	default:
		rows, err := st.Events(ctx, q)
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade audit query:", err)
			return exitCode(exitFail)
		}
		out = rows
		if !a.JSON {
			writeRows(env.Stdout, rows, false)
		}
	}
	if a.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(env.Stderr, "palisade audit query:", err)
			return exitCode(exitFail)
		}
	}
	return nil
}

// writeRows prints events as a table; story adds the kind and approval columns.
func writeRows(w io.Writer, rows []auditsink.Row, story bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if story {
		fmt.Fprintln(tw, "TIME\tKIND\tACTION\tSERVER/TOOL\tRULE\tAPPROVAL\tPRINCIPAL\tAUDIT ID\tVERIFIED")
	} else {
		fmt.Fprintln(tw, "TIME\tACTION\tSERVER/TOOL\tRULE\tPRINCIPAL\tRISK\tAUDIT ID\tVERIFIED")
	}
	for _, r := range rows {
		verified := "yes"
		if !r.Verified {
			verified = "FORGED(" + r.VerifyProblem + ")"
		}
		t := r.Time.Format("2006-01-02T15:04:05.000Z")
		st := orDash(r.Server) + "/" + orDash(r.Tool)
		if story {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t, r.Kind, orDash(r.Action), st, orDash(r.Rule), orDash(r.Approval), orDash(r.Principal), r.AuditID, verified)
			continue
		}
		risk := "-"
		if r.RiskScore != nil {
			risk = fmt.Sprintf("%.2f %s", *r.RiskScore, r.RiskLevel)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t, orDash(r.Action), st, orDash(r.Rule), orDash(r.Principal), risk, r.AuditID, verified)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
