package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "audit", summary: "audit feed: `audit tail [--json] [--filter k=v]`", cmd: &auditCmd{}})
}

type auditCmd struct {
	Tail auditTailCmd `cmd:"" help:"Follow the audit stream on NATS; forged events are flagged FORGED(why)."`
}

type auditTailCmd struct {
	NATSURL string        `name:"nats-url" default:"nats://127.0.0.1:4222" help:"NATS server." env:"PALISADE_NATS_URL" placeholder:"URL"`
	Creds   string        `help:"Reader creds or nkey seed file (default DATA_DIR/nats-auth/reader.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	DataDir string        `default:".palisade" help:"Gateway data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Verify  bool          `default:"true" negatable:"" help:"Check each event's signature; forged ones are flagged FORGED(why)."`
	JSON    bool          `name:"json" help:"Print each event as JSON."`
	Filter  []string      `help:"Only events matching key=value (action, server, tool, kind, stage, agent); repeatable." placeholder:"KEY=VALUE" sep:"none"`
	Last    int           `help:"Start with the last N stored events (0 = only new ones)."`
	Since   time.Duration `help:"Start with events from this long ago (e.g. 10m)."`
	Count   int           `help:"Stop after this many events (0 = follow until interrupted)."`
}

func (a *auditTailCmd) Run(ctx context.Context, env *cliEnv) error {
	url, creds, dataDir, verify, asJSON, filters, last, since, count := &a.NATSURL, &a.Creds, &a.DataDir, &a.Verify, &a.JSON, a.Filter, &a.Last, &a.Since, &a.Count
	id, err := bus.LoadIdentity(*dataDir, bus.RoleReader, *creds)
	switch {
	case err == nil:
	case errors.Is(err, bus.ErrNoIdentity) && *creds == "":
		id = nil // no key here: an external server without authentication, perhaps
	default:
		fmt.Fprintln(env.Stderr, "palisade audit tail:", err)
		return exitCode(exitFail)
	}
	nc, err := bus.Dial(*url, id, nats.Name("palisade audit tail"), nats.Timeout(5*time.Second))
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade audit tail: connect %s: %v\n", *url, err)
		return exitCode(exitFail)
	}
	defer nc.Close()
	o := audit.TailOptions{JSON: *asJSON, Filter: filters, Last: *last, Count: *count, Verify: *verify}
	if gw, err := bus.LoadIdentity(*dataDir, bus.RoleGateway, ""); err == nil {
		o.TrustedKeys = append(o.TrustedKeys, gw.PublicKey()) // besides the signers bucket
	}
	if *since > 0 {
		o.Since = time.Now().Add(-*since)
	}
	if err := audit.Tail(ctx, nc, o, env.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(env.Stderr, "palisade audit tail:", err)
		return exitCode(exitFail)
	}
	return nil
}
