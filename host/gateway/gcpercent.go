package gateway

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the Go collector's target that a long-running guard process (serve,
// mcp, proxy, hookd) sets when its environment has no GOGC: the heap may grow to three times
// what is live at the last collection, while the Go runtime's memory stays under
// DefaultMemoryLimit. Measured on the full example chain at 16 connections (loadgen, 5 s
// cells, alternated; docs/DESIGN.md "The collector: GOGC 200 under a soft limit"): CPU a
// call 267–279 µs at GOGC 50 against 230–249 µs at 200, and 455–506 µs against 410–443 µs at
// one connection.
const DefaultGCPercent = 200

// DefaultMemoryLimit is the soft limit on the Go runtime's memory (runtime/debug
// SetMemoryLimit) set when the environment has no GOMEMLIMIT. Past it the collector runs as
// often as it must to stay there, whatever GOGC says, so a gateway whose live heap grows (the
// audit stream's duplicate window fills with the call rate) keeps its resident size: in a
// 400,000-call run at c=16, GOGC 200 alone grew to 273 MB resident, and with this limit it
// stayed at 200–203 MB from the 80,000th call on. The limit is soft: a live heap above it is
// not refused, the collector is only capped at half the CPU.
const DefaultMemoryLimit = 128 << 20

// TuneRuntime sets the collector's target to DefaultGCPercent unless GOGC is set in the
// environment, and the soft memory limit to DefaultMemoryLimit unless GOMEMLIMIT is set (an
// operator's choice wins, GOGC=off included). It returns the target and the limit in force.
func TuneRuntime() (gcPercent int, memoryLimit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
	gcPercent = debug.SetGCPercent(100)
	debug.SetGCPercent(gcPercent)
	return gcPercent, debug.SetMemoryLimit(-1)
}
