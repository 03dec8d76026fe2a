package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink/pgtest"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuditSinkFeature: with an audit_sink.postgres section, serve copies its own audit events
// into PostgreSQL: on the embedded, authenticated bus the sink consumes as the sink role, and
// the bundle's activation and a call's decision land there, verified (signed by the gateway
// key), with the columns filled (tool, action, execution token hash).
func TestAuditSinkFeature(t *testing.T) {
	pg := pgtest.Start(t)
	s := testenv.NewGoServer()
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "says hello"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
		})
	srv := testenv.ServeGo(t, s, true)
	cfg := config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Bundle: verdictBundle(t),
		Upstreams: []config.Upstream{{Name: "go", URL: srv}},
		NATS:      config.NATS{Port: -1}, // embedded, with the role keys
		Plugins:   config.Plugins{CacheDir: testenv.CacheDir()},
		Admin:     config.Admin{Token: approvalsToken},
	}
	f, err := gateway.ParseFile(fmt.Appendf(nil, "audit_sink: {postgres: {dsn: %q, retention: 720h, batch_size: 10}}\n", pg.DSN()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: f.Sections})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.AuditSink() == nil {
		t.Fatal("no audit sink running")
	}
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	db, err := pgxpool.New(context.Background(), pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var action, token string
		var verified bool
		err := db.QueryRow(context.Background(), `SELECT action, token_sha256, verified FROM audit_events WHERE kind = 'decision' AND tool = 'whoami'`).Scan(&action, &token, &verified)
		if err == nil {
			if action != "allow" || token == "" || !verified {
				t.Fatalf("whoami row: action %q token %q verified %v", action, token, verified)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no whoami decision in PostgreSQL: %v (sink %+v)", err, g.AuditSink().Stats())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var activated int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE kind = 'bundle.activated' AND verified`).Scan(&activated); err != nil || activated != 1 {
		t.Fatalf("bundle.activated rows: %d, %v; want 1", activated, err)
	}
	// The dashboard's history reads the sink's table when the gateway runs one.
	var page struct {
		Events []audit.HistoryEvent `json:"events"`
		Source string               `json:"source"`
	}
	if code := adminCall(t, g, "GET", "/history?tool=whoami", nil, &page); code != 200 || page.Source != "postgres" ||
		len(page.Events) != 1 || !page.Events[0].Verified || page.Events[0].Action != "allow" {
		t.Fatalf("history: %d %+v", code, page)
	}
}
