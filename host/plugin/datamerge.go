package plugin

import "errors"

// dataMergeGap is the largest run of zeros mergeData writes out to join two data segments.
//
// A Go guest's data section is tens of thousands of small segments (63,204 in the example
// bundle's injection stage, 240,000 across its five plugins), split wherever the linker saw a
// run of zeros; almost every gap is under 64 bytes. wazero keeps each segment as its own
// decoded struct and copy for the life of the compiled module, and gives every instance a
// slice header per segment: together about 30 MB of live Go heap for the example bundle,
// which the garbage collector's target doubles, for bytes the guest's memory already holds.
// Joined across gaps of up to 64 zero bytes, the same module has a few dozen segments.
const dataMergeGap = 64

// dataMergeSpan bounds the memory range mergeData lays out (the bytes between the lowest and the
// highest segment byte); a module whose segments span more is left as it is.
const dataMergeSpan = 64 << 20

// mergeData rewrites a data section (id 11) of active segments at constant offsets of memory 0
// as fewer, larger ones. It lays the segments out in order, as instantiation would write them
// (a later segment overwriting an earlier one), and emits each run of written bytes with their
// final values, joining two runs when at most dataMergeGap bytes that no segment writes lie
// between them: those bytes are written as zeros, which linear memory holds before the data is
// applied. So instantiation leaves the same bytes in memory, and fails exactly when it did
// before (when some segment ends past the memory; empty segments are kept as they are, for
// their bounds check).
//
// It returns the section unchanged when any segment is passive, names another memory or has
// an offset other than an i32.const (a passive segment is addressed by its index, in
// memory.init and data.drop, which merging would change), or when the segments span more than
// dataMergeSpan. The caller leaves a module with a data count section alone for the same
// reason as passive segments.
func mergeData(body []byte) ([]byte, error) {
	type seg struct {
		off  uint64
		init []byte
	}
	r := reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var segs, empty []seg
	lo, hi := uint64(1<<63), uint64(0)
	for range n {
		flag, err := r.u32()
		if err != nil {
			return nil, err
		}
		if flag != 0 {
			return body, nil // passive, or an explicit memory index: leave the section as it is
		}
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		if op != 0x41 { // i32.const
			return body, nil
		}
		off, err := r.slebValue(32)
		if err != nil {
			return nil, err
		}
		if end, err := r.byte(); err != nil {
			return nil, err
		} else if end != 0x0b {
			return body, nil // a longer constant expression
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		init, err := r.take(int(size))
		if err != nil {
			return nil, err
		}
		s := seg{uint64(uint32(int32(off))), init}
		if len(init) == 0 {
			empty = append(empty, s)
			continue
		}
		lo, hi = min(lo, s.off), max(hi, s.off+uint64(len(init)))
		segs = append(segs, s)
	}
	if r.len() != 0 {
		return nil, errors.New("wasm: bytes after the last data segment")
	}
	if len(segs) == 0 || hi-lo > dataMergeSpan {
		return body, nil
	}
	image := make([]byte, hi-lo)
	written := make([]bool, hi-lo)
	for _, s := range segs {
		copy(image[s.off-lo:], s.init)
		for i := range s.init {
			written[s.off-lo+uint64(i)] = true
		}
	}
	out := appendULEB(nil, 0) // the count, patched below
	count := 0
	emit := func(off uint64, b []byte) {
		out = append(out, 0x00, 0x41)
		out = appendSLEB(out, int64(int32(uint32(off))))
		out = append(out, 0x0b)
		out = appendULEB(out, uint64(len(b)))
		out = append(out, b...)
		count++
	}
	for i := 0; i < len(image); {
		// A run starts at a written byte and ends at the last written byte before a gap of more
		// than dataMergeGap unwritten ones (or the end).
		j, last := i, i
		for j < len(image) {
			if written[j] {
				last = j
			} else if j-last > dataMergeGap {
				break
			}
			j++
		}
		emit(lo+uint64(i), image[i:last+1])
		for i = last + 1; i < len(image) && !written[i]; i++ {
		}
	}
	for _, s := range empty {
		emit(s.off, nil)
	}
	return append(appendULEB(nil, uint64(count)), out[1:]...), nil
}
