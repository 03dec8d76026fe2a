package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/added060/palisade/host/engine"
	pmcp "github.com/added060/palisade/host/mcp"
)

// metaHook adds a _meta entry to every forwarded call, as the execution-token hook does.
type metaHook struct{}

func (metaHook) AfterRequest(_ context.Context, o *engine.Outcome) error {
	if o.Allowed() && o.Envelope.Method == pmcp.MethodToolsCall {
		o.Meta = map[string]any{"palisade/test": "added"}
	}
	return nil
}

// TestTransportParity: over stdio as over HTTP, a stage matching tools/list is not skipped,
// _meta entries hooks add are forwarded, and a denied call's fallback tool runs instead.
func TestTransportParity(t *testing.T) {
	e := stagesEngine(t, `
  - name: nolist
    plugin: mis.wasm
    sha256: MISBEHAVE
    phase: request
    match:
      methods: ["tools/list"]
    timeout: 10s
    failure: closed
    config: {mode: deny}
  - name: fallback
    plugin: mis.wasm
    sha256: MISBEHAVE
    phase: request
    match:
      methods: ["tools/call"]
    timeout: 10s
    failure: closed
    config: {mode: verdict, when_tool: dangerous, verdict: {action: deny, reason: too dangerous, fallback: clean}}
`, metaHook{})
	stdio := startHostileStdio(t, e, nil)
	stdio.roundTrip(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 0)
	url := startGatewayHTTP(t, e, nil, startHostileHTTP(t, &hostileHTTP{}))
	transports := map[string]func(t *testing.T, line string, id int) *pmcp.Message{
		"stdio": stdio.roundTrip,
		"http": func(t *testing.T, line string, id int) *pmcp.Message {
			ms := postMCP(t, url, "hostile-session", line)
			if len(ms) != 1 {
				t.Fatalf("answer %+v", ms)
			}
			return ms[0]
		},
	}
	for name, roundTrip := range transports {
		t.Run(name, func(t *testing.T) {
			if m := roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 1); m.Error == nil || m.Error.Code != pmcp.CodeDenied {
				t.Errorf("tools/list with a stage denying it: %s %+v", m.Result, m.Error)
			}
			if m := roundTrip(t, call(2, "meta"), 2); m.Error != nil || !strings.Contains(string(m.Result), `palisade/test`) {
				t.Errorf("the upstream did not get the hook's _meta: %s %+v", m.Result, m.Error)
			}
			m := roundTrip(t, call(3, "dangerous"), 3)
			if m.Error != nil || strings.Contains(string(m.Result), "REACHED") || !strings.Contains(string(m.Result), engine.MetaKeyFallback) || !strings.Contains(string(m.Result), "all good") {
				t.Errorf("fallback: %s %+v", m.Result, m.Error)
			}
		})
	}
}
