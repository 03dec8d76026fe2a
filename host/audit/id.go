package audit

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// crockford is the ULID alphabet: sorts the same as the values it encodes.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var idGen struct {
	mu   sync.Mutex
	ms   uint64
	hi   uint16 // top 16 bits of the 80-bit random part
	lo   uint64 // low 64 bits
	rand [10]byte
}

// NewID returns a 26-character ULID-style id: 48 bits of Unix milliseconds
// then 80 random bits, in Crockford base32. Ids from one process sort in
// creation order: within one millisecond the random part is incremented
// rather than redrawn (as the ULID spec's monotonic mode). Safe for
// concurrent use.
func NewID() string {
	idGen.mu.Lock()
	ms := uint64(time.Now().UnixMilli())
	if ms <= idGen.ms {
		// Same millisecond, or the clock went back: keep order by counting up.
		ms = idGen.ms
		idGen.lo++
		if idGen.lo == 0 {
			idGen.hi++
			if idGen.hi == 0 {
				ms++ // 2^80 ids in one millisecond: borrow the next one
			}
		}
	} else {
		// crypto/rand.Read never fails on supported platforms (Go 1.24+).
		_, _ = rand.Read(idGen.rand[:])
		// Top bit clear: room to count up within the millisecond.
		idGen.hi = binary.BigEndian.Uint16(idGen.rand[0:2]) & 0x7fff
		idGen.lo = binary.BigEndian.Uint64(idGen.rand[2:10])
	}
	idGen.ms = ms
	hi, lo := idGen.hi, idGen.lo
	idGen.mu.Unlock()

	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], ms<<16|uint64(hi))
	binary.BigEndian.PutUint64(b[8:16], lo)
	return encodeULID(b)
}

// encodeULID writes 128 bits as 26 base32 digits (the first holds 3 bits).
func encodeULID(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
