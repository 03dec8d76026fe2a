package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hideRules deny get-env for everyone (no principal, no argument condition), deny echo only in
// an unlikely minute (a time window: not always), and allow the rest.
const hideRules = `rules:
  - id: deny-get-env
    priority: 10
    action: deny
    reason: get-env prints the server's environment
    when: {tool: [get-env]}
  - id: echo-at-night
    priority: 20
    action: deny
    when: {tool: [echo], time: {from: "03:17", to: "03:18"}}
  - id: the-rest
    priority: 100
    action: allow
    when: {}
`

// TestToolsListHidesWhatIsAlwaysDenied: a tool the policy denies for every call (a bare deny, no
// caller needed) is left out of tools/list on /mcp/<name> and on the aggregate /mcp, and a client
// that calls it anyway is denied by the same rule; a deny that holds only in a time window does
// not hide. With bundle.yaml `tools_list: {hide_denied: false}` every tool is advertised and the
// deny still holds.
func TestToolsListHidesWhatIsAlwaysDenied(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := authnUpstream(t, &authSeen{})
	for _, tc := range []struct {
		name   string
		extra  string
		hidden bool
	}{{"default", "", true}, {"hide_denied false", "tools_list: {hide_denied: false}\n", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testenv.AgentsBundle(t, []byte(hideRules))
			if tc.extra != "" {
				f, err := os.OpenFile(filepath.Join(dir, "bundle.yaml"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(tc.extra); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			port := testenv.FreePort(t)
			g, err := gateway.New(context.Background(), gateway.Options{Config: config.Config{
				Listen:    fmt.Sprintf("127.0.0.1:%d", port),
				DataDir:   t.TempDir(),
				Bundle:    dir,
				Upstreams: []config.Upstream{{Name: "go", URL: up}, {Name: "go2", URL: up}},
				NATS:      config.NATS{URL: ns.ClientURL()},
				Limits:    config.Limits{BodyBytes: 64 << 10, UpstreamTimeout: config.Duration(10 * time.Second)},
				Plugins:   config.Plugins{CacheDir: testenv.CacheDir()},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close(context.Background()) })
			for path, prefix := range map[string]string{"/mcp/go": "", "/mcp": "go__"} {
				cs := connect(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
				names := authnTools(t, cs)
				if !slices.Contains(names, prefix+"echo") {
					t.Fatalf("%s: a deny in a time window hid echo: %v", path, names)
				}
				if got := slices.Contains(names, prefix+"get-env"); got == tc.hidden {
					t.Fatalf("%s: get-env listed = %v, want %v: %v", path, got, !tc.hidden, names)
				}
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: prefix + "get-env", Arguments: map[string]any{"name": "HOME"}})
				if d := denied(t, err); d.Rule != "deny-get-env" {
					t.Fatalf("%s: get-env called anyway: %+v", path, d)
				}
			}
		})
	}
}
