package admin_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/auditsink"
	"github.com/added060/palisade/host/auditsink/pgtest"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

const historyToken = "history-test-token"

// historyEvents are 30 decisions a minute apart (deny on even minutes, rule block-<i%3>, tool
// t<i%4>, server s<i%2>, principal p<i%3>), a call held then decided, and a call still held.
type historyEvents struct {
	t0               time.Time
	decided, waiting string
}

func recordHistory(t *testing.T, p *audit.Publisher) historyEvents {
	t.Helper()
	ctx := context.Background()
	h := historyEvents{t0: time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour), decided: audit.NewID(), waiting: audit.NewID()}
	for i := range 30 {
		act, rule := abi.ActionAllow, ""
		if i%2 == 0 {
			act, rule = abi.ActionDeny, fmt.Sprintf("block-%d", i%3)
		}
		p.Record(ctx, audit.Event{Kind: audit.KindDecision, Time: h.t0.Add(time.Duration(i) * time.Minute), Action: act, Rule: rule,
			Server: fmt.Sprintf("s%d", i%2), Tool: fmt.Sprintf("t%d", i%4), Reason: fmt.Sprintf("reason, \"%d\"", i),
			Principal: &abi.Principal{Issuer: "idp", Subject: fmt.Sprintf("p%d", i%3)},
			Stages:    []abi.StageResult{{Stage: "rules", Action: act, Rule: rule, LatencyUS: 40}, {Stage: "risk", Score: 0.5, LatencyUS: 70}}})
	}
	stages := []abi.StageResult{{Stage: "rules", Action: "ask", Rule: "review", LatencyUS: 30}}
	held := func(call, tool string, at time.Time) audit.Event {
		return audit.Event{Kind: audit.KindHeld, Time: at, Action: "ask", Server: "gh", Tool: tool, Rule: "review", Stages: stages,
			Approval: &audit.Approval{ID: call, Decision: audit.ApprovalHeld}}
	}
	p.Record(ctx, held(h.decided, "merge", h.t0.Add(40*time.Minute)))
	p.Record(ctx, held(h.waiting, "push", h.t0.Add(41*time.Minute)))
	p.Record(ctx, audit.Event{ID: h.decided, Kind: audit.KindDecision, Time: h.t0.Add(40 * time.Minute), Action: "allow", RequestedAction: "ask",
		Server: "gh", Tool: "merge", Rule: "review", Stages: stages, Approval: &audit.Approval{ID: "ap", Decision: audit.ApprovalApproved, DecidedBy: "carol"},
		Shadow: &audit.Shadow{Action: "deny", Rule: "stricter", Disagrees: true}})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// historyServer is the admin API with only the history routes over src.
func historyServer(t *testing.T, src admin.HistorySource) *httptest.Server {
	t.Helper()
	e := echo.New()
	s, err := admin.New(admin.Options{Echo: e, Token: historyToken})
	if err != nil {
		t.Fatal(err)
	}
	admin.RegisterHistory(s.Group(), src, slog.New(slog.DiscardHandler))
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, ts *httptest.Server, path string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+admin.DefaultPrefix+path, nil)
	req.Header.Set("Authorization", "Bearer "+historyToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func getJSON(t *testing.T, ts *httptest.Server, path string, v any) {
	t.Helper()
	resp, b := get(t, ts, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// TestHistoryAPI runs the same questions through the admin API over both sources: the audit
// stream (embedded bus, read as the reader identity) and the PostgreSQL sink (real cluster).
func TestHistoryAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Port: bus.RandomPort})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	gw := b.Identity(bus.RoleGateway)
	if err := setupBus(ctx, b, gw); err != nil {
		t.Fatal(err)
	}
	nc, err := b.Connect("gateway", audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir(), Signer: gw, Gateway: "gw-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ev := recordHistory(t, p)
	rd, err := b.ConnectAs(bus.RoleReader, "history")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()

	t.Run("jetstream", func(t *testing.T) {
		checkHistoryAPI(t, historyServer(t, audit.NewStreamHistory(ctx, audit.StreamHistoryOptions{Conn: rd})), ev, "jetstream")
	})
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		sinkConn, err := b.ConnectAs(bus.RoleSink, "sink")
		if err != nil {
			t.Fatal(err)
		}
		defer sinkConn.Close()
		sink, err := auditsink.New(ctx, auditsink.Options{DSN: pg.DSN(), Conn: sinkConn, TrustedKeys: []string{gw.PublicKey()}})
		if err != nil {
			t.Fatal(err)
		}
		sctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- sink.Run(sctx) }()
		defer func() { stop(); <-done; sink.Close() }()
		st, err := auditsink.Open(ctx, pg.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		testenv.Eventually(t, time.Minute, "33 events in PostgreSQL", func() bool {
			var n int
			_ = st.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_events`).Scan(&n)
			return n >= 33
		})
		checkHistoryAPI(t, historyServer(t, auditsink.NewHistory(st)), ev, "postgres")
	})
}

// setupBus creates the audit stream and registers the gateway's signer, as the admin identity.
func setupBus(ctx context.Context, b *bus.Bus, signer audit.Signer) error {
	nc, err := b.ConnectAs(bus.RoleAdmin, "setup")
	if err != nil {
		return err
	}
	defer nc.Close()
	return setupAudit(ctx, nc, signer)
}

func checkHistoryAPI(t *testing.T, ts *httptest.Server, ev historyEvents, source string) {
	type page struct {
		Events    []audit.HistoryEvent `json:"events"`
		Next      string               `json:"next"`
		Truncated bool                 `json:"truncated"`
		Source    string               `json:"source"`
	}
	var all page
	getJSON(t, ts, "/history?limit=0", &all)
	if all.Source != source || len(all.Events) != 32 || all.Truncated || all.Next != "" {
		t.Fatalf("all: source %q, %d events, truncated %v next %q; want %s, 32", all.Source, len(all.Events), all.Truncated, all.Next, source)
	}
	for _, tc := range []struct {
		name, query string
		want        int
		check       func(e audit.HistoryEvent) bool
	}{
		{"denials", "action=deny", 15, func(e audit.HistoryEvent) bool { return e.Action == "deny" }},
		{"two rules", "action=deny&rule=block-0,block-1", 10, func(e audit.HistoryEvent) bool { return e.Rule != "block-2" }},
		{"tool and server", "tool=t1&server=s1", 8, func(e audit.HistoryEvent) bool { return e.Tool == "t1" }},
		{"principal", "principal=p2", 10, func(e audit.HistoryEvent) bool { return e.Principal.Subject == "p2" }},
		{"text", "q=REASON,%20%2217%22", 1, func(e audit.HistoryEvent) bool { return e.Reason == `reason, "17"` }},
		{"held", "action=held", 1, func(e audit.HistoryEvent) bool { return e.Held && e.CallID() == ev.waiting }},
		{"time range", "from=" + ev.t0.Add(10*time.Minute).Format(time.RFC3339) + "&to=" + ev.t0.Add(20*time.Minute).Format(time.RFC3339), 10,
			func(e audit.HistoryEvent) bool { return !e.Time.Before(ev.t0.Add(10 * time.Minute)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p page
			getJSON(t, ts, "/history?"+tc.query, &p)
			if len(p.Events) != tc.want {
				t.Fatalf("%d events, want %d", len(p.Events), tc.want)
			}
			for _, e := range p.Events {
				if !tc.check(e) || !e.Verified {
					t.Fatalf("event %+v does not fit the filter", e)
				}
			}
		})
	}
	t.Run("paging", func(t *testing.T) {
		var ids []string
		cursor := ""
		for range 10 {
			var p page
			getJSON(t, ts, "/history?limit=7&cursor="+cursor, &p)
			for _, e := range p.Events {
				ids = append(ids, e.ID)
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		want := make([]string, 0, len(all.Events))
		for _, e := range all.Events {
			want = append(want, e.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("pages of 7 gave %d ids, want the same %d as one page", len(ids), len(want))
		}
		if resp, _ := get(t, ts, "/history?cursor=nonsense"); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("bad cursor: %d, want 400", resp.StatusCode)
		}
	})
	t.Run("drill-down", func(t *testing.T) {
		var d audit.HistoryDetail
		getJSON(t, ts, "/history/"+ev.decided, &d)
		e := d.Event
		if e.ID != ev.decided || e.Held || e.Shadow == nil || e.Shadow.Action != "deny" || len(e.Stages) != 1 || e.Approval.DecidedBy != "carol" {
			t.Fatalf("decided: %+v", e)
		}
		if len(d.Related) != 1 || d.Related[0].Kind != audit.KindHeld {
			t.Fatalf("related %+v, want the held record", d.Related)
		}
		d = audit.HistoryDetail{}
		getJSON(t, ts, "/history/"+ev.waiting, &d)
		if !d.Event.Held || d.Event.Tool != "push" || len(d.Related) != 0 {
			t.Fatalf("waiting: %+v", d.Event)
		}
		if resp, _ := get(t, ts, "/history/"+audit.NewID()); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("unknown id: %d, want 404", resp.StatusCode)
		}
	})
	t.Run("chart", func(t *testing.T) {
		var c audit.HistoryChart
		getJSON(t, ts, "/history/chart?by=action&bucket=10m&from="+ev.t0.Format(time.RFC3339), &c)
		// Buckets of ten minutes from t0: 5 allow and 5 deny in each of the first three; the
		// decided call (allow) and the held one in the fifth.
		if len(c.Buckets) != 4 || c.BucketS != 600 {
			t.Fatalf("chart %+v", c)
		}
		for i := range 3 {
			if b := c.Buckets[i]; !b.Start.Equal(ev.t0.Add(time.Duration(i)*10*time.Minute)) || b.Counts["allow"] != 5 || b.Counts["deny"] != 5 {
				t.Fatalf("bucket %d: %+v", i, b)
			}
		}
		if b := c.Buckets[3]; b.Counts["allow"] != 1 || b.Counts["held"] != 1 {
			t.Fatalf("bucket 3: %+v", b)
		}
		var byRule audit.HistoryChart
		getJSON(t, ts, "/history/chart?by=rule&bucket=1h&action=deny&from="+ev.t0.Format(time.RFC3339), &byRule)
		total := map[string]int64{}
		for _, b := range byRule.Buckets {
			for k, n := range b.Counts {
				total[k] += n
			}
		}
		if total["block-0"] != 5 || total["block-1"] != 5 || total["block-2"] != 5 {
			t.Fatalf("denials by rule %v", total)
		}
		for _, bad := range []string{"by=colour", "bucket=1ms", "bucket=1s&from=2000-01-01T00:00:00Z"} {
			if resp, _ := get(t, ts, "/history/chart?"+bad); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("chart?%s: %d, want 400", bad, resp.StatusCode)
			}
		}
	})
	t.Run("export csv", func(t *testing.T) {
		resp, b := get(t, ts, "/history/export?format=csv&action=deny")
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("export: %d %v", resp.StatusCode, resp.Header)
		}
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 16 || rows[0][0] != "time" || rows[0][4] != "action" {
			t.Fatalf("%d rows, header %v", len(rows), rows[0])
		}
		for _, r := range rows[1:] {
			if r[4] != "deny" || !strings.HasPrefix(r[10], "reason, \"") || r[15] != "0.5" || r[20] != "true" {
				t.Fatalf("row %q", r)
			}
		}
	})
	t.Run("export ndjson, every page", func(t *testing.T) {
		resp, b := get(t, ts, "/history/export?format=ndjson")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("export: %d %v", resp.StatusCode, resp.Header)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		n := 0
		for sc.Scan() {
			var e audit.HistoryEvent
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.ID == "" {
				t.Fatalf("line %d: %v %s", n, err, sc.Bytes())
			}
			n++
		}
		if n != 32 {
			t.Fatalf("%d lines, want 32", n)
		}
		if resp, _ := get(t, ts, "/history/export?format=xml"); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("format xml: %d", resp.StatusCode)
		}
	})
	t.Run("needs a credential", func(t *testing.T) {
		resp, err := http.Get(ts.URL + admin.DefaultPrefix + "/history")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no token: %d, want 401", resp.StatusCode)
		}
	})
}

func setupAudit(ctx context.Context, nc *nats.Conn, signer audit.Signer) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if err := audit.EnsureStream(ctx, js, audit.Options{}); err != nil {
		return err
	}
	return audit.RegisterSigner(ctx, js, "", signer, "gw-1")
}

// TestHistoryExportPages: an export longer than a page (1000) streams every page once, newest
// first, from the audit stream.
func TestHistoryExportPages(t *testing.T) {
	const n = 2500
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := testenv.StartNATS(t)
	nc, err := nats.Connect(s.ClientURL(), audit.ConnOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	p, err := audit.New(ctx, audit.Options{Conn: nc, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	for i := range n {
		p.Record(ctx, audit.Event{Kind: audit.KindDecision, Action: "allow", Server: "s", Tool: fmt.Sprintf("t%d", i)})
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Unsigned events: listed with unverified=true.
	ts := historyServer(t, audit.NewStreamHistory(ctx, audit.StreamHistoryOptions{Conn: nc}))
	resp, b := get(t, ts, "/history/export?format=ndjson&unverified=true")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	seen := map[string]bool{}
	next := n - 1
	for sc.Scan() {
		var e audit.HistoryEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if seen[e.ID] || e.Tool != fmt.Sprintf("t%d", next) || e.VerifyProblem != audit.ProblemUnsigned {
			t.Fatalf("line %d: %s (%s), want t%d once", len(seen), e.Tool, e.VerifyProblem, next)
		}
		seen[e.ID] = true
		next--
	}
	if len(seen) != n {
		t.Fatalf("%d events exported, want %d", len(seen), n)
	}
	if resp, b := get(t, ts, "/history/export?format=csv"); resp.StatusCode != http.StatusOK || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("verified only: %d, %d lines; want the header alone", resp.StatusCode, strings.Count(string(b), "\n"))
	}
}
