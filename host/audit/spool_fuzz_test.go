package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseRecords: any bytes appended after good records never lose or
// change those records, and parsing never panics or runs past the input.
func FuzzParseRecords(f *testing.F) {
	good := encode(testRecords(3))
	f.Add([]byte{})
	f.Add(good[:len(good)-1])
	f.Add([]byte("PSA1"))
	f.Add([]byte("PSA1\x00\x00\x00\x05\x00\x00\x00\x00abcde"))
	f.Add([]byte("PSA1\xff\xff\xff\xff"))
	f.Add(append([]byte("garbagePS"), good...))
	f.Add(good[5:40])
	f.Fuzz(func(t *testing.T, tail []byte) {
		want := testRecords(3)
		b := append(encode(want), tail...)
		for _, atEOF := range []bool{true, false} {
			got, valid, scanned, _ := parseRecords(b, atEOF, 0)
			if valid > scanned || scanned > len(b) {
				t.Fatalf("valid=%d scanned=%d len=%d", valid, scanned, len(b))
			}
			if len(got) < len(want) {
				t.Fatalf("atEOF=%v: lost good records: got %d, want at least %d", atEOF, len(got), len(want))
			}
			sameRecords(t, got[:len(want)], want)
		}
		// Arbitrary bytes alone: no panic, offsets in range.
		recs, valid, scanned, _ := parseRecords(tail, true, 0)
		if valid > scanned || scanned > len(tail) {
			t.Fatalf("garbage: valid=%d scanned=%d len=%d", valid, scanned, len(tail))
		}
		for _, r := range recs {
			if r.end <= 0 || int(r.end) > len(tail) {
				t.Fatalf("record end %d out of range", r.end)
			}
		}
	})
}

// FuzzOpenSpool: a spool file of good records followed by any bytes opens,
// keeps every good record, and accepts appends that read back after them.
func FuzzOpenSpool(f *testing.F) {
	good := encode(testRecords(2))
	f.Add([]byte{})
	f.Add(good[:len(good)-2])
	f.Add([]byte("PSA1\x00\x00"))
	f.Add(bytes.Repeat([]byte("PSA1"), 10))
	f.Fuzz(func(t *testing.T, tail []byte) {
		dir := t.TempDir()
		want := testRecords(2)
		if err := os.WriteFile(filepath.Join(dir, spoolFile), append(encode(want), tail...), 0o600); err != nil {
			t.Fatal(err)
		}
		sp, _, err := openSpool(dir)
		if err != nil {
			t.Fatalf("openSpool: %v", err)
		}
		defer sp.close()
		extra := record{id: "after", subject: "palisade.audit.tool.changed", data: []byte(`{"k":"v"}`)}
		if err := sp.append(extra); err != nil {
			t.Fatal(err)
		}
		got, _, _, _, err := sp.readAt(sp.off, sp.size, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 3 {
			t.Fatalf("got %d records, want at least 3", len(got))
		}
		sameRecords(t, got[:2], want)
		last := got[len(got)-1]
		if last.id != extra.id || !bytes.Equal(last.data, extra.data) {
			t.Fatalf("appended record not last: %+v", last)
		}
	})
}
