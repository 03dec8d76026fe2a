package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestExchangeLifecycle drives one call's lifecycle the way every transport does (parse, Begin,
// Forward, hand over the answer, Finish) on a real bundle whose injection plugin judges
// tools/call answers, and checks what each step returns and what the audit event says.
func TestExchangeLifecycle(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		failure string                                  // the injection stage's failure mode
		answer  func(x *engine.Exchange, id int) []byte // hands the upstream's answer over
		deny    bool                                    // the client gets the deny
		rule    string                                  // the audit event's rule, when denied
	}{
		{"clean answer passes", "closed", func(x *engine.Exchange, id int) []byte {
			return x.Answer(ctx, result(id, "all good"))
		}, false, ""},
		{"injected answer denied", "closed", func(x *engine.Exchange, id int) []byte {
			return x.Answer(ctx, result(id, injectedText))
		}, true, ""},
		{"unreadable answer, stage fails closed", "closed", func(x *engine.Exchange, _ int) []byte {
			return x.Unjudgeable([]byte(`{"jsonrpc":"1.0"}`), pmcp.ErrBadVersion)
		}, true, engine.RuleUnjudgeable},
		{"unreadable answer, stage fails open", "open", func(x *engine.Exchange, _ int) []byte {
			return x.Unjudgeable([]byte(`{"jsonrpc":"1.0"}`), pmcp.ErrBadVersion)
		}, false, ""},
		{"ambiguous answer refused whatever the mode", "open", func(x *engine.Exchange, _ int) []byte {
			return x.Unjudgeable([]byte(`{"id":1,"id":2}`), pmcp.ErrAmbiguousKeys)
		}, true, engine.RuleAmbiguous},
		{"no answer, stage fails closed", "closed", func(x *engine.Exchange, _ int) []byte {
			return x.NoAnswer("up")
		}, true, engine.RuleUnjudgeable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &sink{}
			e := responseEngine(t, tc.failure, nil)
			e = engine.NewEngine(withRecorder(e.Options(), rec))
			p, err := pmcp.Parse([]byte(call(7, "echo")), pmcp.Context{Transport: "test", Server: "up"})
			if err != nil {
				t.Fatal(err)
			}
			x, err := e.Begin(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			step, params, changed := x.Forward()
			if step != engine.StepForward || changed || string(params) != string(p.Message.Params) {
				t.Fatalf("Forward = %v, %s, %v; want the client's params forwarded unchanged", step, params, changed)
			}
			b := tc.answer(x, 7)
			x.Finish(ctx)
			x.Finish(ctx) // a second Finish records nothing more
			if tc.failure == "open" && !tc.deny {
				// A fail-open stage passes the unreadable bytes as they came.
				if string(b) != `{"jsonrpc":"1.0"}` {
					t.Fatalf("fail-open answer %s, want the upstream's bytes", b)
				}
			} else {
				m, err := pmcp.ParseMessage(b)
				if err != nil {
					t.Fatalf("answer %s: %v", b, err)
				}
				if string(m.ID) != "7" {
					t.Errorf("answer id %s, want the client's 7", m.ID)
				}
				if denied := m.Error != nil && m.Error.Code == pmcp.CodeDenied; denied != tc.deny {
					t.Fatalf("answer %s: denied %v, want %v", b, denied, tc.deny)
				}
			}
			evs := rec.events()
			if len(evs) != 1 {
				t.Fatalf("%d audit events, want 1", len(evs))
			}
			want := abi.ActionAllow
			if tc.deny {
				want = abi.ActionDeny
			}
			if evs[0].Action != want || (tc.rule != "" && evs[0].Rule != tc.rule) {
				t.Errorf("event action %q rule %q, want %q %q", evs[0].Action, evs[0].Rule, want, tc.rule)
			}
		})
	}
}

// TestExchangeDeniedRequestForwardsNothing: a request the chain denies is answered with the
// deny, under the client's id, and never forwarded.
func TestExchangeDeniedRequestForwardsNothing(t *testing.T) {
	ctx := context.Background()
	rec := &sink{}
	e := engine.NewEngine(withRecorder(responseEngine(t, "closed", nil).Options(), rec))
	p, err := pmcp.Parse([]byte(`{"jsonrpc":"2.0","id":"a","method":"sampling/createMessage","params":{"messages":[]}}`), pmcp.Context{Transport: "test", Server: "up"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.Begin(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if step, _, _ := x.Forward(); step != engine.StepDeny {
		t.Fatalf("Forward step %v, want StepDeny", step)
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *pmcp.Error     `json:"error"`
	}
	if err := json.Unmarshal(x.Deny(), &m); err != nil || string(m.ID) != `"a"` || m.Error == nil || m.Error.Code != pmcp.CodeDenied {
		t.Fatalf("deny %s (%v), want a -32001 error with id \"a\"", x.Deny(), err)
	}
	x.Finish(ctx)
	if evs := rec.events(); len(evs) != 1 || evs[0].Action != abi.ActionDeny {
		t.Fatalf("events %+v, want one deny", evs)
	}
	// Engine.JudgeServerRequest is the same judgment for a request from an upstream.
	if b := e.JudgeServerRequest(ctx, p); b == nil {
		t.Fatal("JudgeServerRequest let a denied sampling request through")
	}
}

// TestExchangeNoBundle: without an active bundle nothing is decided and nothing is forwarded.
func TestExchangeNoBundle(t *testing.T) {
	p, err := pmcp.Parse([]byte(call(1, "echo")), pmcp.Context{})
	if err != nil {
		t.Fatal(err)
	}
	e := engine.NewEngine(engine.EngineOptions{Active: &chain.Active{}, Recorder: &sink{}})
	if _, err := e.Begin(context.Background(), p, nil); !errors.Is(err, engine.ErrNoChain) {
		t.Fatalf("Begin without a bundle: %v, want ErrNoChain", err)
	}
}

func withRecorder(o engine.EngineOptions, rec engine.Recorder) engine.EngineOptions {
	o.Recorder = rec
	return o
}

func result(id int, text string) *pmcp.Message {
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	idb, _ := json.Marshal(id)
	return &pmcp.Message{JSONRPC: "2.0", ID: idb, Result: b}
}

// TestJudgeAsServeDoes: Engine.Judge (palisade policy test) decides a fixture's envelope through
// the same lifecycle as a call: the request phase, and for a response-phase envelope the answer's
// judging after its request.
func TestJudgeAsServeDoes(t *testing.T) {
	ctx := context.Background()
	e := responseEngine(t, "closed", nil)
	text := func(s string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": s}}})
		return b
	}
	for _, tc := range []struct {
		name string
		env  abi.Envelope
		want string
	}{
		{"request allowed", abi.Envelope{Phase: abi.PhaseRequest, Method: pmcp.MethodToolsCall, Tool: "echo"}, abi.ActionAllow},
		{"request denied", abi.Envelope{Phase: abi.PhaseRequest, Method: pmcp.MethodSampling}, abi.ActionDeny},
		{"clean answer", abi.Envelope{Phase: abi.PhaseResponse, Method: pmcp.MethodToolsCall, Tool: "echo", Result: text("fine")}, abi.ActionAllow},
		{"injected answer", abi.Envelope{Phase: abi.PhaseResponse, Method: pmcp.MethodToolsCall, Tool: "echo", Result: text(injectedText)}, abi.ActionDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			env.ABI = abi.Version
			o, err := e.Judge(ctx, &env)
			if err != nil {
				t.Fatal(err)
			}
			if o.Action != tc.want {
				t.Fatalf("Judge = %s (%s), want %s", o.Action, o.Decision.Reason, tc.want)
			}
		})
	}
}
