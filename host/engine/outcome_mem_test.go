package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// The memory an outcome holds for its Upstream and its event's Bundle (and a Begin's exchange
// and outcome, made together): each outcome has its own (two never share it), changes through
// Upstream land in the outcome's copy, every event of one outcome names its bundle, and an
// event built earlier (the held record) keeps its bundle when a later one is built.
func TestOutcomeOwnMemory(t *testing.T) {
	ctx := context.Background()
	begin := func(bundle string) *Exchange {
		t.Helper()
		active := &chain.Active{}
		active.Swap(testChain(t, bundle, abi.ActionAllow, nil))
		e := NewEngine(EngineOptions{Active: active})
		m := &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: mcp.MethodToolsCall,
			Params: json.RawMessage(`{"name":"echo","arguments":{"message":"hi"}}`)}
		env, err := mcp.NewEnvelope(m, mcp.Context{Transport: "http", Server: "s"})
		if err != nil {
			t.Fatal(err)
		}
		x, err := e.Begin(ctx, &mcp.Parsed{Message: m, Envelope: env}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Finish(ctx) })
		return x
	}
	xa, xb := begin("bundle-a"), begin("bundle-b")
	a, b := xa.Outcome, xb.Outcome
	if a == b || a.Action != abi.ActionAllow || b.AuditID == a.AuditID {
		t.Fatalf("outcomes %p %p (%s, %s): want two of their own", a, b, a.AuditID, b.AuditID)
	}
	a.SetUpstream(audit.Upstream{Status: 200})
	b.SetUpstream(audit.Upstream{Status: 502})
	a.Upstream.LatencyUS, b.Upstream.Error = 7, "broke"
	if a.Upstream == b.Upstream || *a.Upstream != (audit.Upstream{Status: 200, LatencyUS: 7}) || *b.Upstream != (audit.Upstream{Status: 502, Error: "broke"}) {
		t.Fatalf("upstreams %+v %+v: want each outcome's own", *a.Upstream, *b.Upstream)
	}
	held := a.HeldEvent()
	ea, eb := a.Event(), b.Event()
	if ea.Bundle == eb.Bundle || ea.Bundle.Name != "bundle-a" || eb.Bundle.Name != "bundle-b" || ea.Bundle.Version != "1" {
		t.Fatalf("bundles %+v %+v: want each outcome's own", *ea.Bundle, *eb.Bundle)
	}
	if held.Bundle.Name != "bundle-a" || *held.Bundle != *ea.Bundle {
		t.Fatalf("held record's bundle %+v after the decision event was built, want %+v", *held.Bundle, *ea.Bundle)
	}
	if ea.Upstream == nil || *ea.Upstream != *a.Upstream || eb.Upstream.Error != "broke" {
		t.Fatalf("event upstreams %+v %+v, want the outcomes'", ea.Upstream, eb.Upstream)
	}
}
