package proxy_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
	pmcp "github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/host/proxy"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoAllowedEngine builds a bundle whose rules allow the Go SDK server's echo tool and deny the
// rest (the bundle's default).
func echoAllowedEngine(t *testing.T) *engine.Engine {
	t.Helper()
	rules := []byte("rules:\n  - id: echo-ok\n    priority: 10\n    action: allow\n    reason: echo and route are harmless\n    when:\n      tool: [echo, route]\n")
	active := &chain.Active{}
	active.Swap(testenv.BuildBundle(t, testenv.AgentsBundle(t, rules)).Chain)
	return engine.NewEngine(engine.EngineOptions{Active: active, Gateway: "test"})
}

// startHTTPProxy serves the Streamable HTTP proxy in front of a real Go SDK server and returns
// the proxy's /mcp URL.
func startHTTPProxy(t *testing.T, stateless bool) string {
	t.Helper()
	return startHTTPProxyTo(t, testenv.StartGoServer(t, stateless))
}

func startHTTPProxyTo(t *testing.T, up string) string {
	t.Helper()
	h, err := proxy.NewHTTP(proxy.HTTPOptions{Upstreams: []proxy.Upstream{{Name: "go", URL: up}}, Engine: echoAllowedEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	h.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(func() { h.Close(); srv.Close() })
	return srv.URL + "/mcp"
}

// TestRoutingHeadersEveryShape: Mcp-Method, Mcp-Name and Mcp-Param-* are compared with the body
// of single messages, notifications and every element of a batch; a mismatch is refused with
// -32004 before anything is judged or forwarded.
func TestRoutingHeadersEveryShape(t *testing.T) {
	url := startHTTPProxy(t, true)
	call := func(id int, tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	echoCall := call(1, "echo", `{"message":"hi"}`)
	b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("hi")) + "?="
	type hdr = map[string][]string
	for _, tc := range []struct {
		name     string
		body     string
		hdr      hdr
		mismatch string // "" = passes the header checks
	}{
		{"single, matching", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, ""},
		{"single, Mcp-Param matching", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Message": {"hi"}}, ""},
		{"single, Mcp-Param base64", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Message": {b64}}, ""},
		{"single, Mcp-Name spoofed", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"get-env"}}, "Mcp-Name"},
		{"single, Mcp-Name twice", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo", "get-env"}}, "Mcp-Name"},
		{"single, Mcp-Param spoofed", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Message": {"other"}}, "Mcp-Param-Message"},
		{"single, Mcp-Param of no argument", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Region": {"eu"}}, "Mcp-Param-Region"},
		{"single, Mcp-Param under another name", call(1, "echo", `{"message":"hi","opts":{"region":"eu"}}`), hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Zone": {"eu"}}, ""},
		{"single, Mcp-Param with another argument's value", call(1, "echo", `{"message":"hi","note":"x"}`), hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Message": {"x"}}, "Mcp-Param-Message"},
		{"single, Mcp-Param number", call(1, "echo", `{"message":"hi","n":5}`), hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-N": {"5"}}, ""},
		{"single, Mcp-Param bad base64", echoCall, hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Message": {"=?base64?!!?="}}, "Mcp-Param-Message"},
		{"Mcp-Param on tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr{"Mcp-Method": {"tools/list"}, "Mcp-Param-Message": {"hi"}}, "Mcp-Param-Message"},
		{"notification, Mcp-Method spoofed", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr{"Mcp-Method": {"tools/call"}}, "Mcp-Method"},
		{"batch, all matching", "[" + echoCall + "," + call(2, "echo", `{"message":"hi"}`) + "]", hdr{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}, "Mcp-Param-Message": {"hi"}}, ""},
		{"batch, second element another tool", "[" + echoCall + "," + call(2, "get-env", `{"name":"HOME"}`) + "]", hdr{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, "Mcp-Name"},
		{"batch, second element another argument", "[" + echoCall + "," + call(2, "echo", `{"message":"ho"}`) + "]", hdr{"Mcp-Method": {"tools/call"}, "Mcp-Param-Message": {"hi"}}, "Mcp-Param-Message"},
		{"batch, a notification under Mcp-Method", "[" + echoCall + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`, hdr{"Mcp-Method": {"tools/call"}}, "Mcp-Method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postRaw(t, url, tc.body, tc.hdr)
			refused := status == http.StatusBadRequest && strings.Contains(body, `"code":-32004`)
			switch {
			case tc.mismatch == "" && refused:
				t.Fatalf("refused a matching message: %d %s", status, body)
			case tc.mismatch != "" && (!refused || !strings.Contains(body, tc.mismatch)):
				t.Fatalf("got %d %s, want 400 -32004 naming %s", status, body, tc.mismatch)
			}
		})
	}
}

// TestStrictBodyOverHTTP: duplicate keys and deep nesting are refused before judging.
func TestStrictBodyOverHTTP(t *testing.T) {
	url := startHTTPProxy(t, true)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"get-env","arguments":{}}}`, "ambiguous"},
		{"name in two cases", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"get-env","arguments":{}}}`, "ambiguous"},
		{"deep arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":` + strings.Repeat("[", 1<<20) + `}}}`, "nested too deeply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postRaw(t, url, tc.body, map[string][]string{"Mcp-Protocol-Version": {"2025-06-18"}})
			if status != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Fatalf("got %d %s, want 400 with %q", status, body, tc.want)
			}
		})
	}
}

// TestSDKClientThroughHeaderChecks: the official Go SDK client, through the proxy, lists and
// calls tools; whatever routing headers it sends pass the checks.
func TestSDKClientThroughHeaderChecks(t *testing.T) {
	url := startHTTPProxy(t, false)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "through"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("echo: %+v %v", res, err)
	}
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "Echo: through" {
		t.Fatalf("echo answered %+v", res.Content[0])
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"name": "HOME"}}); err == nil {
		t.Fatal("get-env was not denied")
	}
}

// TestSDKParamHeadersThroughProxy: a Go SDK server declares x-mcp-header on a top-level and a
// nested property (2026-07-28); the Go SDK client mirrors them into Mcp-Param-Region (plain) and
// Mcp-Param-Zone (base64, not ASCII); the proxy's checks let them through and the upstream, which
// validates them against its schema, answers.
func TestSDKParamHeadersThroughProxy(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "routed", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "route", Description: "Answers with its routing arguments.", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Region string `json:"region"`
				Opts   struct {
					Zone string `json:"zone"`
				} `json:"opts"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Region + "/" + in.Opts.Zone}}}, nil
		})
	url := startHTTPProxyTo(t, testenv.ServeGo(t, s, true))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v < pmcp.Stateless {
		t.Fatalf("negotiated %s, want %s (Mcp-Param-* headers)", v, pmcp.Stateless)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "route", Arguments: map[string]any{"region": "eu-west", "opts": map[string]any{"zone": "zé-1"}}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("route: %+v %v", res, err)
	}
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "eu-west/zé-1" {
		t.Fatalf("route answered %+v", res.Content[0])
	}
	// The same call with a spoofed Mcp-Param-Region is refused by the proxy.
	status, body := postRaw(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"route","arguments":{"region":"eu-west"}}}`,
		map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"route"}, "Mcp-Param-Region": {"us-east"}})
	if status != http.StatusBadRequest || !strings.Contains(body, "-32004") {
		t.Fatalf("spoofed Mcp-Param-Region: %d %s", status, body)
	}
}

func postRaw(t *testing.T, url, body string, hdr map[string][]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(pmcp.HeaderProtocolVersion, pmcp.Stateless)
	for k, vs := range hdr {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
