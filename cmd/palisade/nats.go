package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/gateway"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "nats", summary: "NATS set-up: `nats setup` creates the streams and buckets gateways use (admin identity)", cmd: &natsCmd{}})
}

// natsCmd is `palisade nats`.
type natsCmd struct {
	Setup natsSetupCmd `cmd:"" help:"Create the audit stream, signers, approvals and bundle buckets, and register gateway signer keys (as the admin identity). A gateway's embedded server does this itself; run it once for an external server."`
}

type natsSetupCmd struct {
	NATSURL   string   `name:"nats-url" default:"nats://127.0.0.1:4222" help:"NATS server." env:"PALISADE_NATS_URL" placeholder:"URL"`
	Creds     string   `help:"Admin creds or nkey seed file (default DATA_DIR/nats-auth/admin.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	DataDir   string   `default:".palisade" help:"Data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Signer    []string `help:"A gateway's creds or nkey seed file whose public key may sign audit events (repeatable)." placeholder:"FILE"`
	Stream    string   `help:"Audit stream (default PALISADE_AUDIT)."`
	Approvals string   `default:"${approvals_bucket}" help:"Approvals KV bucket; - = none."`
	Bundles   string   `default:"${bundle_bucket}" help:"Bundle Object Store bucket; - = none."`
	Replicas  int      `default:"0" help:"Copies of each stream and bucket on a JetStream cluster (3 survives one server down); 0 = create with 1 and leave existing ones as they are." env:"PALISADE_NATS_REPLICAS"`
}

func (c *natsSetupCmd) Run(ctx context.Context, env *cliEnv) error {
	fail := func(err error) error {
		fmt.Fprintln(env.Stderr, "palisade nats setup:", err)
		return exitCode(exitFail)
	}
	id, err := bus.LoadIdentity(c.DataDir, bus.RoleAdmin, c.Creds)
	if errors.Is(err, bus.ErrNoIdentity) && c.Creds == "" {
		id, err = nil, nil // a server without authentication
	}
	if err != nil {
		return fail(err)
	}
	s := gateway.NATSSetup{AuditStream: c.Stream, ApprovalsBucket: c.Approvals, BundleBucket: c.Bundles, Gateway: "palisade nats setup", Replicas: c.Replicas}
	for _, path := range c.Signer {
		sid, err := bus.LoadIdentity("", bus.RoleGateway, path)
		if err != nil {
			return fail(err)
		}
		s.Signers = append(s.Signers, audit.Signer(sid))
	}
	nc, err := bus.Dial(c.NATSURL, id, nats.Name("palisade nats setup"), nats.Timeout(10*time.Second))
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := gateway.SetupNATS(sctx, nc, s); err != nil {
		return fail(err)
	}
	fmt.Fprintf(env.Stdout, "nats set up on %s (%d signer keys registered, replicas %s)\n", c.NATSURL, len(s.Signers), replicasText(c.Replicas))
	return nil
}

// replicasText is how setup reports the replica count it asked for.
func replicasText(n int) string {
	if n == 0 {
		return "unchanged (new: 1)"
	}
	return fmt.Sprint(n)
}
