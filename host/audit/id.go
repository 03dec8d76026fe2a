package audit

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

var idGen = struct {
	mu      sync.Mutex
	last    uint64 // milliseconds of the last id: the clock going back does not reorder ids
	entropy *ulid.MonotonicEntropy
}{entropy: ulid.Monotonic(rand.Reader, 0)}

// NewID returns a ULID (github.com/oklog/ulid/v2): 48 bits of Unix milliseconds then 80 random
// bits, 26 characters of Crockford base32. Ids from one process sort in creation order: within
// one millisecond the random part counts up (the spec's monotonic mode), and a clock that goes
// back keeps the last millisecond. Safe for concurrent use.
func NewID() string {
	idGen.mu.Lock()
	defer idGen.mu.Unlock()
	ms := max(ulid.Timestamp(time.Now()), idGen.last)
	for {
		id, err := ulid.New(ms, idGen.entropy)
		if err == nil {
			idGen.last = ms
			return id.String()
		}
		ms++ // the random part overflowed within this millisecond: borrow the next one
	}
}
