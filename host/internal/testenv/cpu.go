package testenv

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user + system) this process has used so far, for benchmarks that
// report CPU per operation rather than wall time (less disturbed by other jobs on the machine).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
