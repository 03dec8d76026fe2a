package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"
)

// promSynthetic are series Prometheus itself makes for every target; no exporter exports them.
var promSynthetic = map[string]bool{"up": true, "scrape_duration_seconds": true}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promBy       = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promTemplate = regexp.MustCompile(`\$\{?[a-zA-Z_]+\}?`)
)

// promqlMetrics returns the metric names an expression uses: the exporter's (palisade_, go_,
// process_) and Prometheus' synthetic ones; functions, keywords and label names are left out
// by stripping strings, label matchers, by/on clauses and ranges first.
func promqlMetrics(expr string) []string {
	e := promString.ReplaceAllString(expr, " ")
	e = promMatchers.ReplaceAllString(e, " ")
	e = promBy.ReplaceAllString(e, " ")
	e = promRange.ReplaceAllString(e, " ")
	e = promTemplate.ReplaceAllString(e, " ")
	var out []string
	for _, id := range promIdent.FindAllString(e, -1) {
		if promSynthetic[id] || strings.HasPrefix(id, "palisade_") || strings.HasPrefix(id, "go_") || strings.HasPrefix(id, "process_") {
			out = append(out, id)
		}
	}
	return out
}

// dashboardExprs collects every PromQL string of a Grafana dashboard: targets' expr and the
// templating queries.
func dashboardExprs(v any, key string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			dashboardExprs(c, k, out)
		}
	case []any:
		for _, c := range x {
			dashboardExprs(c, key, out)
		}
	case string:
		if key == "expr" || key == "definition" || (key == "query" && strings.Contains(x, "(")) {
			*out = append(*out, x)
		}
	}
}

// TestDeployMetricsExported starts a real gateway with the example bundle, makes an allowed and
// a denied call, scrapes /metrics, and checks that every metric deploy/grafana-dashboard.json
// and deploy/prometheus-alerts.yaml query is exported (histogram suffixes stripped).
func TestDeployMetricsExported(t *testing.T) {
	root := testenv.RepoRoot(t)
	uses := map[string][]string{} // metric → where
	b, err := os.ReadFile(filepath.Join(root, "deploy", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	var exprs []string
	dashboardExprs(dash, "", &exprs)
	if len(exprs) < 10 {
		t.Fatalf("dashboard: %d expressions", len(exprs))
	}
	for _, e := range exprs {
		for _, m := range promqlMetrics(e) {
			uses[m] = append(uses[m], "dashboard")
		}
	}
	b, err = os.ReadFile(filepath.Join(root, "deploy", "prometheus-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("prometheus-alerts.yaml: %v", err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			ms := promqlMetrics(r.Expr)
			if r.Alert == "" || len(ms) == 0 {
				t.Errorf("alert %q: no name or no metric in %q", r.Alert, r.Expr)
			}
			for _, m := range ms {
				uses[m] = append(uses[m], "alert "+r.Alert)
			}
		}
	}
	if n < 5 {
		t.Fatalf("alerts: %d rules", n)
	}

	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	g := startGateway(t, ns.ClientURL(), testenv.ExampleBundle(t), config.Upstream{Name: "go", URL: up})
	base := "http://" + g.Addr()
	cs := connect(t, base+"/mcp", nil)
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "m"}}); err != nil {
		t.Fatal(err)
	}
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{"name": "HOME"}}) // denied

	scrape := func() map[string]bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		have := map[string]bool{}
		for _, l := range strings.Split(string(body), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
				have[f[2]] = true
			}
		}
		return have
	}
	exported := func(have map[string]bool, m string) bool {
		if promSynthetic[m] || have[m] {
			return true
		}
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if strings.HasSuffix(m, suf) && have[strings.TrimSuffix(m, suf)] {
				return true
			}
		}
		return false
	}
	// A vector appears once it has a sample; the decision counter is incremented after the
	// answer is flushed: poll until every metric is there or the deadline passes.
	var have map[string]bool
	var missing []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		have = scrape()
		missing = missing[:0]
		for m := range uses {
			if !exported(have, m) {
				missing = append(missing, m)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s (used by %s) is not exported", m, strings.Join(uses[m], ", "))
	}
	if len(uses) < 8 {
		t.Errorf("only %d metrics used: %v", len(uses), uses)
	}
}

func TestPromqlMetrics(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`sum by (le, server) (rate(palisade_upstream_duration_seconds_bucket{job=~"$job", outcome="error"}[$__rate_interval]))`, "palisade_upstream_duration_seconds_bucket"},
		{`up{job="palisade"} == 0`, "up"},
		{`a_b / on (instance) group_left(model) palisade_infer_model_info`, "palisade_infer_model_info"},
		{`label_values(palisade_http_requests_total, job)`, "palisade_http_requests_total"},
		{`go_goroutines{job=~"${job}"} + process_open_fds`, "go_goroutines process_open_fds"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			if got := strings.Join(promqlMetrics(tc.expr), " "); got != tc.want {
				t.Errorf("promqlMetrics = %q, want %q", got, tc.want)
			}
		})
	}
}
