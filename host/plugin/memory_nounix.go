//go:build !unix

package plugin

import (
	"context"
	"sync/atomic"
)

// withLinearMemory leaves linear memory to wazero (a []byte on the Go heap) where there is no
// mmap (see memory_unix.go).
func withLinearMemory(ctx context.Context, _ *atomic.Int64) context.Context { return ctx }

// LinearMemoryBytes is 0 here: linear memory is on the Go heap (see memory_unix.go).
func LinearMemoryBytes() int64 { return 0 }
