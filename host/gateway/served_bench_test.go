package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/internal/testenv"
)

// BenchmarkServedPath is one tools/call through the gateway as `palisade serve` builds it (the
// example bundle, its first-party stages native, audit to an embedded JetStream), called in
// process: the request is handed to the served handler (guard, routes, the MCP handler) without
// a listener or a client, the gateway forwards it over loopback to an in-process Go SDK echo
// upstream (httptest), judges the answer and writes it into a recorder. It measures the
// gateway's own work a call, parse → judge request → forward → judge answer → write, at the
// allocation level: ns/op, B/op and allocs/op, and cpu-µs/op (the process's CPU, the audit
// publisher's and NATS's goroutines included).
//
//   - direct: the same call from an http.Client to the upstream: what the gateway's forward
//     costs at least (its client side and the upstream), to subtract.
//   - rules: the example bundle cut to its rules stage (as loadgen's rules-only gateway).
//   - full: the example bundle's whole chain.
//
// Profile it by part with -cpuprofile (docs/DESIGN.md "What a call costs", "An in-process
// benchmark of the served path"):
//
//	go test -run '^$' -bench ServedPath/full -benchtime 5000x -cpuprofile cpu.out ./host/gateway/
//
// firstparty.Digest is the digest of the module the benchmark built when the test binary was
// linked without one, so the stages run natively either way, as they do when served.
func BenchmarkServedPath(b *testing.B) {
	up := testenv.StartGoServer(b, true)
	b.Run("direct", func(b *testing.B) {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		defer c.CloseIdleConnections()
		runServed(b, func(req *http.Request) (int, []byte) {
			req.RequestURI = ""
			u, _ := req.URL.Parse(up)
			req.URL, req.Host = u, u.Host
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, body
		})
	})
	src := testenv.ExampleBundle(b)
	nativeDigest(b, src)
	for _, v := range []struct {
		name   string
		stages []string
	}{{"rules", []string{"rules"}}, {"full", nil}} {
		b.Run(v.name, func(b *testing.B) {
			dir := src
			if v.stages != nil {
				dir = keepStages(b, src, v.stages)
			}
			ns := testenv.StartNATS(b)
			g := startGatewayTB(b, ns.ClientURL(), dir, config.Upstream{Name: "go", URL: up})
			h := g.Handler()
			runServed(b, func(req *http.Request) (int, []byte) {
				rec := connRecorder{httptest.NewRecorder()}
				h.ServeHTTP(rec, req)
				return rec.Code, rec.Body.Bytes()
			})
		})
	}
}

// connRecorder is a recorder with the deadlines a served connection's writer has
// (http.ResponseController): without them each SetWriteDeadline is an error built with
// fmt.Errorf, a cost the served path does not have.
type connRecorder struct{ *httptest.ResponseRecorder }

func (connRecorder) SetReadDeadline(time.Time) error  { return nil }
func (connRecorder) SetWriteDeadline(time.Time) error { return nil }

// runServed sends b.N tools/call echo requests through do and checks each was answered with
// the tool's result.
func runServed(b *testing.B, do func(*http.Request) (int, []byte)) {
	call := func(i int) {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"load ` + strconv.Itoa(i) + `"}}}`
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader([]byte(body)))
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		code, out := do(req)
		if code != http.StatusOK || !bytes.Contains(out, []byte(`"result"`)) || !bytes.Contains(out, []byte("load "+strconv.Itoa(i))) {
			b.Fatalf("call %d: %d %.300s", i, code, out)
		}
	}
	for i := range 200 { // warm: connections, pools, the stages' instances
		call(-1 - i)
	}
	b.ReportAllocs()
	cpu0, i := testenv.ProcessCPU(), 0
	for b.Loop() {
		call(i)
		i++
	}
	b.ReportMetric(float64((testenv.ProcessCPU()-cpu0).Nanoseconds())/1e3/float64(i), "cpu-µs/op")
}

// nativeDigest sets firstparty.Digest to the staged bundle's first-party module when the test
// binary was linked without one (plain `go test`), as the Makefile's build sets it for serve.
func nativeDigest(b *testing.B, dir string) {
	b.Helper()
	if firstparty.Digest != "" {
		return
	}
	_, sum := testenv.ReadPlugin(b, testenv.ExamplePlugins()["plugins/firstparty.wasm"])
	firstparty.Digest = sum
	b.Cleanup(func() { firstparty.Digest = "" })
	if _, err := os.Stat(filepath.Join(dir, "plugins", "firstparty.wasm")); err != nil {
		b.Fatal(err)
	}
}

// keepStages copies the bundle folder src with only the stages named in keep (fixtures left
// out, judge_with cut to them) and pins it: loadgen's -only.
func keepStages(b *testing.B, src string, keep []string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "bundle")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		b.Fatal(err)
	}
	os.Remove(filepath.Join(dst, "signature.json"))
	m, err := bundle.LoadManifest(dst)
	if err != nil {
		b.Fatal(err)
	}
	m.Stages = slices.DeleteFunc(m.Stages, func(s bundle.StageSpec) bool { return !slices.Contains(keep, s.Name) })
	if len(m.Stages) != len(keep) {
		b.Fatalf("bundle %s: stages %v not all found", src, keep)
	}
	m.Fixtures = ""
	m.Coverage.JudgeWith = slices.DeleteFunc(m.Coverage.JudgeWith, func(n string) bool { return !slices.Contains(keep, n) })
	raw, err := yaml.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, bundle.ManifestFile), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := bundle.Pin(dst); err != nil {
		b.Fatal(err)
	}
	return dst
}
