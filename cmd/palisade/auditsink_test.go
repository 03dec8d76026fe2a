package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/auditsink/pgtest"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAuditSinkPostgresAndQuery runs `audit sink postgres` against the embedded, authenticated
// bus (the sink role's key from the data dir: durable consumer and acks) and a real PostgreSQL,
// then asks `audit query` the common questions: denials by rule, a filtered list, a call's
// story by id, JSON output; a bad --by is a usage error naming it.
func TestAuditSinkPostgresAndQuery(t *testing.T) {
	data := t.TempDir()
	b, err := bus.Start(context.Background(), bus.Options{DataDir: data, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	admin, err := b.ConnectAs(bus.RoleAdmin, "test-admin")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	js, _ := jetstream.New(admin)
	ctx := context.Background()
	gw := b.Identity(bus.RoleGateway)
	if err := audit.EnsureStream(ctx, js, audit.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := audit.RegisterSigner(ctx, js, "", gw, "gw-test"); err != nil {
		t.Fatal(err)
	}
	nc, err := b.Connect("test-gateway", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	pub, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: gw, Gateway: "gw-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(ctx)
	now := time.Now().UTC()
	var held audit.Event
	for i := range 12 {
		ev := audit.Event{ID: audit.NewID(), Time: now.Add(time.Duration(i-20) * time.Second), Kind: audit.KindDecision, Method: "tools/call",
			Server: "fs", Tool: []string{"read_file", "write_file", "delete"}[i%3], Action: "allow"}
		if i%3 != 0 {
			ev.Action, ev.Rule = "deny", []string{"", "no-writes", "no-deletes"}[i%3]
		}
		if i == 0 {
			ev.Action, ev.Rule = "ask", "ask-reads"
			held = ev
		}
		pub.Record(ctx, ev)
	}
	pub.Record(ctx, audit.Event{ID: audit.NewID(), Time: now, Kind: audit.KindApproval, Server: "fs", Tool: "read_file", Action: "allow",
		Approval: &audit.Approval{ID: held.ID, Decision: audit.ApprovalApproved, DecidedBy: "approver:alice"}})
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	pg := pgtest.Start(t)
	sinkCtx, stop := context.WithCancel(ctx)
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(sinkCtx, []string{"audit", "sink", "postgres", "--dsn", pg.DSN(), "--nats-url", b.ClientURL(), "--data-dir", data, "--retention", "720h"},
			&cliEnv{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	}()
	st, err := auditsink.Open(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		_ = st.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE verified`).Scan(&n)
		if n == 13 {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("sink stored %d verified events of 13\nstderr:\n%s", n, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if code := <-done; code != exitOK || !strings.Contains(out.String(), "stopped: 13 events stored (0 unverified)") {
		t.Fatalf("audit sink postgres: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}

	dsn := []string{"--dsn", pg.DSN()}
	q := func(args ...string) (int, string, string) {
		return runKong(t, append(append([]string{"audit", "query"}, args...), dsn...), nil)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of stdout, in order
		not  []string
	}{
		{"denials by rule", []string{"--action", "deny", "--by", "rule"}, []string{"RULE", "COUNT", "no-deletes", "4", "no-writes", "4"}, []string{"ask-reads"}},
		{"deletes denied", []string{"--action", "deny", "--tool", "delete", "--since", "1h"}, []string{"TIME", "ACTION", "deny", "fs/delete", "no-deletes", "yes"}, []string{"write_file"}},
		{"by tool over all", []string{"--by", "tool"}, []string{"read_file", "5"}, nil},
		{"story", []string{"--id", held.ID}, []string{"decision", "ask", "ask-reads", held.ID, "approval", "allow", "approved"}, nil},
		{"until before everything", []string{"--until", "1h", "--by", "action"}, []string{"ACTION", "COUNT"}, []string{"deny"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := q(tc.args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			rest := stdout
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order %q):\n%s", w, tc.want, stdout)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(stdout, n) {
					t.Errorf("stdout has %q:\n%s", n, stdout)
				}
			}
		})
	}
	code, stdout, stderr := q("--rule", "no-writes", "--json")
	var rows []auditsink.Row
	if err := json.Unmarshal([]byte(stdout), &rows); code != exitOK || err != nil || len(rows) != 4 {
		t.Fatalf("--json: exit %d, %d rows, %v\nstdout %s\nstderr %s", code, len(rows), err, stdout, stderr)
	}
	for _, r := range rows {
		if r.Rule != "no-writes" || r.Tool != "write_file" || !r.Verified {
			t.Errorf("--rule no-writes row %+v", r)
		}
	}
	if code, _, stderr := q("--by", "colour"); code != exitUsage || !strings.Contains(stderr, `--by "colour"`) {
		t.Errorf("--by colour: exit %d, stderr %q; want 2 naming it", code, stderr)
	}
	if code, _, stderr := q("--id", "nope"); code != exitFail || !strings.Contains(stderr, "no event") {
		t.Errorf("--id nope: exit %d, stderr %q; want 1", code, stderr)
	}
	if code, _, stderr := runKong(t, []string{"audit", "query", "--dsn", "host=/x port=notaport"}, nil); code != exitUsage || !strings.Contains(stderr, "--dsn") {
		t.Errorf("bad --dsn: exit %d, stderr %q", code, stderr)
	}
}

// TestAuditDSNFromEnv: PALISADE_AUDIT_DSN fills --dsn of the sink and of query; the flag wins.
func TestAuditDSNFromEnv(t *testing.T) {
	env := map[string]string{"PALISADE_AUDIT_DSN": "host=/from-env"}
	if got := parsed(t, []string{"audit", "sink", "postgres"}, env).(*auditSinkPostgresCmd).DSN; got != "host=/from-env" {
		t.Errorf("sink --dsn = %q", got)
	}
	if got := parsed(t, []string{"audit", "query"}, env).(*auditQueryCmd).DSN; got != "host=/from-env" {
		t.Errorf("query --dsn = %q", got)
	}
	if got := parsed(t, []string{"audit", "query", "--dsn", "host=/flag"}, env).(*auditQueryCmd).DSN; got != "host=/flag" {
		t.Errorf("query --dsn beside the variable = %q", got)
	}
	if code, _, errs := runKong(t, []string{"audit", "query"}, nil); code != exitUsage || !strings.Contains(errs, "--dsn") {
		t.Errorf("query without a DSN: exit %d, stderr %q; want 2 naming --dsn", code, errs)
	}
}
