package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Spool file format: a sequence of records, each
//
//	magic "PSA1" | payload length u32 BE | CRC-32C of payload u32 BE | payload
//	payload = id length u16 BE | id | subject length u16 BE | subject | event JSON
//
// A reader skips a record whose CRC does not match by searching for the next
// magic, so a flipped bit loses one event, not the rest of the file; a torn
// last record (a crash mid-write) is cut off when the spool is opened.
const (
	spoolFile      = "audit.spool"
	spoolOffFile   = "audit.spool.offset"
	recHeaderLen   = 12
	maxPayloadLen  = 16 << 20
	spoolReadChunk = 1 << 20
)

// ErrSpoolLocked is returned by New when another publisher holds the spool.
var ErrSpoolLocked = errors.New("audit: spool in use by another publisher")

var (
	spoolMagic = []byte("PSA1")
	crcTable   = crc32.MakeTable(crc32.Castagnoli)
)

// record is one queued or spooled event, ready to publish.
type record struct {
	id      string
	subject string
	data    []byte
	end     int64  // spool offset just past this record; 0 when not from the spool
	sig     string // base64 signature of the batch that covers data, once signed (kept across retries)
	batch   string // data's place in that batch (HeaderBatch)
	stored  bool   // a recheck found it in the stream: not sent again
}

func appendRecord(dst []byte, r record) []byte {
	plen := 2 + len(r.id) + 2 + len(r.subject) + len(r.data)
	dst = append(dst, spoolMagic...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(plen))
	crcAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(r.id)))
	dst = append(dst, r.id...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(r.subject)))
	dst = append(dst, r.subject...)
	dst = append(dst, r.data...)
	binary.BigEndian.PutUint32(dst[crcAt:], crc32.Checksum(dst[start:], crcTable))
	return dst
}

// parseRecords decodes records from b, which starts at a record boundary (or
// at garbage, which is skipped). It stops after maxRecs records (<= 0: no
// limit). valid is the offset just past the last good record; scanned is how
// far it read, including skipped garbage; skipped counts corrupt regions.
// When atEOF is false, a record cut by the end of b is left for the next
// read; when true, it is torn and skipped.
func parseRecords(b []byte, atEOF bool, maxRecs int) (recs []record, valid, scanned, skipped int) {
	i := 0
	for i < len(b) && (maxRecs <= 0 || len(recs) < maxRecs) {
		rest := b[i:]
		switch {
		case len(rest) >= 4 && bytes.Equal(rest[:4], spoolMagic):
			if len(rest) < recHeaderLen {
				if !atEOF {
					return recs, valid, i, skipped // header continues in the next read
				}
				return recs, valid, len(b), skipped + 1 // torn header
			}
			plen := int(binary.BigEndian.Uint32(rest[4:]))
			if plen > maxPayloadLen || plen < 4 {
				i = skipTo(b, i, &skipped)
				continue
			}
			if len(rest)-recHeaderLen < plen {
				if !atEOF {
					return recs, valid, i, skipped // payload continues in the next read
				}
				i = skipTo(b, i, &skipped) // torn payload
				continue
			}
			r, ok := decodePayload(rest[recHeaderLen:recHeaderLen+plen], binary.BigEndian.Uint32(rest[8:]))
			if !ok {
				i = skipTo(b, i, &skipped)
				continue
			}
			i += recHeaderLen + plen
			r.end = int64(i)
			recs = append(recs, r)
			valid = i
		case len(rest) < 4 && !atEOF && bytes.HasPrefix(spoolMagic, rest):
			return recs, valid, i, skipped // magic continues in the next read
		default:
			next := bytes.Index(rest[1:], spoolMagic)
			skipped++
			if next >= 0 {
				i += 1 + next
				continue
			}
			keep := 0
			if !atEOF { // a magic may start in the last bytes
				for k := 3; k > 0; k-- {
					if len(rest) > k && bytes.HasSuffix(rest, spoolMagic[:k]) {
						keep = k
						break
					}
				}
			}
			return recs, valid, len(b) - keep, skipped
		}
	}
	return recs, valid, i, skipped
}

// skipTo moves past a bad record header at i to the next magic, or to the end.
func skipTo(b []byte, i int, skipped *int) int {
	*skipped++
	next := bytes.Index(b[i+1:], spoolMagic)
	if next < 0 {
		return len(b)
	}
	return i + 1 + next
}

func decodePayload(p []byte, crc uint32) (record, bool) {
	if crc32.Checksum(p, crcTable) != crc {
		return record{}, false
	}
	idLen := int(binary.BigEndian.Uint16(p))
	if 2+idLen+2 > len(p) {
		return record{}, false
	}
	id := string(p[2 : 2+idLen])
	p = p[2+idLen:]
	subLen := int(binary.BigEndian.Uint16(p))
	if 2+subLen > len(p) {
		return record{}, false
	}
	subject := string(p[2 : 2+subLen])
	data := bytes.Clone(p[2+subLen:])
	return record{id: id, subject: subject, data: data}, true
}

// spool is the on-disk queue of events not yet published. Callers serialize
// access (Publisher.mu), except that readBatch may run concurrently with
// append because it reads only below the size it is given.
type spool struct {
	dir   string
	f     *os.File
	size  int64 // end of the file's valid data; appends go here
	off   int64 // replay position: records before it are published
	count int64 // records in [off, size)
	buf   []byte
	offF  *os.File // audit.spool.offset, opened on first write
	sent  doubt    // the send span saved in audit.spool.sent (recheck.go)
	sentF *os.File // audit.spool.sent, opened on first write
	// sentErr says audit.spool.sent could not be read when the spool was opened.
	sentErr error
}

// openSpool opens (or creates) the spool in dir, cuts a torn or corrupt
// tail, and positions replay at the saved offset. corrupt counts skipped
// regions found while scanning.
func openSpool(dir string) (s *spool, corrupt int, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("audit: spool dir %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, spoolFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("audit: open spool: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, 0, err
	}
	s = &spool{dir: dir, f: f}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("audit: stat spool: %w", err)
	}
	s.off = s.readOffset()
	if s.off > st.Size() {
		s.off = 0
	}
	// Scan from the replay offset to find the valid end and count records.
	var pos, valid int64 = s.off, s.off
	for pos < st.Size() {
		recs, v, scanned, skipped, err := s.readAt(pos, st.Size(), 0)
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		corrupt += skipped
		s.count += int64(len(recs))
		if v > 0 {
			valid = pos + int64(v)
		}
		if scanned == 0 {
			break
		}
		pos += int64(scanned)
	}
	if valid < st.Size() {
		if err := f.Truncate(valid); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("audit: cut torn spool tail: %w", err)
		}
	}
	s.size = valid
	s.sent, s.sentErr = s.readSent()
	if sf, err := os.OpenFile(filepath.Join(dir, spoolSentFile), os.O_RDWR, 0); err == nil {
		s.sentF = sf // a span left by an earlier run is cleared with the spool
	}
	if s.count == 0 {
		if err := s.reset(); err != nil {
			f.Close()
			if s.sentF != nil {
				s.sentF.Close()
			}
			return nil, 0, err
		}
	}
	return s, corrupt, nil
}

// readAt parses records in [pos, limit), reading at most one chunk (grown
// when a single record is larger). Offsets in the returned records are
// absolute. maxRecs <= 0 means no limit on the count.
func (s *spool) readAt(pos, limit int64, maxRecs int) (recs []record, valid, scanned, skipped int, err error) {
	chunk := int64(spoolReadChunk)
	for {
		n := min(chunk, limit-pos)
		buf := make([]byte, n)
		if _, err := s.f.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, 0, 0, fmt.Errorf("audit: read spool: %w", err)
		}
		atEOF := pos+n >= limit
		recs, valid, scanned, skipped = parseRecords(buf, atEOF, maxRecs)
		if scanned == 0 && !atEOF {
			chunk *= 2
			continue
		}
		for i := range recs {
			recs[i].end += pos
		}
		return recs, valid, scanned, skipped, nil
	}
}

// append writes r at the end of the spool in one write.
func (s *spool) append(r record) error {
	s.buf = appendRecord(s.buf[:0], r)
	if _, err := s.f.WriteAt(s.buf, s.size); err != nil {
		// Cut a partial write so the next append starts at a boundary.
		_ = s.f.Truncate(s.size)
		return fmt.Errorf("audit: append spool: %w", err)
	}
	s.size += int64(len(s.buf))
	s.count++
	return nil
}

// commit marks records up to end (and n of them) as published. When the
// whole spool is published the file is emptied.
func (s *spool) commit(end int64, n int) error {
	s.off = end
	s.count -= int64(n)
	if s.count < 0 {
		s.count = 0
	}
	if s.off >= s.size {
		return s.reset()
	}
	return s.writeOffset()
}

func (s *spool) reset() error {
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("audit: empty spool: %w", err)
	}
	s.size, s.off, s.count = 0, 0, 0
	if err := s.writeSent(doubt{}); err != nil {
		return err
	}
	return s.writeOffset()
}

// prepend rewrites the spool as recs followed by the unpublished records,
// through a temporary file and a rename (used by Close for events still in
// memory, which are older than anything spooled).
func (s *spool) prepend(recs []record) error {
	if len(recs) == 0 {
		return nil
	}
	tmp, err := os.CreateTemp(s.dir, spoolFile+".tmp*")
	if err != nil {
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	defer os.Remove(tmp.Name())
	var buf []byte
	for _, r := range recs {
		buf = appendRecord(buf, r)
	}
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	if _, err := io.Copy(tmp, io.NewSectionReader(s.f, s.off, s.size-s.off)); err != nil {
		tmp.Close()
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	st, err := tmp.Stat()
	if err != nil {
		tmp.Close()
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	if err := lockFile(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, spoolFile)); err != nil {
		tmp.Close()
		return fmt.Errorf("audit: spool prepend: %w", err)
	}
	s.f.Close()
	s.f = tmp
	s.count += int64(len(recs))
	s.size, s.off = st.Size(), 0
	return s.writeOffset()
}

func (s *spool) readOffset() int64 {
	b, err := os.ReadFile(filepath.Join(s.dir, spoolOffFile))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// writeOffset saves the replay offset as 20 zero-padded digits in one
// pwrite, so a torn write cannot leave a longer, wrong number behind.
func (s *spool) writeOffset() error {
	if s.offF == nil {
		f, err := os.OpenFile(filepath.Join(s.dir, spoolOffFile), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("audit: save spool offset: %w", err)
		}
		s.offF = f
	}
	if _, err := s.offF.WriteAt(fmt.Appendf(nil, "%020d", s.off), 0); err != nil {
		return fmt.Errorf("audit: save spool offset: %w", err)
	}
	return nil
}

func (s *spool) close() error {
	if s.offF != nil {
		s.offF.Close()
	}
	if s.sentF != nil {
		s.sentF.Close()
	}
	if err := s.f.Sync(); err != nil {
		s.f.Close()
		return fmt.Errorf("audit: sync spool: %w", err)
	}
	return s.f.Close()
}
