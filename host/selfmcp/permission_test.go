package selfmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/selfmcp"
	"github.com/added060/palisade/sdk/go/abi"
)

type recorder struct {
	mu  sync.Mutex
	evs []audit.Event
}

func (r *recorder) Record(_ context.Context, ev audit.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

var (
	principalA = &abi.Principal{Issuer: "https://idp.example", Subject: "agent-a"}
	principalB = &abi.Principal{Issuer: "https://idp.example", Subject: "agent-b"}
)

// permissionEnv is an engine on the agents bundle (server github asks a person) with an
// approval queue, and one own MCP server per principal.
type permissionEnv struct {
	e      *engine.Engine
	m      *approval.Manager
	rec    *recorder
	active *chain.Active
}

func newPermissionEnv(t *testing.T) permissionEnv {
	t.Helper()
	active := &chain.Active{}
	active.Swap(buildChain(t))
	rec := &recorder{}
	m, err := approval.New(context.Background(), approval.Options{Recorder: rec, Timeout: time.Minute,
		Bundle: func() chain.Info { return active.Load().Info() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e := engine.NewEngine(engine.EngineOptions{Active: active, Recorder: rec, Approver: m})
	return permissionEnv{e: e, m: m, rec: rec, active: active}
}

func (p permissionEnv) client(t *testing.T, who *abi.Principal, limits selfmcp.Limits) *mcp.ClientSession {
	t.Helper()
	s, err := selfmcp.New(selfmcp.Options{Engine: p.e, Principal: who, Permissions: p.m, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return connectStdio(t, s, nil, "")
}

// call makes a tools/call of github create_issue as who through the engine, holding it at most
// for wait.
func (p permissionEnv) call(t *testing.T, who *abi.Principal, args string, wait time.Duration) *engine.Outcome {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"name": "create_issue", "arguments": json.RawMessage(args)})
	env, err := pmcp.NewEnvelope(&pmcp.Message{JSONRPC: "2.0", Method: pmcp.MethodToolsCall, Params: params},
		pmcp.Context{Transport: "http", Server: "github", Principal: who})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	o, err := p.e.Request(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	o.Finish(context.Background()) // records and releases the chain
	return o
}

// decideNext waits for a held permission request and decides it.
func (p permissionEnv) decideNext(t *testing.T, d approval.Decision) approval.Pending {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, q := range p.m.List() {
			if q.Method == approval.MethodPermission {
				if err := p.m.Decide(context.Background(), q.ID, d); err != nil {
					t.Fatal(err)
				}
				return q
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no permission request held")
	return approval.Pending{}
}

// TestRequestPermissionBoundToPrincipal: principal A asks for a grant on github create_issue
// for 5 minutes; a person approves it through the approval queue; A's later call is released
// by the grant without being held, B's same call is not (it is held, and denied when its
// client goes away). The audit names who asked and who decided.
func TestRequestPermissionBoundToPrincipal(t *testing.T) {
	p := newPermissionEnv(t)
	a := p.client(t, principalA, selfmcp.Limits{})
	type answer struct {
		out selfmcp.RequestPermissionOutput
		err error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: selfmcp.ToolRequestPermission, Arguments: map[string]any{
			"server": "github", "tool": "create_issue", "scope": "minutes", "minutes": 5, "reason": "file the release issue"}})
		var out selfmcp.RequestPermissionOutput
		if err == nil {
			b, _ := json.Marshal(r.StructuredContent)
			err = json.Unmarshal(b, &out)
			if r.IsError {
				err = errors.New(string(b))
			}
		}
		got <- answer{out, err}
	}()
	q := p.decideNext(t, approval.Decision{Action: abi.ActionAllow, By: "carol"})
	if approval.PrincipalKey(q.Principal) != approval.PrincipalKey(principalA) || q.Permission == nil || q.Permission.Scope != approval.ScopeMinutes || q.Tool != "create_issue" || q.Server != "github" {
		t.Fatalf("queue entry: %+v", q)
	}
	ans := <-got
	if ans.err != nil || !ans.out.Granted || ans.out.DecidedBy != "carol" || ans.out.Scope != approval.ScopeMinutes {
		t.Fatalf("requestPermission: %+v %v", ans.out, ans.err)
	}
	// A's later calls (any arguments) go through on the grant, without a hold.
	for _, args := range []string{`{"title":"release 1.2"}`, `{"title":"other"}`} {
		if o := p.call(t, principalA, args, 5*time.Second); o.Action != abi.ActionAllow || o.Approval == nil || o.Approval.ID != q.ID {
			t.Fatalf("A's call %s: %s %+v, want allow by the grant %s", args, o.Action, o.Approval, q.ID)
		}
	}
	// B's same call is held (not granted) and denied when its client gives up.
	if o := p.call(t, principalB, `{"title":"release 1.2"}`, 300*time.Millisecond); o.Action != abi.ActionDeny || o.Approval == nil || o.Approval.DecidedBy != approval.ByDisconnect {
		t.Fatalf("B's call: %s %+v, want held and denied", o.Action, o.Approval)
	}
	// The permission request's audit event: who asked and who decided.
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	var found bool
	for _, ev := range p.rec.evs {
		if ev.Method == approval.MethodPermission && ev.Approval != nil {
			found = true
			if ev.Principal == nil || ev.Principal.Subject != "agent-a" || ev.Approval.DecidedBy != "carol" || ev.Approval.Decision != audit.ApprovalApproved {
				t.Errorf("permission audit event: principal %+v approval %+v", ev.Principal, ev.Approval)
			}
		}
	}
	if !found {
		t.Error("no audit event for the permission request")
	}
}

// TestRequestPermissionOnce: a once grant for given arguments lets exactly one later call of
// A with those arguments through; a denied request grants nothing.
func TestRequestPermissionOnce(t *testing.T) {
	p := newPermissionEnv(t)
	a := p.client(t, principalA, selfmcp.Limits{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: selfmcp.ToolRequestPermission, Arguments: map[string]any{
			"server": "github", "tool": "create_issue", "arguments": map[string]any{"title": "x"}}})
	}()
	p.decideNext(t, approval.Decision{Action: abi.ActionAllow})
	<-done
	if o := p.call(t, principalA, `{"title":"y"}`, 200*time.Millisecond); o.Action != abi.ActionDeny {
		t.Fatalf("other arguments: %s, want held and denied", o.Action)
	}
	if o := p.call(t, principalA, `{"title":"x"}`, 5*time.Second); o.Action != abi.ActionAllow {
		t.Fatalf("granted arguments: %s", o.Action)
	}
	if o := p.call(t, principalA, `{"title":"x"}`, 200*time.Millisecond); o.Action != abi.ActionDeny {
		t.Fatalf("second use of a once grant: %s, want held and denied", o.Action)
	}
}

// TestRequestPermissionNeedsQueue: without an approval queue the tool says so.
func TestRequestPermissionNeedsQueue(t *testing.T) {
	f := newServer(t, nil)
	cs := connectStdio(t, f.srv, nil, "")
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: selfmcp.ToolRequestPermission, Arguments: map[string]any{"server": "github", "tool": "x"}})
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "no person can be asked") {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestRateLimitPerPrincipal: requestPermission allows 10 calls a minute per principal (the
// 11th is -32000 naming the limit); another principal has its own budget.
func TestRateLimitPerPrincipal(t *testing.T) {
	p := newPermissionEnv(t)
	p.m = nil // no queue: each call answers at once (a tool error), still counted
	mk := func(who *abi.Principal) *mcp.ClientSession {
		s, err := selfmcp.New(selfmcp.Options{Engine: p.e, Principal: who, Now: frozen})
		if err != nil {
			t.Fatal(err)
		}
		return connectStdio(t, s, nil, "")
	}
	a, b := mk(principalA), mk(principalB)
	args := map[string]any{"server": "github", "tool": "create_issue"}
	for i := range 10 {
		if _, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: selfmcp.ToolRequestPermission, Arguments: args}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: selfmcp.ToolRequestPermission, Arguments: args})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != pmcp.CodeRateLimited || !strings.Contains(je.Message, "requestPermission allows 10 calls per minute per principal") {
		t.Fatalf("11th requestPermission: %v, want -32000 naming the limit", err)
	}
	if _, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: selfmcp.ToolRequestPermission, Arguments: args}); err != nil {
		t.Fatalf("B after A's limit: %v", err)
	}
}
