package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkHookProcess measures what Claude Code waits for per tool call: a new `palisade hook`
// process deciding in process, compilation cache warm, audit to a reachable NATS.
func BenchmarkHookProcess(b *testing.B) {
	bin := palisadeBinary(b)
	bundle := agentsBundle(b, "")
	natsURL, creds := startNATS(b)
	data := b.TempDir()
	in, err := os.ReadFile(filepath.Join("../../host/proxy/testdata/agents/hook/edit_benign.json"))
	if err != nil {
		b.Fatal(err)
	}
	once := func() time.Duration {
		cmd := exec.Command(bin, "hook", "--bundle", bundle, "--data-dir", data, "--nats-url", natsURL, "--nats-creds", creds, "--log-level", "error")
		cmd.Stdin = bytes.NewReader(in)
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || !bytes.Contains(out, []byte(`"allow"`)) {
			b.Fatalf("hook: %v %s", err, out)
		}
		return d
	}
	once() // fills the compilation cache
	var ds []time.Duration
	for b.Loop() {
		ds = append(ds, once())
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
}
