package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/token"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// verdictBundle has two stages of the misbehave test plugin answering fixed verdicts: one asks
// for an execution token on echo, one denies get-env naming echo as its fallback.
func verdictBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wasm, _ := testenv.ReadPlugin(t, "./host/internal/testenv/misbehave")
	os.WriteFile(filepath.Join(dir, "v.wasm"), wasm, 0o644)
	y := `name: verdicts
version: "1"
default_action: allow
coverage: {uncovered: pass}
stages:
  - name: token
    plugin: v.wasm
    sha256: ""
    config: {mode: verdict, when_tool: whoami, verdict: {action: allow, require_token: true}}
  - name: risk
    plugin: v.wasm
    sha256: ""
    config: {mode: verdict, when_tool: get-env, verdict: {action: deny, reason: risk too high, rule: risk-high-deny, fallback: echo}}
`
	os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(y), 0o644)
	if _, err := bundlePin(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestExecutionTokenAndFallback(t *testing.T) {
	ns := testenv.StartNATS(t)
	// The upstream echoes the token it received, so the test sees what the tool server sees.
	s := testenv.NewGoServer()
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "returns params._meta[palisade/token]"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			tok, _ := req.Params.Meta[token.MetaKey].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tok}}}, nil, nil
		})
	srv := testenv.ServeGo(t, s, true)
	g := startGateway(t, ns.ClientURL(), verdictBundle(t), config.Upstream{Name: "go", URL: srv})
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()
	var text0 string

	// Fetch the published key the way a tool server would.
	resp, err := http.Get("http://" + g.Addr() + gateway.KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	pub, err := token.ParseJWK(jwk)
	if err != nil {
		t.Fatalf("published key %s: %v", jwk, err)
	}

	// whoami requires a token: the tool server gets it and verifies it with the published key.
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text0 = text(r)
	claims, err := token.Verify(pub, text0, time.Now())
	if err != nil {
		t.Fatalf("token %q does not verify: %v", text(r), err)
	}
	if err := claims.Check("go", "whoami", json.RawMessage(`{}`)); err != nil {
		t.Fatalf("claims %+v: %v", claims, err)
	}
	if err := claims.Check("go", "echo", json.RawMessage(`{}`)); err == nil {
		t.Fatal("a whoami token passed the check for echo")
	}
	// echo requires none.
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "pay"}})
	if err != nil || text(r) != "Echo: pay" {
		t.Fatalf("echo: %v %q", err, text(r))
	}

	// get-env is denied and its fallback echo runs instead, marked as such.
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"message": "drafted"}})
	if err != nil {
		t.Fatalf("fallback call: %v", err)
	}
	all := text(r)
	if !strings.Contains(all, "[palisade] get-env was denied") || !strings.Contains(all, "Echo: drafted") {
		t.Fatalf("fallback result %q", all)
	}
	fb, _ := r.Meta[engine.MetaKeyFallback].(map[string]any)
	if fb["from"] != "get-env" || fb["to"] != "echo" {
		t.Fatalf("fallback _meta %v", r.Meta)
	}

	// Audit: the echo event carries only the token's hash; the get-env event records the fallback.
	evs := events(t, ns.ClientURL(), 3)
	var sawToken, sawFallback bool
	for _, ev := range evs {
		if ev.Tool == "whoami" && ev.TokenSHA256 == token.Hash(text0) {
			sawToken = true
			b, _ := json.Marshal(ev)
			if strings.Contains(string(b), ".") && strings.Contains(string(b), "eyJ") {
				t.Errorf("audit event holds a token, not its hash: %s", b)
			}
		}
		if ev.Tool == "get-env" && ev.Action == "deny" && strings.Contains(string(ev.Detail), `"to":"echo"`) {
			sawFallback = true
		}
	}
	if !sawToken || !sawFallback {
		t.Fatalf("token hash in audit %v, fallback in audit %v: %+v", sawToken, sawFallback, evs)
	}
}
