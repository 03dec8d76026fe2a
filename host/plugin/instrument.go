package plugin

import (
	"errors"
	"fmt"
)

// stopExport names the global instrument adds: a mutable i32 the host sets to 1 at a call's
// deadline (from a timer, while the guest runs), setting the second added global, $count, to
// stopNow with it. Every function entry and loop header of the instrumented module runs this
// check, which reads $count once after decrementing it:
//
//	global.get $count  i32.const 1  i32.sub  global.set $count
//	global.get $count  i32.const yieldEvery  i32.ge_u
//	if                                  ;; every yieldEvery checks, or at once at the deadline:
//	  i32.const 0  memory.grow  drop    ;; a no-op that exits to Go
//	  global.get $palisade_stop
//	  if  unreachable  end
//	  i32.const yieldEvery-1  global.set $count
//	end
//
// (A function whose body starts with a loop, as every Go function does, gets only the loop's.)
// The guest only ever stores values below yieldEvery; any other value, read as unsigned, sends
// it to the stop test. So whatever the host or a race leaves in $count is caught: the host's
// stopNow (or 0, which the next decrement wraps) at the next check, and a host write the
// guest's own store overwrites (the two run on different threads without atomics) at most
// yieldEvery checks later, when the countdown wraps by itself. (The check used to test for
// exactly 0 before decrementing, and a host zero landing between its two reads left −1,
// tested again only after 2^32 checks: a call-free loop ran seconds past its timeout.)
//
// The check stays in compiled code: unlike wazero's close-on-context-done, which exits to Go on
// every loop back-edge (wazero issue 2466), it exits only every yieldEvery checks. Those exits
// matter: compiled Wasm cannot be preempted, and a Go stop-the-world (every GC cycle) waits
// for every goroutine, so a guest that never left compiled code would stall the whole process
// and the timer that sets the flag with it. A guest cannot run unboundedly without passing a
// function entry or a loop header, so a set flag stops it within yieldEvery loop iterations or
// calls, and within one when the host's write is not lost (bulk memory instructions are bounded
// by the memory cap).
//
// A start section would run inside instantiation, before the host can arm its timer: instrument
// removes it and exports its function as startExport instead, which the host calls after
// instantiation under the init timeout.
const stopExport = "palisade_stop"

// countExport names the check counter global ($count), exported so the host can set it.
const countExport = "palisade_stop_count"

// startExport names the export instrument gives the module's start function (see stopExport).
const startExport = "palisade_start"

// yieldEvery is how many checks pass between two exits to Go (see stopExport): it bounds how
// long a guest can hold up a Go stop-the-world, and costs one exit (~0.1 µs) per that many.
const yieldEvery = 4096

// stopNow is what the host stores in $count at the deadline: any value of yieldEvery or more
// (read as unsigned) sends the next check to the stop test.
const stopNow = ^uint32(0)

// stopMode says how an instrumented module is stopped, which decides what its checks do when
// the countdown runs out.
type stopMode byte

const (
	// stopByGlobal is for modules run without close-on-context-done (direct convention): the
	// check exits to Go with memory.grow 0 and traps when the host has set palisade_stop. The
	// start section is moved to palisade_start, and the module must have a memory.
	stopByGlobal stopMode = iota
	// stopByWazero is for modules run with wazero's close-on-context-done (Extism convention),
	// which checks only at loop headers: the check runs an empty loop, and with it wazero's
	// check (an exit to Go that stops a module whose context is done). That stops loop-free
	// recursion too, which wazero alone never does. The start section stays, as the Extism
	// SDK instantiates it under a context that close-on-context-done watches.
	stopByWazero
)

// instrumentVersion changes whenever instrument's output for the same input does, so that
// Runtime's disk cache of instrumented modules never serves an older rewrite.
const instrumentVersion = 3

// sectionRank orders known sections as the binary format requires (custom sections, id 0,
// may appear anywhere and keep their place).
var sectionRank = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

// instrument returns a copy of wasm with a stop check at every function entry and loop header,
// the stop global exported as palisade_stop and the start function, if any, exported as
// palisade_start instead of run at instantiation, and its small data segments joined
// (mergeData). It fails on a module it cannot fully walk (an
// instruction it does not know), so no function goes unchecked. The result is deterministic,
// so wazero's compilation cache (keyed by the module's bytes) serves it on the next load.
func instrument(wasm []byte, mode stopMode) ([]byte, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	if names, err := exportNames(wasm); err != nil {
		return nil, err
	} else if _, ok := names[stopExport]; ok {
		return nil, fmt.Errorf("wasm: the module already exports %s", stopExport)
	} else if _, ok := names[countExport]; ok {
		return nil, fmt.Errorf("wasm: the module already exports %s", countExport)
	} else if _, ok := names[startExport]; ok {
		return nil, fmt.Errorf("wasm: the module already exports %s", startExport)
	}
	var importedGlobals, definedGlobals, memories uint32
	start, hasStart := uint32(0), false
	hasDataCount := false
	for _, s := range secs {
		switch s.id {
		case 12:
			hasDataCount = true // code may name data segments by index (see mergeData)
		case 8:
			r := reader{b: s.body}
			if start, err = r.u32(); err != nil || r.len() != 0 {
				return nil, sectionErr(s.id, errors.New("bad start section"))
			}
			hasStart = mode == stopByGlobal
		case 2:
			if importedGlobals, memories, err = countImports(s.body); err != nil {
				return nil, sectionErr(s.id, err)
			}
		case 5:
			r := reader{b: s.body}
			n, err := r.u32()
			if err != nil {
				return nil, sectionErr(s.id, err)
			}
			memories += n
		case 6:
			r := reader{b: s.body}
			if definedGlobals, err = r.u32(); err != nil {
				return nil, sectionErr(s.id, err)
			}
		}
	}
	if memories == 0 && mode == stopByGlobal {
		return nil, errors.New("wasm: the module has no memory")
	}
	stop := importedGlobals + definedGlobals
	count := stop + 1
	get := func(b []byte, g uint32) []byte { return appendULEB(append(b, 0x23), uint64(g)) }
	set := func(b []byte, g uint32) []byte { return appendULEB(append(b, 0x24), uint64(g)) }
	check := get(nil, count)
	check = append(check, 0x41, 0x01, 0x6b) // i32.const 1, i32.sub
	check = set(check, count)
	check = get(check, count)
	check = appendSLEB(append(check, 0x41), yieldEvery)
	check = append(check, 0x4f, 0x04, 0x40) // i32.ge_u, if
	if mode == stopByGlobal {
		check = append(check, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0, memory.grow 0, drop
		check = get(check, stop)
		check = append(check, 0x04, 0x40, 0x00, 0x0b) // if, unreachable, end
	} else {
		check = append(check, 0x03, 0x40, 0x0b) // loop, end: wazero's check
	}
	check = appendSLEB(append(check, 0x41), yieldEvery-1)
	check = set(check, count)
	check = append(check, 0x0b) // end

	global := func(old []byte) ([]byte, error) {
		n := uint32(0)
		r := reader{b: old}
		if old != nil {
			if n, err = r.u32(); err != nil {
				return nil, err
			}
		}
		b := appendULEB(nil, uint64(n)+2)
		b = append(b, old[r.off:]...)
		b = append(b, 0x7f, 0x01, 0x41, 0x00, 0x0b) // $stop: (global (mut i32) (i32.const 0))
		b = appendSLEB(append(b, 0x7f, 0x01, 0x41), yieldEvery-1)
		return append(b, 0x0b), nil // $count: (global (mut i32) (i32.const yieldEvery-1))
	}
	export := func(old []byte) ([]byte, error) {
		n := uint32(0)
		r := reader{b: old}
		if old != nil {
			if n, err = r.u32(); err != nil {
				return nil, err
			}
		}
		type entry struct {
			name string
			kind byte
			idx  uint32
		}
		add := []entry{{stopExport, 0x03, stop}, {countExport, 0x03, count}}
		if hasStart {
			add = append(add, entry{startExport, 0x00, start})
		}
		b := appendULEB(nil, uint64(n)+uint64(len(add)))
		b = append(b, old[r.off:]...)
		for _, e := range add {
			b = appendULEB(b, uint64(len(e.name)))
			b = append(b, e.name...)
			b = append(b, e.kind)
			b = appendULEB(b, uint64(e.idx))
		}
		return b, nil
	}

	out := append([]byte(nil), wasm[:8]...)
	var doneGlobal, doneExport bool
	emit := func(id byte, f func([]byte) ([]byte, error), old []byte) error {
		body, err := f(old)
		if err != nil {
			return sectionErr(id, err)
		}
		out = appendSection(out, id, body)
		return nil
	}
	for _, s := range secs {
		rank, known := sectionRank[s.id]
		if known && !doneGlobal && rank > sectionRank[6] {
			if err := emit(6, global, nil); err != nil {
				return nil, err
			}
			doneGlobal = true
		}
		if known && !doneExport && rank > sectionRank[7] {
			if err := emit(7, export, nil); err != nil {
				return nil, err
			}
			doneExport = true
		}
		switch s.id {
		case 6:
			if err := emit(6, global, s.body); err != nil {
				return nil, err
			}
			doneGlobal = true
		case 7:
			if err := emit(7, export, s.body); err != nil {
				return nil, err
			}
			doneExport = true
		case 8:
			if !hasStart {
				out = appendSection(out, s.id, s.body)
			} // else the start function is exported instead (see stopExport)
		case 10:
			if err := emit(10, func(old []byte) ([]byte, error) { return instrumentCode(old, check) }, s.body); err != nil {
				return nil, err
			}
		case 11:
			if hasDataCount {
				out = appendSection(out, s.id, s.body)
			} else if err := emit(11, mergeData, s.body); err != nil {
				return nil, err
			}
		default:
			out = appendSection(out, s.id, s.body)
		}
	}
	if !doneGlobal {
		if err := emit(6, global, nil); err != nil {
			return nil, err
		}
	}
	if !doneExport {
		if err := emit(7, export, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countImports returns how many globals and memories the import section imports.
func countImports(body []byte) (globals, memories uint32, err error) {
	r := reader{b: body}
	n, err := r.u32()
	if err != nil {
		return 0, 0, err
	}
	for range n {
		if _, err := r.name(); err != nil {
			return 0, 0, err
		}
		if _, err := r.name(); err != nil {
			return 0, 0, err
		}
		kind, err := r.byte()
		if err != nil {
			return 0, 0, err
		}
		switch kind {
		case 0: // func: type index
			_, err = r.u32()
		case 1: // table: reftype, limits
			if _, err = r.byte(); err == nil {
				err = r.limits()
			}
		case 2: // memory: limits
			memories++
			err = r.limits()
		case 3: // global: valtype, mutability
			globals++
			_, err = r.take(2)
		case 4: // tag: attribute, type index
			if _, err = r.byte(); err == nil {
				_, err = r.u32()
			}
		default:
			err = fmt.Errorf("unknown import kind %d", kind)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return globals, memories, nil
}

func (r *reader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	bits := 32
	if flags&0x04 != 0 {
		bits = 64
	}
	if _, err := r.uleb(bits); err != nil {
		return err
	}
	if flags&0x01 != 0 {
		_, err = r.uleb(bits)
	}
	return err
}

// instrumentCode rewrites the code section: check goes after each body's locals and after each
// loop's block type.
func instrumentCode(body, check []byte) ([]byte, error) {
	r := reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendULEB(make([]byte, 0, len(body)+len(body)/8), uint64(n))
	var fn []byte
	for i := range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		code, err := r.take(int(size))
		if err != nil {
			return nil, err
		}
		fn, err = instrumentFunc(fn[:0], code, check)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = appendULEB(out, uint64(len(fn)))
		out = append(out, fn...)
	}
	if r.len() != 0 {
		return nil, errors.New("trailing bytes")
	}
	return out, nil
}

func instrumentFunc(out, code, check []byte) ([]byte, error) {
	r := reader{b: code}
	groups, err := r.u32()
	if err != nil {
		return nil, err
	}
	for range groups {
		if _, err := r.u32(); err != nil {
			return nil, err
		}
		if err := r.valtype(); err != nil {
			return nil, err
		}
	}
	out = append(out, code[:r.off]...)
	if r.len() == 0 || code[r.off] != 0x03 { // the loop's own check follows at once otherwise
		out = append(out, check...)
	}
	last := r.off
	for r.len() > 0 {
		op, _ := r.byte()
		if op == 0x03 { // loop
			if err := r.blocktype(); err != nil {
				return nil, err
			}
			out = append(out, code[last:r.off]...)
			out = append(out, check...)
			last = r.off
			continue
		}
		if err := r.immediates(op); err != nil {
			return nil, fmt.Errorf("opcode %#x at %d: %w", op, r.off-1, err)
		}
	}
	return append(out, code[last:]...), nil
}

func (r *reader) valtype() error {
	t, err := r.byte()
	if err != nil {
		return err
	}
	switch t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return nil
	}
	return fmt.Errorf("unsupported value type %#x", t)
}

func (r *reader) blocktype() error {
	if r.len() == 0 {
		return errShort
	}
	switch r.b[r.off] {
	case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		r.off++
		return nil
	}
	return r.sleb(33)
}

func (r *reader) memarg() error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 { // multi-memory: a memory index follows
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	_, err = r.uleb(64)
	return err
}

// immediates skips the immediates of op (the MVP, sign extension, saturating truncation, bulk
// memory, reference types, SIMD, threads and tail calls); an unknown opcode is an error.
func (r *reader) immediates(op byte) error {
	var err error
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1:
	case op == 0x02 || op == 0x04:
		err = r.blocktype()
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12 || (op >= 0x20 && op <= 0x26) || op == 0xd2:
		_, err = r.u32()
	case op == 0x0e:
		var n uint32
		if n, err = r.u32(); err == nil {
			for i := uint32(0); i <= n && err == nil; i++ {
				_, err = r.u32()
			}
		}
	case op == 0x11 || op == 0x13:
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case op == 0x1c:
		var n uint32
		if n, err = r.u32(); err == nil {
			for i := uint32(0); i < n && err == nil; i++ {
				err = r.valtype()
			}
		}
	case op >= 0x28 && op <= 0x3e:
		err = r.memarg()
	case op == 0x3f || op == 0x40:
		_, err = r.u32()
	case op == 0x41:
		err = r.sleb(32)
	case op == 0x42:
		err = r.sleb(64)
	case op == 0x43:
		_, err = r.take(4)
	case op == 0x44:
		_, err = r.take(8)
	case op >= 0x45 && op <= 0xc4:
	case op == 0xd0:
		_, err = r.byte()
	case op == 0xfc:
		err = r.prefixFC()
	case op == 0xfd:
		err = r.prefixFD()
	case op == 0xfe:
		var sub uint32
		if sub, err = r.u32(); err == nil {
			if sub == 0x03 { // atomic.fence
				_, err = r.byte()
			} else {
				err = r.memarg()
			}
		}
	default:
		err = errors.New("unknown opcode")
	}
	return err
}

func (r *reader) prefixFC() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	args := 0
	switch {
	case sub <= 7: // trunc_sat
	case sub == 8 || sub == 10 || sub == 12 || sub == 14: // memory.init, memory.copy, table.init, table.copy
		args = 2
	case sub <= 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
		args = 1
	default:
		return fmt.Errorf("unknown 0xfc opcode %d", sub)
	}
	for range args {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) prefixFD() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads and stores
		return r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		_, err = r.take(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		_, err = r.byte()
	case sub >= 84 && sub <= 91: // load/store lane
		if err = r.memarg(); err == nil {
			_, err = r.byte()
		}
	case sub <= 275:
	default:
		return fmt.Errorf("unknown 0xfd opcode %d", sub)
	}
	return err
}
