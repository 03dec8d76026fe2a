package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestResponseAskResolvesByFallback: a response stage that asks (or samples, or is uncertain)
// cannot hold the answer for a person, so the bundle's fallback decides: deny unless the bundle
// says allow. Before, the answer went to the client as it came: an ask was an allow.
func TestResponseAskResolvesByFallback(t *testing.T) {
	for _, tc := range []struct {
		respAction, fallback string
		want                 string // the outcome's action after the answer
	}{
		{abi.ActionAsk, "", abi.ActionDeny},
		{abi.ActionAsk, abi.ActionDeny, abi.ActionDeny},
		{abi.ActionAsk, abi.ActionAllow, abi.ActionAllow},
		{abi.ActionSample, "", abi.ActionDeny},
		{abi.ActionSample, abi.ActionAllow, abi.ActionAllow},
		{abi.ActionUncertain, "", abi.ActionDeny},
		{abi.ActionNone, "", abi.ActionAllow},
		{abi.ActionAllow, "", abi.ActionAllow},
	} {
		t.Run(tc.respAction+"/fallback="+tc.fallback, func(t *testing.T) {
			c, err := chain.New(chain.Options{Info: chain.Info{Name: "b", Version: "1"}, DefaultAction: abi.ActionAllow,
				AskFallback: tc.fallback, SampleFallback: tc.fallback, Stages: []*chain.Stage{
					{Name: "req", Plugin: goStage{action: abi.ActionAllow}, Request: true, Timeout: 5 * time.Second},
					{Name: "resp", Plugin: goStage{action: tc.respAction}, Response: true, Timeout: 5 * time.Second},
				}})
			if err != nil {
				t.Fatal(err)
			}
			active := &chain.Active{}
			active.Swap(c)
			e := NewEngine(EngineOptions{Active: active})
			env, err := mcp.NewEnvelope(&mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: mcp.MethodToolsCall,
				Params: json.RawMessage(`{"name":"fetch","arguments":{"url":"https://example.com/"}}`)}, mcp.Context{Transport: "http", Server: "s"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			o, err := e.Request(ctx, env)
			if err != nil || o.Action != abi.ActionAllow {
				t.Fatalf("request: %+v %v", o, err)
			}
			defer o.Finish(ctx)
			msg := &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: json.RawMessage(`{"content":[{"type":"text","text":"page text"}]}`)}
			out := judgeAnswer(ctx, e, nil, e.o.Logger, o, json.RawMessage(`1`), msg)
			if o.Action != tc.want {
				t.Fatalf("outcome %s, want %s (response %+v)", o.Action, tc.want, o.Response)
			}
			denied := strings.Contains(string(out), `"error"`)
			if denied != (tc.want == abi.ActionDeny) {
				t.Fatalf("answer sent %s; want denied=%v", out, tc.want == abi.ActionDeny)
			}
			resolved, _ := o.Detail["response_resolved"].(map[string]any)
			if asked := tc.respAction == abi.ActionAsk || tc.respAction == abi.ActionSample || tc.respAction == abi.ActionUncertain; asked != (resolved != nil) {
				t.Fatalf("detail %v; want response_resolved recorded only for an ask", o.Detail)
			}
			if tc.want == abi.ActionDeny && !strings.Contains(o.Decision.Reason, "cannot be held") {
				t.Fatalf("deny reason %q does not say why", o.Decision.Reason)
			}
		})
	}
}
