package plugin

import (
	"bytes"
	"errors"
	"fmt"
)

// A minimal reader of the Wasm binary format: enough to list exports (to detect the calling
// convention) and to instrument code (instrument.go). wazero validates whatever it produces.

var errShort = errors.New("wasm: unexpected end")

type section struct {
	id   byte
	body []byte
}

// sections splits a module into its sections, after checking the header.
func sections(wasm []byte) ([]section, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, errors.New("wasm: not a module")
	}
	var out []section
	r := reader{b: wasm[8:]}
	for r.len() > 0 {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		body, err := r.take(int(n))
		if err != nil {
			return nil, err
		}
		out = append(out, section{id, body})
	}
	return out, nil
}

// exportNames returns the module's export names and kinds (0 func, 1 table, 2 memory, 3 global).
func exportNames(wasm []byte) (map[string]byte, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	out := map[string]byte{}
	for _, s := range secs {
		if s.id != 7 {
			continue
		}
		r := reader{b: s.body}
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		for range n {
			name, err := r.name()
			if err != nil {
				return nil, err
			}
			kind, err := r.byte()
			if err != nil {
				return nil, err
			}
			if _, err := r.u32(); err != nil {
				return nil, err
			}
			out[name] = kind
		}
	}
	return out, nil
}

type reader struct {
	b   []byte
	off int
}

func (r *reader) len() int { return len(r.b) - r.off }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || r.off+n > len(r.b) {
		return nil, errShort
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b, nil
}

// uleb reads an unsigned LEB128 of at most maxBits bits.
func (r *reader) uleb(maxBits int) (uint64, error) {
	var v uint64
	for shift := 0; ; shift += 7 {
		if shift >= maxBits+7 {
			return 0, errors.New("wasm: LEB128 too long")
		}
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

// sleb skips a signed LEB128 of at most maxBits bits.
func (r *reader) sleb(maxBits int) error {
	_, err := r.slebValue(maxBits)
	return err
}

// slebValue reads a signed LEB128 of at most maxBits bits: uleb's bits, sign-extended from the
// last byte's sign bit.
func (r *reader) slebValue(maxBits int) (int64, error) {
	start := r.off
	u, err := r.uleb(maxBits)
	if err != nil {
		return 0, err
	}
	v := int64(u)
	if shift := 7 * (r.off - start); shift < 64 && r.b[r.off-1]&0x40 != 0 {
		v |= -1 << shift
	}
	return v, nil
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.take(int(n))
	return string(b), err
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = appendULEB(b, uint64(len(body)))
	return append(b, body...)
}

func sectionErr(id byte, err error) error { return fmt.Errorf("wasm section %d: %w", id, err) }
