package proxy_test

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/proxy"
)

// BenchmarkHookViaGateway is the warm path of `palisade hook --gateway URL`: one HTTP round trip
// to a running engine (the process start of the hook itself is not included).
func BenchmarkHookViaGateway(b *testing.B) {
	e := agentsEngine(b, &sink{})
	srv := httptest.NewServer(proxy.HookHandler(e))
	defer srv.Close()
	raw, err := os.ReadFile("testdata/agents/hook/edit_benign.json")
	if err != nil {
		b.Fatal(err)
	}
	c := proxy.HookClient{URL: srv.URL}
	var ds []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		out, err := c.Decide(context.Background(), raw)
		ds = append(ds, time.Since(start))
		if err != nil || out.HookSpecificOutput.PermissionDecision != "allow" {
			b.Fatalf("%+v %v", out, err)
		}
	}
	testenv.Latencies(ds).Report(b, "", "-us", time.Microsecond)
}
