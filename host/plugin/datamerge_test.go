package plugin

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// testSeg is an active data segment at a constant offset, or a passive one.
type testSeg struct {
	off     int32
	init    string
	passive bool
}

// dataModule is a module with one page of memory, exported, and segs as its data section.
func dataModule(segs []testSeg) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, 5, []byte{1, 0x00, 1})                                      // memory: min 1 page
	m = appendSection(m, 7, append([]byte{1, 6}, append([]byte("memory"), 2, 0)...)) // export "memory"
	body := appendULEB(nil, uint64(len(segs)))
	for _, s := range segs {
		if s.passive {
			body = append(body, 0x01)
		} else {
			body = appendSLEB(append(body, 0x00, 0x41), int64(s.off))
			body = append(body, 0x0b)
		}
		body = appendULEB(body, uint64(len(s.init)))
		body = append(body, s.init...)
	}
	return appendSection(m, 11, body)
}

// dataSegments counts a module's data segments.
func dataSegments(t testing.TB, wasm []byte) int {
	t.Helper()
	secs, err := sections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secs {
		if s.id == 11 {
			r := reader{b: s.body}
			n, err := r.u32()
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	return 0
}

// memoryAfterInstantiate instantiates wasm without running any start function and returns a
// copy of its memory, or the instantiation error.
func memoryAfterInstantiate(t testing.TB, wasm []byte) ([]byte, error) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions().WithName(""))
	if err != nil {
		return nil, err
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(b), nil
}

func mergeModule(t testing.TB, wasm []byte) []byte {
	t.Helper()
	secs, err := sections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), wasm[:8]...)
	for _, s := range secs {
		body := s.body
		if s.id == 11 {
			if body, err = mergeData(s.body); err != nil {
				t.Fatal(err)
			}
		}
		out = appendSection(out, s.id, body)
	}
	return out
}

func TestMergeData(t *testing.T) {
	for _, tc := range []struct {
		name string
		segs []testSeg
		want int // segments after
	}{
		{"near ones join", []testSeg{{off: 0, init: "ab"}, {off: 4, init: "cd"}, {off: 4 + 2 + dataMergeGap, init: "ef"}}, 1},
		{"a wider gap does not", []testSeg{{off: 0, init: "ab"}, {off: 2 + dataMergeGap + 1, init: "cd"}}, 2},
		{"descending and overlapping keep their order", []testSeg{{off: 300, init: "ef"}, {off: 100, init: "gh"}, {off: 101, init: "X"}, {off: 0, init: "ab"}}, 3},
		{"adjacent", []testSeg{{off: 10, init: "a"}, {off: 11, init: "b"}, {off: 12, init: "c"}}, 1},
		{"empty segments are kept", []testSeg{{off: 10, init: ""}, {off: 10, init: "b"}, {off: 20, init: ""}}, 3},
		{"an empty segment past the memory still fails", []testSeg{{off: 10, init: "b"}, {off: 65537, init: ""}}, 2},
		{"a later segment fills an earlier gap", []testSeg{{off: 0, init: "ab"}, {off: 40, init: "cd"}, {off: 20, init: "ef"}}, 1},
		{"a span too wide is left alone", []testSeg{{off: 0, init: "ab"}, {off: dataMergeSpan, init: "cd"}}, 2},
		{"the page's last byte", []testSeg{{off: 65530, init: "abcde"}, {off: 65535, init: "f"}}, 1},
		{"past the memory still fails", []testSeg{{off: 65530, init: "abcde"}, {off: 65536, init: "f"}}, 1},
		{"a negative offset still fails", []testSeg{{off: -1, init: "a"}}, 1},
		{"a passive segment leaves the section alone", []testSeg{{off: 0, init: "ab"}, {passive: true, init: "zz"}, {off: 4, init: "cd"}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := dataModule(tc.segs)
			merged := mergeModule(t, orig)
			if got := dataSegments(t, merged); got != tc.want {
				t.Errorf("%d segments after merging, want %d", got, tc.want)
			}
			want, werr := memoryAfterInstantiate(t, orig)
			got, gerr := memoryAfterInstantiate(t, merged)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("instantiation: original %v, merged %v", werr, gerr)
			}
			if !bytes.Equal(got, want) {
				t.Error("memory after instantiation differs")
			}
		})
	}
	if _, err := mergeData([]byte{2, 0x00, 0x41, 0x00, 0x0b, 0x05, 'a'}); err == nil {
		t.Error("a truncated data section merged")
	}
	if _, err := mergeData([]byte{1, 0x00, 0x41, 0x00, 0x0b, 0x01, 'a', 'x'}); err == nil {
		t.Error("a data section with trailing bytes merged")
	}
}

// Random layouts: the merged module's memory after instantiation is the original's.
func TestMergeDataRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var segs []testSeg
		off := int32(rng.IntN(100))
		for range 1 + rng.IntN(40) {
			if rng.IntN(10) == 0 {
				off = int32(rng.IntN(60000)) // jump anywhere, even backwards
			}
			b := make([]byte, rng.IntN(20))
			for k := range b {
				b[k] = byte(1 + rng.IntN(255))
			}
			segs = append(segs, testSeg{off: off, init: string(b)})
			off += int32(len(b) + rng.IntN(2*dataMergeGap))
		}
		orig := dataModule(segs)
		merged := mergeModule(t, orig)
		want, werr := memoryAfterInstantiate(t, orig)
		got, gerr := memoryAfterInstantiate(t, merged)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("layout %d %+v: memory or outcome differs (original %v, merged %v)", i, segs, werr, gerr)
		}
	}
}

// A Go guest: thousands of segments become a few dozen, and its memory after instantiation is
// byte for byte the same.
func TestMergeDataGoGuest(t *testing.T) {
	wasm := buildRules(t)
	inst, err := instrument(wasm, stopByGlobal)
	if err != nil {
		t.Fatal(err)
	}
	before, after := dataSegments(t, wasm), dataSegments(t, inst)
	t.Logf("rules: %d data segments, %d after instrument", before, after)
	if before < 1000 || after > before/100 {
		t.Errorf("%d data segments → %d, want a hundredth or fewer", before, after)
	}
	if want, got := layOut(t, wasm), layOut(t, inst); !bytes.Equal(got, want) {
		t.Error("the instrumented module's data lays out differently from the original's")
	}
}

// layOut writes a module's active data segments, in order, into a zeroed image, as
// instantiation writes them into linear memory (the Go guest imports host functions, so it is
// not instantiated here).
func layOut(t testing.TB, wasm []byte) []byte {
	t.Helper()
	secs, err := sections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	var image []byte
	for _, s := range secs {
		if s.id != 11 {
			continue
		}
		r := reader{b: s.body}
		n, _ := r.u32()
		for range n {
			flag, _ := r.u32()
			op, _ := r.byte()
			off, _ := r.slebValue(32)
			end, _ := r.byte()
			size, _ := r.u32()
			init, err := r.take(int(size))
			if err != nil || flag != 0 || op != 0x41 || end != 0x0b || off < 0 {
				t.Fatalf("data segment not laid out here (flag %d, op %#x, off %d): %v", flag, op, off, err)
			}
			if need := int(off) + len(init); need > len(image) {
				image = append(image, make([]byte, need-len(image))...)
			}
			copy(image[off:], init)
		}
	}
	return image
}
