package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const shadowToken = "shadow-test-token"

// startShadowGateway starts a gateway in front of the Go SDK upstream at up (tool echo) serving
// active, trusting pub, with extra lines added to the bundles: section.
func startShadowGateway(t testing.TB, natsURL, up, active, pub, extra string) *gateway.Gateway {
	t.Helper()
	ext, err := gateway.ParseFile([]byte("bundles:\n  trusted_keys: ['" + pub + "']\n  watch: false\n" + extra))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Bundle: active,
		Upstreams: []config.Upstream{{Name: "files", URL: up}},
		NATS:      config.NATS{URL: natsURL},
		Admin:     config.Admin{Token: shadowToken},
		Plugins:   config.Plugins{CacheDir: filepath.Join(os.TempDir(), "palisade-test-wazero-cache")},
	}
	ctx := context.Background()
	g, err := gateway.New(ctx, gateway.Options{Config: cfg, Sections: ext.Sections})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

// shadowAdmin calls g's admin API with a raw body and decodes a JSON answer into out.
func shadowAdmin(t *testing.T, g *gateway.Gateway, method, path string, body []byte, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+g.Addr()+"/admin/api"+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+shadowToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

func packed(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestShadowBundle: alpha (allows echo) is active, beta (denies echo, rule beta-2) is the shadow
// from config (shadow_max_delay 1m: a slow CI machine delays the shadow, it must not drop). 1,000 echo calls from 4 clients are all answered by the upstream; the shadow
// judged every one (no drop at this load), palisade_shadow_disagreements_total counts each as
// allow→deny on beta-2/s2, the admin API lists them, and every audit event carries both
// verdicts: alpha's allow and the shadow's deny.
func TestShadowBundle(t *testing.T) {
	const calls = 1000
	pub, priv, _ := bundle.GenerateKey()
	privText := bundle.EncodePrivateKey(priv)
	alpha := swapBundle(t, privText, "alpha", "1", "allow", "allow")
	beta := swapBundle(t, privText, "beta", "2", "allow", "deny")
	ns := testenv.StartNATS(t)
	g := startShadowGateway(t, ns.ClientURL(), testenv.StartGoServer(t, false), alpha, bundle.EncodePublicKey(pub), "  shadow: '"+beta+"'\n  shadow_max_delay: 1m\n")
	if e, ok := gateway.BundleManager(g).Shadow(); !ok || e.Name != "beta" || e.KeyID != bundle.KeyID(pub) {
		t.Fatalf("shadow from config: %+v %v", e, ok)
	}

	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for w := range 4 {
		cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
		wg.Go(func() {
			for i := range calls / 4 {
				msg := fmt.Sprintf("w%d-%d", w, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
				if err != nil || res.IsError || text(res) != "Echo: "+msg {
					errs <- fmt.Errorf("call %s: %v %+v", msg, err, res)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	sh := gateway.Shadow(g)
	testenv.Eventually(t, 60*time.Second, "the shadow judged every call", func() bool {
		st := sh.Stats()
		return st.Judged+st.Dropped >= calls
	})
	st := sh.Stats()
	if st.Dropped != 0 {
		t.Errorf("%d shadow judgements dropped at this load, want 0", st.Dropped)
	}
	if st.Disagreements != calls-st.Dropped {
		t.Errorf("disagreements %d, want %d (calls minus drops)", st.Disagreements, calls-st.Dropped)
	}

	// Prometheus.
	resp, err := http.Get("http://" + g.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf(`palisade_shadow_disagreements_total{active_action="allow",rule="beta-2",shadow_action="deny",stage="s2"} %d`, calls)
	if !strings.Contains(string(body), want) || !strings.Contains(string(body), "palisade_shadow_dropped_total 0") {
		t.Errorf("metrics lack %q and palisade_shadow_dropped_total 0:\n%s", want, grepLines(string(body), "palisade_shadow"))
	}
	// The shadow's stage calls are measured apart from the active chain's.
	if !strings.Contains(string(body), `palisade_stage_duration_seconds_count{action="deny",phase="request",stage="shadow:s2"} `) {
		t.Errorf("no stage histogram for the shadow's s2:\n%s", grepLines(string(body), "palisade_stage_duration_seconds_count"))
	}

	// Admin API.
	var dis admin.ShadowDisagreements
	if code := shadowAdmin(t, g, http.MethodGet, "/shadow/disagreements?limit=5", nil, &dis); code != http.StatusOK || len(dis.Disagreements) != 5 || dis.Stats.Disagreements != calls {
		t.Fatalf("GET /shadow/disagreements: %d %+v", code, dis)
	}
	if d := dis.Disagreements[0]; d.ActiveAction != "allow" || d.ShadowAction != "deny" || d.Rule != "beta-2" || d.Stage != "s2" || d.Tool != "echo" || d.Shadow.Name != "beta" || d.Active.Name != "alpha" || d.AuditID == "" {
		t.Fatalf("disagreement %+v", d)
	}

	// Audit: one event per call with both verdicts.
	evs := echoEvents(t, ns.ClientURL(), calls)
	if len(evs) != calls {
		t.Fatalf("%d echo events for %d calls", len(evs), calls)
	}
	for _, ev := range evs {
		s := ev.Shadow
		if ev.Action != "allow" || ev.Bundle == nil || ev.Bundle.Name != "alpha" || s == nil || s.Bundle == nil || s.Bundle.Name != "beta" ||
			s.Action != "deny" || s.Rule != "beta-2" || s.Stage != "s2" || !s.Disagrees || s.Dropped || s.Error != "" {
			b, _ := json.Marshal(ev)
			t.Fatalf("event without both verdicts: %s", b)
		}
	}
	t.Logf("%d calls allowed by alpha; shadow beta judged %d, disagreed %d, dropped %d", calls, st.Judged, st.Disagreements, st.Dropped)
}

// TestShadowPromote: a shadow bundle loaded through the admin API is promoted (POST
// /bundles/shadow/promote): the former shadow decides (echo denied by beta-2), the shadow slot is
// empty, and the audit has a bundle.activated event for beta from promote-shadow. A shadow
// signed by an untrusted key, or tampered after signing, is refused with a clear error and
// leaves the loaded shadow in place.
func TestShadowPromote(t *testing.T) {
	pub, priv, _ := bundle.GenerateKey()
	privText := bundle.EncodePrivateKey(priv)
	alpha := swapBundle(t, privText, "alpha", "1", "allow", "allow")
	beta := swapBundle(t, privText, "beta", "2", "allow", "deny")
	_, otherPriv, _ := bundle.GenerateKey()
	forged := swapBundle(t, bundle.EncodePrivateKey(otherPriv), "forged", "3", "allow", "allow")
	tampered := swapBundle(t, privText, "tampered", "4", "allow", "allow")
	if err := os.WriteFile(filepath.Join(tampered, "bundle.yaml"), append(mustRead(t, filepath.Join(tampered, "bundle.yaml")), "# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := testenv.StartNATS(t)
	g := startShadowGateway(t, ns.ClientURL(), testenv.StartGoServer(t, false), alpha, bundle.EncodePublicKey(pub), "")
	m := gateway.BundleManager(g)

	var res admin.BundleResult
	if code := shadowAdmin(t, g, http.MethodPut, "/bundles/shadow", packed(t, beta), &res); code != http.StatusOK || res.Bundle.Name != "beta" || !res.Changed {
		t.Fatalf("PUT /bundles/shadow: %d %+v", code, res)
	}
	for _, tc := range []struct {
		name, dir, reason string
	}{{"untrusted key", forged, "untrusted_key"}, {"tampered", tampered, "tampered"}} {
		t.Run(tc.name, func(t *testing.T) {
			var be admin.BundleError
			if code := shadowAdmin(t, g, http.MethodPut, "/bundles/shadow", packed(t, tc.dir), &be); code != http.StatusUnprocessableEntity || be.Reason != tc.reason || be.Error == "" {
				t.Fatalf("PUT a %s shadow: %d %+v, want 422 %s", tc.name, code, be, tc.reason)
			}
			if _, _, err := m.LoadShadow(context.Background(), tc.dir, "test"); bundle.RejectReason(err) != tc.reason {
				t.Fatalf("LoadShadow(%s) = %v, want %s", tc.name, err, tc.reason)
			}
			if e, ok := m.Shadow(); !ok || e.Name != "beta" {
				t.Fatalf("after a refused shadow the shadow is %+v %v, want beta", e, ok)
			}
		})
	}

	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	ctx := context.Background()
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "before"}}); err != nil || r.IsError {
		t.Fatalf("echo before promote: %v %+v", err, r)
	}
	if code := shadowAdmin(t, g, http.MethodPost, "/bundles/shadow/promote", nil, &res); code != http.StatusOK || res.Bundle.Name != "beta" || !strings.HasPrefix(res.Bundle.Source, "promote-shadow") {
		t.Fatalf("POST /bundles/shadow/promote: %d %+v", code, res)
	}
	if cur, ok := m.Current(); !ok || cur.Name != "beta" {
		t.Fatalf("active after promote %+v", cur)
	}
	if e, ok := m.Shadow(); ok {
		t.Fatalf("shadow after promote %+v, want none", e)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "after"}})
	if d := denied(t, err); d.Rule != "beta-2" {
		t.Fatalf("echo after promote denied by %+v, want beta-2", d)
	}
	if code := shadowAdmin(t, g, http.MethodPost, "/bundles/shadow/promote", nil, nil); code != http.StatusNotFound {
		t.Fatalf("promote with no shadow: %d, want 404", code)
	}
	var activated bool
	testenv.Eventually(t, 20*time.Second, "bundle.activated for the promoted shadow", func() bool {
		for _, ev := range g.Recent().Recent(0) {
			if ev.Kind == audit.KindBundleActivated && ev.Bundle != nil && ev.Bundle.Name == "beta" && strings.Contains(string(ev.Detail), "promote-shadow") {
				activated = true
			}
		}
		return activated
	})
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkShadowOverhead measures the active path (one tools/call through the gateway to the
// Go SDK upstream, sequential, the answer read) while the shadow bundle is loaded and while it
// is not, switching every 200 calls so both see the same machine state; after each switch the
// heap is collected and 20 calls go untimed, so loading or closing the shadow's chain is not
// counted. It reports the p50 and p99 of each (ns) and their mean per call (ns/op-with,
// ns/op-without). Two shadows: "judging" has the active bundle's stages and cost (its Wasm runs
// on the same cores), "unmatched" matches no call (the queue, the copy and the record alone).
// No timing is asserted.
func BenchmarkShadowOverhead(b *testing.B) {
	b.Run("judging", func(b *testing.B) { benchShadow(b, false) })
	b.Run("unmatched", func(b *testing.B) { benchShadow(b, true) })
}

func benchShadow(b *testing.B, unmatched bool) {
	pub, priv, _ := bundle.GenerateKey()
	privText := bundle.EncodePrivateKey(priv)
	alpha := swapBundle(b, privText, "alpha", "1", "allow", "allow")
	beta := swapBundle(b, privText, "beta", "2", "allow", "deny")
	if unmatched {
		y := filepath.Join(beta, "bundle.yaml")
		man, err := os.ReadFile(y)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(y, []byte(strings.ReplaceAll(string(man), "    pool: 4\n", "    pool: 4\n    match: {tools: [no-such-tool]}\n")), 0o644); err != nil {
			b.Fatal(err)
		}
		k, _ := bundle.ParsePrivateKey(privText)
		if _, err := bundle.Sign(beta, k); err != nil {
			b.Fatal(err)
		}
	}
	ns := testenv.StartNATS(b)
	g := startShadowGateway(b, ns.ClientURL(), testenv.StartGoServer(b, true), alpha, bundle.EncodePublicKey(pub), "")
	m := gateway.BundleManager(g)
	ctx := context.Background()
	url := "http://" + g.Addr() + "/mcp"
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	call := func(i int) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"}}}`, i)
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(out, []byte("Echo: m")) {
			b.Fatalf("call %d answered %s", i, out)
		}
	}
	for i := range 50 { // warm both chains' pools and the connection
		call(i)
	}
	var with, without []time.Duration
	shadow := false
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%200 == 0 {
			b.StopTimer()
			var err error
			if shadow {
				_, err = m.ClearShadow(ctx)
			} else {
				_, _, err = m.LoadShadow(ctx, beta, "bench")
			}
			if err != nil {
				b.Fatal(err)
			}
			shadow = !shadow
			runtime.GC()
			for w := range 20 {
				call(-w)
			}
			b.StartTimer()
		}
		start := time.Now()
		call(i)
		d := time.Since(start)
		if shadow {
			with = append(with, d)
		} else {
			without = append(without, d)
		}
		i++
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) {
		if len(ds) == 0 {
			return
		}
		slices.Sort(ds)
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns-"+name)
		b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds()), "p99-ns-"+name)
		b.ReportMetric(float64(sum.Nanoseconds())/float64(len(ds)), "ns/op-"+name)
	}
	report("with", with)
	report("without", without)
	if st := gateway.Shadow(g).Stats(); st.Dropped > 0 {
		b.Logf("shadow dropped %d of %d judgements", st.Dropped, st.Judged+st.Dropped)
	}
}

// TestShadowConfigRefused: a configured shadow signed by an untrusted key does not stop the
// gateway (the active bundle decides either way): it starts without a shadow, records
// bundle.rejected with detail.slot shadow, and calls are recorded without a shadow verdict.
func TestShadowConfigRefused(t *testing.T) {
	pub, priv, _ := bundle.GenerateKey()
	alpha := swapBundle(t, bundle.EncodePrivateKey(priv), "alpha", "1", "allow", "allow")
	_, otherPriv, _ := bundle.GenerateKey()
	forged := swapBundle(t, bundle.EncodePrivateKey(otherPriv), "forged", "2", "allow", "deny")
	ns := testenv.StartNATS(t)
	g := startShadowGateway(t, ns.ClientURL(), testenv.StartGoServer(t, false), alpha, bundle.EncodePublicKey(pub), "  shadow: '"+forged+"'\n")
	if e, ok := gateway.BundleManager(g).Shadow(); ok {
		t.Fatalf("an untrusted shadow was loaded: %+v", e)
	}
	var rejected bool
	for _, ev := range g.Recent().Recent(0) {
		d := string(ev.Detail)
		rejected = rejected || ev.Kind == audit.KindBundleRejected && strings.Contains(d, `"slot":"shadow"`) && strings.Contains(d, "untrusted_key")
	}
	if !rejected {
		t.Fatal("no bundle.rejected event for the shadow slot")
	}
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "m"}}); err != nil || r.IsError {
		t.Fatalf("echo: %v %+v", err, r)
	}
	evs := echoEvents(t, ns.ClientURL(), 1)
	if len(evs) != 1 || evs[0].Shadow != nil || evs[0].Action != "allow" {
		t.Fatalf("events %+v, want one allow without a shadow verdict", evs)
	}
}
