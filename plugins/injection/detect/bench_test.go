package detect

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchEnvelope builds a tools/call request envelope whose arguments hold about size bytes of
// ordinary prose and paths (no attack), the common case the hot path must keep cheap.
func benchEnvelope(size int) []byte {
	unit := "Please summarise the attached report for the weekly sync; see docs/reports/2024-q3.md and https://example.com/wiki/Q3 for context. "
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(unit)
	}
	text := b.String()[:size]
	env := map[string]any{
		"abi": "1.0", "id": "bench", "phase": "request", "method": "tools/call", "tool": "send_email",
		"arguments": map[string]any{"to": "team@example.com", "subject": "weekly sync", "body": text},
	}
	out, _ := json.Marshal(env)
	return out
}

func benchmarkEvaluate(b *testing.B, size int) {
	e := NewEvaluator(Config{})
	env := benchEnvelope(size)
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Evaluate(env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluate1KB(b *testing.B)  { benchmarkEvaluate(b, 1<<10) }
func BenchmarkEvaluate64KB(b *testing.B) { benchmarkEvaluate(b, 64<<10) }

// BenchmarkScanParts splits one 1 KiB scan into its parts (run it under wazero too:
// GOOS=wasip1 GOARCH=wasm go test -c, then wazero run the binary with -test.bench).
func BenchmarkScanParts(b *testing.B) {
	unit := "Please summarise the attached report for the weekly sync; see docs/reports/2024-q3.md and https://example.com/wiki/Q3 for context. "
	text := strings.Repeat(unit, 1<<10/len(unit)+1)[:1<<10]
	d := New(Options{})
	norm := Normalize(text).Text
	b.Run("normalize", func(b *testing.B) {
		for b.Loop() {
			Normalize(text)
		}
	})
	b.Run("prefilter", func(b *testing.B) {
		sc := scratchPool.Get().(*scratch)
		for b.Loop() {
			candidatesInto(norm, sc.buf, sc.count)
			clear(sc.buf)
			clear(sc.count)
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			d.Scan(text)
		}
	})
}
