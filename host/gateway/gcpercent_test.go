package gateway

import (
	"math"
	"runtime/debug"
	"testing"
)

// noMemoryLimit is the runtime's value for "no limit" (GOMEMLIMIT unset, before TuneRuntime).
const noMemoryLimit = math.MaxInt64

func TestTuneRuntime(t *testing.T) {
	oldGC := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(noMemoryLimit)
	t.Cleanup(func() {
		debug.SetGCPercent(oldGC)
		debug.SetMemoryLimit(oldLimit)
	})

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc, limit := TuneRuntime()
	if gc != DefaultGCPercent || limit != DefaultMemoryLimit {
		t.Fatalf("TuneRuntime with neither set = %d, %d; want %d, %d", gc, limit, DefaultGCPercent, DefaultMemoryLimit)
	}
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Fatalf("collector target after TuneRuntime = %d, want %d", got, DefaultGCPercent)
	}
	if got := debug.SetMemoryLimit(noMemoryLimit); got != DefaultMemoryLimit {
		t.Fatalf("memory limit after TuneRuntime = %d, want %d", got, int64(DefaultMemoryLimit))
	}

	// The runtime read GOGC and GOMEMLIMIT when the process started; an operator's value is
	// whatever is in force then, and TuneRuntime leaves each alone.
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	gc, limit = TuneRuntime()
	if gc != 50 || limit != DefaultMemoryLimit {
		t.Fatalf("TuneRuntime with GOGC=50 = %d, %d; want 50 left in force and the default limit", gc, limit)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	gc, limit = TuneRuntime()
	if gc != DefaultGCPercent || limit != 1<<30 {
		t.Fatalf("TuneRuntime with GOMEMLIMIT=1GiB = %d, %d; want %d and 1 GiB left in force", gc, limit, DefaultGCPercent)
	}

	t.Setenv("GOGC", "off")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(noMemoryLimit)
	if gc, limit = TuneRuntime(); gc != -1 || limit != DefaultMemoryLimit {
		t.Fatalf("TuneRuntime with GOGC=off = %d, %d; want off (-1) and the default limit", gc, limit)
	}
}
