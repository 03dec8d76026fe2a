package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "audit", summary: "audit feed: `audit tail [--json] [--filter k=v]`", run: runAudit})
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runAudit(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] != "tail" {
		fmt.Fprintln(env.Stderr, "usage: palisade audit tail [--nats-url URL] [--creds FILE] [--json] [--filter key=value]... [--last N] [--verify=false]")
		return exitUsage
	}
	fs := flag.NewFlagSet("audit tail", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	url := fs.String("nats-url", envOr(env, "PALISADE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server (env PALISADE_NATS_URL)")
	creds := fs.String("creds", envOr(env, "PALISADE_NATS_CREDS", ""), "reader creds or nkey seed file (env PALISADE_NATS_CREDS; default DATA_DIR/nats-auth/reader.nk)")
	dataDir := fs.String("data-dir", envOr(env, "PALISADE_DATA_DIR", ".palisade"), "gateway data dir holding nats-auth/ (env PALISADE_DATA_DIR)")
	verify := fs.Bool("verify", true, "check each event's signature; forged ones are flagged FORGED(why)")
	asJSON := fs.Bool("json", false, "print each event as JSON")
	var filters multiFlag
	fs.Var(&filters, "filter", "only events matching key=value (action, server, tool, kind, stage, agent); repeatable")
	last := fs.Int("last", 0, "start with the last N stored events (0 = only new ones)")
	since := fs.Duration("since", 0, "start with events from this long ago (e.g. 10m)")
	count := fs.Int("count", 0, "stop after this many events (0 = follow until interrupted)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	id, err := bus.LoadIdentity(*dataDir, bus.RoleReader, *creds)
	switch {
	case err == nil:
	case errors.Is(err, bus.ErrNoIdentity) && *creds == "":
		id = nil // no key here: an external server without authentication, perhaps
	default:
		fmt.Fprintln(env.Stderr, "palisade audit tail:", err)
		return exitFail
	}
	nc, err := bus.Dial(*url, id, nats.Name("palisade audit tail"), nats.Timeout(5*time.Second))
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade audit tail: connect %s: %v\n", *url, err)
		return exitFail
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
		return exitFail
	}
	return exitOK
}
