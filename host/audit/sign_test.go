package audit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

// A gateway publishes signed events; someone holding a NATS identity that may publish on the
// audit subjects forges three: unsigned, signed by a key no gateway registered, and a real
// signature over changed data. audit tail, as the reader identity, flags exactly those.
func TestTailFlagsForgedEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	gwID := b.Identity(bus.RoleGateway)
	bootstrap(t, b, gwID)
	nc, err := b.Connect("gateway", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: gwID, Gateway: "gw-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	good := decision(1)
	good.Tool = "real"
	p.Record(ctx, good)
	flush(t, p)

	// The forger: raw nats.go as the gateway identity (the strongest one a reader-side attacker
	// could hope for short of its key), publishing straight to the audit subject.
	forger, err := nats.Connect(b.ClientURL(), gwID.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	pub := func(tool string, h nats.Header) {
		ev := decision(2)
		ev.Tool = tool
		data, _ := json.Marshal(ev)
		if h == nil {
			h = nats.Header{}
		}
		if sig := h.Get("sign-with-mallory"); sig != "" {
			h.Del("sign-with-mallory")
			ids, _ := bus.EnsureKeys(t.TempDir())
			s, _ := ids[bus.RoleGateway].Sign(data)
			h.Set(audit.HeaderSigner, ids[bus.RoleGateway].PublicKey())
			h.Set(audit.HeaderSignature, b64(s))
		}
		if _, err := forger.RequestMsg(&nats.Msg{Subject: ev.Subject(), Data: data, Header: h}, 5*time.Second); err != nil {
			t.Fatalf("forge %s: %v", tool, err)
		}
	}
	pub("unsigned", nil)
	pub("mallory", nats.Header{"sign-with-mallory": {"1"}})
	// A real signature, from the good event, over other data.
	goodData, _ := json.Marshal(good)
	sig, _ := gwID.Sign(goodData)
	pub("tampered", nats.Header{audit.HeaderSigner: {gwID.PublicKey()}, audit.HeaderSignature: {b64(sig)}})

	reader, err := nats.Connect(b.ClientURL(), b.Identity(bus.RoleReader).Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var out syncBuffer
	if err := audit.Tail(ctx, reader, audit.TailOptions{Verify: true, Last: 10, Count: 4}, &out); err != nil {
		t.Fatalf("Tail: %v", err)
	}
	want := map[string]string{"real": "", "unsigned": audit.ProblemUnsigned, "mallory": audit.ProblemUntrusted, "tampered": audit.ProblemBadSignature}
	lines := out.Lines()
	if len(lines) != 4 {
		t.Fatalf("tail printed %d lines, want 4:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		for tool, problem := range want {
			if !strings.Contains(l, "/"+tool) {
				continue
			}
			flagged := strings.HasPrefix(l, "FORGED(")
			if problem == "" && flagged || problem != "" && !strings.HasPrefix(l, "FORGED("+problem+")") {
				t.Errorf("%s: line %q, want problem %q", tool, l, problem)
			}
		}
	}

	// JSON output carries the problem as a field.
	var js syncBuffer
	if err := audit.Tail(ctx, reader, audit.TailOptions{Verify: true, JSON: true, Last: 10, Count: 1, Filter: []string{"tool=unsigned"}}, &js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Forged string `json:"forged"`
		Tool   string `json:"tool"`
	}
	if l := js.Lines(); len(l) != 1 || json.Unmarshal([]byte(l[0]), &got) != nil || got.Forged != audit.ProblemUnsigned || got.Tool != "unsigned" {
		t.Fatalf("JSON tail = %q, want forged=unsigned", js.Lines())
	}

	// Signed JSON lines carry what a file reader needs to check them later, with the same
	// verdicts (palisade tune --events).
	var sl syncBuffer
	if err := audit.Tail(ctx, reader, audit.TailOptions{JSON: true, Signed: true, Last: 10, Count: 4}, &sl); err != nil {
		t.Fatal(err)
	}
	offline := audit.NewSigners(ctx, nil, "", gwID.PublicKey())
	if len(sl.Lines()) != 4 {
		t.Fatalf("signed tail printed %q", sl.Lines())
	}
	for _, l := range sl.Lines() {
		var se audit.SignedEvent
		var ev audit.Event
		if err := json.Unmarshal([]byte(l), &se); err != nil || json.Unmarshal(se.Event, &ev) != nil {
			t.Fatalf("signed line %q: %v", l, err)
		}
		tool := ev.Tool
		if got := offline.VerifyEvent(ctx, se); got != want[tool] {
			t.Errorf("%s: VerifyEvent = %q, want %q", tool, got, want[tool])
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
