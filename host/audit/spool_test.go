package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func testRecords(n int) []record {
	recs := make([]record, n)
	for i := range recs {
		recs[i] = record{
			id:      fmt.Sprintf("id-%04d", i),
			subject: fmt.Sprintf("palisade.audit.decision.allow.s.t%d", i),
			data:    []byte(fmt.Sprintf(`{"id":"id-%04d","n":%d}`, i, i)),
		}
	}
	return recs
}

func encode(recs []record) []byte {
	var b []byte
	for _, r := range recs {
		b = appendRecord(b, r)
	}
	return b
}

func sameRecords(t *testing.T, got, want []record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].id != want[i].id || got[i].subject != want[i].subject || !bytes.Equal(got[i].data, want[i].data) {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseRecordsRoundTrip(t *testing.T) {
	want := testRecords(50)
	b := encode(want)
	got, valid, scanned, skipped := parseRecords(b, true, 0)
	sameRecords(t, got, want)
	if valid != len(b) || scanned != len(b) || skipped != 0 {
		t.Fatalf("valid=%d scanned=%d skipped=%d, want %d %d 0", valid, scanned, skipped, len(b), len(b))
	}
}

func TestParseRecordsChunked(t *testing.T) {
	want := testRecords(20)
	b := encode(want)
	// Read in every chunk size: records cut by a chunk end wait for the next read.
	for chunk := 1; chunk <= 64; chunk++ {
		var got []record
		pos := 0
		for pos < len(b) {
			end := min(len(b), pos+chunk)
			for {
				recs, _, scanned, skipped := parseRecords(b[pos:end], end == len(b), 0)
				if skipped != 0 {
					t.Fatalf("chunk %d: skipped %d regions in a clean file", chunk, skipped)
				}
				if scanned == 0 && end < len(b) {
					end = min(len(b), end+chunk)
					continue
				}
				got = append(got, recs...)
				pos += scanned
				break
			}
		}
		sameRecords(t, got, want)
	}
}

func TestParseRecordsCorruptMiddleSkipsOne(t *testing.T) {
	want := testRecords(5)
	b := encode(want)
	// Flip a payload byte of the third record.
	third := len(encode(want[:2]))
	b[third+recHeaderLen+3] ^= 0xff
	got, _, _, skipped := parseRecords(b, true, 0)
	if skipped == 0 {
		t.Fatal("corruption not reported")
	}
	sameRecords(t, got, append(append([]record{}, want[:2]...), want[3:]...))
}

func TestOpenSpoolCutsTornTail(t *testing.T) {
	dir := t.TempDir()
	want := testRecords(10)
	b := encode(want)
	torn := appendRecord(nil, record{id: "torn", subject: "s", data: []byte(`{"x":1}`)})
	b = append(b, torn[:len(torn)-3]...)
	if err := os.WriteFile(filepath.Join(dir, spoolFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	sp, _, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sp.count != 10 {
		t.Fatalf("count = %d, want 10", sp.count)
	}
	// A new append after the cut is readable after the old records.
	extra := record{id: "new", subject: "palisade.audit.tool.changed", data: []byte(`{}`)}
	if err := sp.append(extra); err != nil {
		t.Fatal(err)
	}
	recs, _, _, skipped, err := sp.readAt(sp.off, sp.size, 0)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 0 {
		t.Fatalf("skipped %d after cutting the torn tail", skipped)
	}
	sameRecords(t, recs, append(want, extra))
	if err := sp.close(); err != nil {
		t.Fatal(err)
	}
}

func TestSpoolCommitAndReopen(t *testing.T) {
	dir := t.TempDir()
	sp, _, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := testRecords(6)
	for _, r := range want {
		if err := sp.append(r); err != nil {
			t.Fatal(err)
		}
	}
	recs, _, _, _, err := sp.readAt(sp.off, sp.size, 4)
	if err != nil || len(recs) != 4 {
		t.Fatalf("readAt: %d recs, %v", len(recs), err)
	}
	if err := sp.commit(recs[3].end, 4); err != nil {
		t.Fatal(err)
	}
	sp.close()
	// Reopen: replay continues after the committed offset.
	sp, _, err = openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	if sp.count != 2 {
		t.Fatalf("count after reopen = %d, want 2", sp.count)
	}
	recs, _, _, _, err = sp.readAt(sp.off, sp.size, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, recs, want[4:])
	// Prepend puts older records first.
	older := testRecords(2)
	older[0].id, older[1].id = "old-0", "old-1"
	if err := sp.prepend(older); err != nil {
		t.Fatal(err)
	}
	recs, _, _, _, err = sp.readAt(sp.off, sp.size, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, recs, append(older, want[4:]...))
	if sp.count != 4 {
		t.Fatalf("count after prepend = %d, want 4", sp.count)
	}
	if err := sp.commit(recs[3].end, 4); err != nil {
		t.Fatal(err)
	}
	if sp.size != 0 || sp.count != 0 {
		t.Fatalf("spool not emptied after full commit: size=%d count=%d", sp.size, sp.count)
	}
}
