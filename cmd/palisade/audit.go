package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "audit", summary: "audit feed: `audit tail [--json] [--filter k=v]`, `audit sink postgres --dsn DSN`, `audit query --dsn DSN`, `audit disagreements`, `audit label ID --verdict V`, `audit creds -o FILE`", cmd: &auditCmd{}})
}

type auditCmd struct {
	Tail   auditTailCmd   `cmd:"" help:"Follow the audit stream on NATS; forged events are flagged FORGED(why)."`
	Verify auditVerifyCmd `cmd:"" help:"Check the stored history's hash chains: exit 1 naming the first deleted, altered or reordered event."`
	Creds  auditCredsCmd  `cmd:"" help:"Write the reader's nkey seed file, for other NATS clients: nats sub --nkey FILE 'palisade.audit.>'."`
	Sink   auditSinkCmd   `cmd:"" help:"Copy the audit stream into a database: audit sink postgres --dsn DSN."`
	Query  auditQueryCmd  `cmd:"" help:"Ask the audit record in PostgreSQL: denials by rule, tool, principal, server over a time range; a call's story (--id)."`
	// Disagreements is `audit disagreements`.
	Disagreements auditDisagreementsCmd `cmd:"" help:"Recent calls a gateway's shadow bundle would have decided otherwise than the active one (admin API)."`
	Label         auditLabelCmd         `cmd:"" help:"Mark a decision correct, false_positive or false_negative (admin API, approver role); palisade tune learns from labels."`
}

// auditCredsCmd is `palisade audit creds`: it copies a read-only role's key out of the data dir,
// so that a NATS client other than audit tail (the nats CLI, a script) can read the feed the
// embedded server only serves to known keys.
type auditCredsCmd struct {
	Role    string `default:"reader" enum:"reader,sink" help:"Role whose key to write: reader (audit stream and signers, read only) or sink (reader plus durable consumers)."`
	Out     string `short:"o" required:"" help:"File to write (mode 0600; an existing file is refused unless --force)." placeholder:"FILE"`
	Force   bool   `help:"Replace FILE if it exists."`
	DataDir string `default:".palisade" help:"Gateway data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
}

func (a *auditCredsCmd) Run(_ context.Context, env *cliEnv) error {
	// LoadIdentity checks the key (mode 0600, a valid user seed) before it is copied.
	id, err := bus.LoadIdentity(a.DataDir, a.Role, "")
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade audit creds: %v (start the gateway once with --data-dir %s to generate the keys)\n", err, a.DataDir)
		return exitCode(exitFail)
	}
	seed, err := os.ReadFile(bus.KeyPath(a.DataDir, a.Role))
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit creds:", err)
		return exitCode(exitFail)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if a.Force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(a.Out, flags, 0o600)
	if err == nil {
		err = f.Chmod(0o600) // an existing file replaced with --force keeps no looser mode
		if _, werr := f.Write(seed); err == nil {
			err = werr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit creds:", err)
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "wrote the %s key %s to %s\nread the feed: nats sub --server nats://127.0.0.1:4222 --nkey %s 'palisade.audit.>'\n", a.Role, id.PublicKey(), a.Out, a.Out)
	return nil
}

type auditTailCmd struct {
	NATSURL string        `name:"nats-url" default:"nats://127.0.0.1:4222" help:"NATS server." env:"PALISADE_NATS_URL" placeholder:"URL"`
	Creds   string        `help:"Reader creds or nkey seed file (default DATA_DIR/nats-auth/reader.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	DataDir string        `default:".palisade" help:"Gateway data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Verify  bool          `default:"true" negatable:"" help:"Check each event's signature; forged ones are flagged FORGED(why)."`
	JSON    bool          `name:"json" help:"Print each event as JSON."`
	Signed  bool          `help:"With --json: print each event with its signature ({signer, signature, batch, event}), so a file of them can be checked later (palisade tune --events)."`
	Filter  []string      `help:"Only events matching key=value (action, server, tool, kind, stage, agent); repeatable." placeholder:"KEY=VALUE" sep:"none"`
	Last    int           `help:"Start with the last N stored events (0 = only new ones)."`
	Since   time.Duration `help:"Start with events from this long ago (e.g. 10m)."`
	Count   int           `help:"Stop after this many events (0 = follow until interrupted)."`
}

func (a *auditTailCmd) Run(ctx context.Context, env *cliEnv) error {
	nc, trusted, err := dialAudit(a.NATSURL, bus.RoleReader, a.Creds, a.DataDir, "palisade audit tail")
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit tail:", err)
		return exitCode(exitFail)
	}
	defer nc.Close()
	// The gateway key in DATA_DIR is trusted besides the signers bucket.
	o := audit.TailOptions{JSON: a.JSON, Signed: a.Signed, Filter: a.Filter, Last: a.Last, Count: a.Count, Verify: a.Verify, TrustedKeys: trusted}
	if a.Since > 0 {
		o.Since = time.Now().Add(-a.Since)
	}
	if err := audit.Tail(ctx, nc, o, env.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(env.Stderr, "palisade audit tail:", err)
		return exitCode(exitFail)
	}
	return nil
}

type auditVerifyCmd struct {
	NATSURL        string `name:"nats-url" default:"nats://127.0.0.1:4222" help:"NATS server." env:"PALISADE_NATS_URL" placeholder:"URL"`
	Creds          string `help:"Reader creds or nkey seed file (default DATA_DIR/nats-auth/reader.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	DataDir        string `default:".palisade" help:"Gateway data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Stream         string `default:"PALISADE_AUDIT" help:"Audit stream." placeholder:"NAME"`
	AllowUnchained bool   `help:"Skip events without a chain link (recorded before chaining) instead of failing."`
}

// Run reads the whole audit stream and checks each publisher's hash chain (audit.VerifyChain).
func (a *auditVerifyCmd) Run(ctx context.Context, env *cliEnv) error {
	nc, _, err := dialAudit(a.NATSURL, bus.RoleReader, a.Creds, a.DataDir, "palisade audit verify")
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit verify:", err)
		return exitCode(exitFail)
	}
	defer nc.Close()
	rep, err := audit.VerifyChain(ctx, nc, a.Stream, a.AllowUnchained)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade audit verify:", err)
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "ok: %d events in %d chains (stream sequences %d-%d)\n", rep.Events, rep.Publishers, rep.FirstSeq, rep.LastSeq)
	return nil
}

// dialAudit connects an audit command to NATS as role (reader, sink): creds when given, else
// the role's key in dataDir, else (no key there) without credentials. It also returns the
// signer keys trusted besides the signers bucket: dataDir's gateway key, when there.
func dialAudit(url, role, creds, dataDir, name string, opts ...nats.Option) (*nats.Conn, []string, error) {
	id, err := bus.LoadIdentity(dataDir, role, creds)
	switch {
	case err == nil:
	case errors.Is(err, bus.ErrNoIdentity) && creds == "":
		id = nil // no key here: an external server without authentication, perhaps
	default:
		return nil, nil, err
	}
	nc, err := bus.Dial(url, id, append([]nats.Option{nats.Name(name), nats.Timeout(5 * time.Second)}, opts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect %s: %w", url, err)
	}
	var trusted []string
	if gw, err := bus.LoadIdentity(dataDir, bus.RoleGateway, ""); err == nil {
		trusted = append(trusted, gw.PublicKey())
	}
	return nc, trusted, nil
}
