package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// assemble compiles WAT source with wabt's wat2wasm (make setup-sdk), skipping without it.
func assemble(t testing.TB, src string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("wat2wasm not installed (run make setup-sdk)")
		}
		t.Skip("wat2wasm not installed (make setup-sdk)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countingLoop runs its loop n times (counting in the iters global) and returns: bounded, so
// a missed stop shows as a normal return rather than a hang.
const countingLoop = `(module (memory 1)
  (global $iters (export "iters") (mut i32) (i32.const 0))
  (func (export "run") (param $n i32)
    (loop $l
      (global.set $iters (i32.add (global.get $iters) (i32.const 1)))
      (br_if $l (i32.ne (global.get $iters) (local.get $n))))))`

// TestCheckCatchesAnyCount: with the stop flag set, whatever value $count holds (the host's
// stopNow, the 0 it wrote before, the −1 a race between the host's write and the guest's two
// reads left in the old check, or garbage), the guest traps within yieldEvery checks, and at
// the first check for the values the host writes. Deterministic: no timer, no goroutine.
func TestCheckCatchesAnyCount(t *testing.T) {
	ctx := context.Background()
	wasm, err := instrument(assemble(t, countingLoop), stopByGlobal)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50_000_000 // far more checks than yieldEvery, far fewer than 2^32
	for _, tc := range []struct {
		name      string
		stop      uint64
		count     uint32
		wantTrap  bool
		wantIters uint32 // most loop iterations completed before the trap
	}{
		{"host wrote stopNow", 1, stopNow, true, 0},
		{"host wrote 0", 1, 0, true, 0},
		{"half way to 2^32", 1, 0x80000000, true, 0},
		{"a count the guest stored", 1, yieldEvery - 1, true, yieldEvery},
		{"garbage just over", 1, yieldEvery, true, yieldEvery},
		{"no stop: the count recovers", 0, stopNow, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close(ctx)
			mod.ExportedGlobal(stopExport).(api.MutableGlobal).Set(tc.stop)
			mod.ExportedGlobal(countExport).(api.MutableGlobal).Set(uint64(tc.count))
			_, err = mod.ExportedFunction("run").Call(ctx, n)
			iters := uint32(mod.ExportedGlobal("iters").Get())
			switch {
			case tc.wantTrap && err == nil:
				t.Fatalf("returned normally after %d iterations: the stop was missed", iters)
			case tc.wantTrap && iters > tc.wantIters:
				t.Fatalf("trapped after %d iterations, want at most %d", iters, tc.wantIters)
			case !tc.wantTrap && (err != nil || iters != n):
				t.Fatalf("err = %v after %d iterations, want a normal return after %d", err, iters, n)
			}
		})
	}
}

// seeds are the repository's WAT plugins, assembled.
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, pat := range []string{"testdata/*.wat", "../../sdk/wat/*.wat"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, assemble(t, string(src)))
		}
	}
	return append(out, assemble(t, countingLoop))
}

// FuzzInstrument checks the property the rewriter exists for: for any module wazero compiles,
// instrument either refuses it or returns a module that wazero compiles and in which every
// function entry and every loop header carries the stop check (checkInstrumented, which walks
// the output independently of the rewriter). Seeds: the repository's WAT plugins, whole and cut.
func FuzzInstrument(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
		f.Add(s[:len(s)/2])
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if oversized(wasm) {
			return
		}
		c, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			return
		}
		c.Close(ctx)
		for _, mode := range []stopMode{stopByGlobal, stopByWazero} {
			out, err := instrument(wasm, mode)
			if err != nil {
				continue // refused: Load fails closed
			}
			c, err := rt.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("mode %d: the instrumented module does not compile: %v", mode, err)
			}
			c.Close(ctx)
			if err := checkInstrumented(out, mode); err != nil {
				t.Fatalf("mode %d: %v", mode, err)
			}
		}
	})
}

// oversized reports whether a section declares more entries than it has bytes: wazero (as
// of v1.9.0) allocates such a vector by its declared count before reading it, so 26 bytes asking for 2^31
// functions exhaust memory inside CompileModule (testdata/fuzz/FuzzInstrument/eaf2e9c3b9348988).
// instrument refuses those (it reads each entry), which keeps Load safe; the harness skips them.
func oversized(wasm []byte) bool {
	if len(wasm) < 8 {
		return false
	}
	r := reader{b: wasm[8:]}
	for r.len() > 0 {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return false
		}
		body := r.b[r.off:]
		if int(size) < len(body) {
			body = body[:size]
		}
		r.off += len(body)
		if id == 0 || id == 8 || id == 12 {
			continue
		}
		br := reader{b: body}
		if n, err := br.u32(); err == nil && int(n) > len(body) {
			return true
		}
	}
	return false
}

// TestInstrumentedSeedsAreChecked runs checkInstrumented on every seed, so a checker that
// accepts nothing cannot pass the fuzz target vacuously.
func TestInstrumentedSeedsAreChecked(t *testing.T) {
	for i, s := range seeds(t) {
		out, err := instrument(s, stopByWazero)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if err := checkInstrumented(out, stopByWazero); err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		// Dropping any one check must be noticed.
		if first := bytes.Index(out, checkPrefix(t, out)); first >= 0 {
			broken := append(append([]byte(nil), out[:first]...), 0x01) // nop where the check was
			broken = append(broken, out[first+1:]...)
			if checkInstrumented(broken, stopByWazero) == nil {
				t.Fatalf("seed %d: a broken check passed", i)
			}
		}
	}
}

func checkPrefix(t testing.TB, out []byte) []byte {
	count, err := exportedGlobal(out, countExport)
	if err != nil {
		t.Fatal(err)
	}
	return expectedCheck(count)
}

// expectedCheck is how a check must start: decrement $count, then test it unsigned against
// yieldEvery (written out here from the doc comment, not taken from instrument).
func expectedCheck(count uint32) []byte {
	g := appendULEB(nil, uint64(count))
	b := append([]byte{0x23}, g...)               // global.get $count
	b = append(b, 0x41, 0x01, 0x6b, 0x24)         // i32.const 1, i32.sub, global.set
	b = append(append(b, g...), 0x23)             // $count, global.get
	b = append(append(b, g...), 0x41, 0x80, 0x20) // $count, i32.const 4096
	return append(b, 0x4f, 0x04, 0x40)            // i32.ge_u, if
}

func exportedGlobal(wasm []byte, name string) (uint32, error) {
	secs, err := sections(wasm)
	if err != nil {
		return 0, err
	}
	for _, s := range secs {
		if s.id != 7 {
			continue
		}
		r := reader{b: s.body}
		n, _ := r.u32()
		for range n {
			nm, err := r.name()
			if err != nil {
				return 0, err
			}
			kind, _ := r.byte()
			idx, err := r.u32()
			if err != nil {
				return 0, err
			}
			if nm == name && kind == 3 {
				return idx, nil
			}
		}
	}
	return 0, fmt.Errorf("no global export %s", name)
}

// checkInstrumented walks the code section of an instrumented module with its own decoder and
// fails unless every function body (after its locals) starts with the check or with a loop,
// and every loop's block type is followed by the check. Loops inside a check (stopByWazero's
// yield) are exempt.
func checkInstrumented(wasm []byte, mode stopMode) error {
	count, err := exportedGlobal(wasm, countExport)
	if err != nil {
		return err
	}
	check := expectedCheck(count)
	secs, err := sections(wasm)
	if err != nil {
		return err
	}
	for _, s := range secs {
		if s.id == 8 && mode == stopByGlobal {
			return errors.New("a start section survived")
		}
		if s.id != 10 {
			continue
		}
		r := reader{b: s.body}
		n, err := r.u32()
		if err != nil {
			return err
		}
		for i := range n {
			size, err := r.u32()
			if err != nil {
				return err
			}
			body, err := r.take(int(size))
			if err != nil {
				return err
			}
			if err := checkBody(body, check); err != nil {
				return fmt.Errorf("function %d: %w", i, err)
			}
		}
	}
	return nil
}

func checkBody(body, check []byte) error {
	w := &walker{b: body}
	groups := w.u()
	for range groups {
		w.u()
		w.off++ // value type
	}
	if w.err != nil {
		return w.err
	}
	if !bytes.HasPrefix(body[w.off:], check) && (w.off >= len(body) || body[w.off] != 0x03) {
		return fmt.Errorf("entry at %d: no check", w.off)
	}
	inCheck := 0 // depth of blocks opened inside a check; > 0 while walking one
	depth := 0
	for w.off < len(body) && w.err == nil {
		if inCheck == 0 && bytes.HasPrefix(body[w.off:], check) {
			w.off += len(check)
			depth++
			inCheck = depth
			continue
		}
		op := body[w.off]
		w.off++
		switch op {
		case 0x02, 0x04: // block, if
			w.blocktype()
			depth++
		case 0x03: // loop
			w.blocktype()
			depth++
			if inCheck == 0 && !bytes.HasPrefix(body[w.off:], check) {
				return fmt.Errorf("loop at %d: no check", w.off)
			}
		case 0x0b: // end
			if depth == inCheck {
				inCheck = 0
			}
			depth--
		default:
			w.skip(op)
		}
	}
	if w.err != nil {
		return w.err
	}
	return nil
}

// walker decodes instructions for checkBody, independently of instrument's reader.
type walker struct {
	b   []byte
	off int
	err error
}

func (w *walker) u() uint64 {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		if w.off >= len(w.b) {
			w.err = errShort
			return 0
		}
		c := w.b[w.off]
		w.off++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	w.err = errors.New("LEB128 too long")
	return 0
}

func (w *walker) blocktype() {
	if w.off < len(w.b) && (w.b[w.off] == 0x40 || w.b[w.off] >= 0x6f && w.b[w.off] <= 0x7f) {
		w.off++
		return
	}
	w.u() // a type index, s33
}

func (w *walker) mem() {
	if w.u()&0x40 != 0 {
		w.u()
	}
	w.u()
}

// skip passes op's immediates (instruction set as in the spec's binary format appendix).
func (w *walker) skip(op byte) {
	switch {
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12 || op == 0xd2 || op == 0x3f || op == 0x40,
		op >= 0x20 && op <= 0x26, op == 0x41, op == 0x42:
		w.u()
	case op == 0x0e:
		for n := w.u(); n > 0 && w.err == nil; n-- {
			w.u()
		}
		w.u()
	case op == 0x11 || op == 0x13:
		w.u()
		w.u()
	case op == 0x1c:
		w.off += int(w.u())
	case op >= 0x28 && op <= 0x3e:
		w.mem()
	case op == 0x43:
		w.off += 4
	case op == 0x44:
		w.off += 8
	case op == 0xd0:
		w.off++
	case op == 0xfc:
		switch sub := w.u(); {
		case sub == 8 || sub == 10 || sub == 12 || sub == 14:
			w.u()
			w.u()
		case sub >= 9 && sub <= 17:
			w.u()
		}
	case op == 0xfd:
		switch sub := w.u(); {
		case sub <= 11 || sub == 92 || sub == 93:
			w.mem()
		case sub == 12 || sub == 13:
			w.off += 16
		case sub >= 21 && sub <= 34:
			w.off++
		case sub >= 84 && sub <= 91:
			w.mem()
			w.off++
		}
	case op == 0xfe:
		if w.u() == 3 {
			w.off++
		} else {
			w.mem()
		}
	case op <= 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1 || op >= 0x45 && op <= 0xc4:
	default:
		w.err = fmt.Errorf("opcode %#x at %d: unknown to the checker", op, w.off-1)
	}
	if w.off > len(w.b) {
		w.err = errShort
	}
}
