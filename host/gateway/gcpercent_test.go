package gateway

import (
	"runtime/debug"
	"testing"
)

func TestTuneRuntime(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	t.Setenv("GOGC", "")
	if got := TuneRuntime(); got != DefaultGCPercent {
		t.Fatalf("TuneRuntime without GOGC = %d, want %d", got, DefaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Fatalf("collector target after TuneRuntime = %d, want %d", got, DefaultGCPercent)
	}

	// The runtime read GOGC when the process started; an operator's value is whatever is in
	// force then, and TuneRuntime leaves it.
	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200)
	if got := TuneRuntime(); got != 200 {
		t.Fatalf("TuneRuntime with GOGC=200 = %d, want 200 left in force", got)
	}
	if got := debug.SetGCPercent(100); got != 200 {
		t.Fatalf("collector target with GOGC set = %d, want 200", got)
	}
}
