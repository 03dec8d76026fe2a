// Package sse reads and writes Server-Sent Events as the MCP Streamable HTTP transport uses them:
// one event at a time, as it arrives, so a proxy can pass events through without buffering the
// whole stream.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// Event is one server-sent event.
type Event struct {
	ID    string
	Name  string // the "event:" field; "" means message
	Data  []byte // data lines joined by \n
	Retry string
}

// ErrTooLarge is returned when one event, or one line, exceeds the reader's limit. The reader
// stops buffering at the limit: it never holds more than limit bytes of a line it refuses.
var ErrTooLarge = errors.New("sse: event too large")

// ErrBudget is returned when the shared Budget cannot cover the event being read.
var ErrBudget = errors.New("sse: memory budget exhausted")

// Budget is a byte budget shared by readers (e.g. every upstream stream of a gateway): a reader
// takes from it as an event grows past a small free allowance and gives back when the caller
// asks for the next event. The zero value is unusable; use NewBudget.
type Budget struct {
	left atomic.Int64
	size int64
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int64) *Budget {
	b := &Budget{size: n}
	b.left.Store(n)
	return b
}

// Size is the budget's total.
func (b *Budget) Size() int64 { return b.size }

// InUse is how many bytes readers hold now.
func (b *Budget) InUse() int64 { return b.size - b.left.Load() }

func (b *Budget) take(n int64) bool {
	if b.left.Add(-n) < 0 {
		b.left.Add(n)
		return false
	}
	return true
}

func (b *Budget) give(n int64) { b.left.Add(n) }

// Hold takes n bytes from b for memory its caller keeps outside a Reader (answers collected
// for a batch); ok is false, and nothing is taken, when b cannot cover n. release gives them
// back (once; later calls do nothing).
func (b *Budget) Hold(n int64) (release func(), ok bool) {
	if !b.take(n) {
		return noRelease, false
	}
	if n == 0 { // nothing to give back: the shared no-op, not a closure a call
		return noRelease, true
	}
	var once sync.Once
	return func() { once.Do(func() { b.give(n) }) }, true
}

// noRelease is the release of a hold or a read that took nothing from a Budget.
func noRelease() {}

// releaseOf gives back held bytes to b once (later calls do nothing); noRelease when held is 0.
func releaseOf(b *Budget, held int64) func() {
	if b == nil || held <= 0 {
		return noRelease
	}
	return func() {
		if held > 0 {
			b.give(held)
		}
		held = 0
	}
}

// freeBytes is what one reader may hold without drawing on a Budget.
const freeBytes = 64 << 10

// Reader reads events from a stream.
type Reader struct {
	r      *bufio.Reader
	limit  int
	line   []byte // the line being read, when it spans more than the bufio buffer
	budget *Budget
	held   int64 // taken from budget for the event last returned
}

// NewReader returns a reader that refuses events (and lines) larger than limit bytes
// (0 = 16 MiB).
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 {
		limit = 16 << 20
	}
	br := readBufs.Get().(*bufio.Reader)
	br.Reset(r)
	return &Reader{r: br, limit: limit}
}

// readBufSize is a Reader's read buffer: lines longer than it are gathered in Reader.line.
const readBufSize = 4 << 10

// readBufs holds the read buffers of closed Readers, so a stream relayed a call does not
// allocate (and clear) 4 KiB a call. Events never point into the buffer: Next copies what it
// returns (data into its own buffer, the other fields as strings).
var readBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}

// ErrClosed is returned by Next after Close.
var ErrClosed = errors.New("sse: reader closed")

// Close gives back what the last event took from the budget (as Release) and the read buffer
// to be reused; later calls do nothing, and Next returns ErrClosed. Events already returned stay
// valid. It does not close the underlying reader.
//
// # Notes
//
// Call it only once no other goroutine is in Next: the buffer goes to the next Reader made.
func (r *Reader) Close() {
	r.Release()
	if r.r == nil {
		return
	}
	r.r.Reset(nil) // keep no reference to the stream
	readBufs.Put(r.r)
	r.r, r.line = nil, nil
}

// WithBudget makes r draw the bytes of each event over 64 KiB from b; an event b cannot cover
// fails with ErrBudget. What an event took is given back by the next call to Next or by
// Release. It returns r.
func (r *Reader) WithBudget(b *Budget) *Reader {
	r.budget = b
	return r
}

// Release gives back what the last event took from the budget (Next does it too).
func (r *Reader) Release() {
	if r.budget != nil && r.held > 0 {
		r.budget.give(r.held)
	}
	r.held = 0
}

// reserve makes sure the event being read may hold total bytes.
func (r *Reader) reserve(total int) error {
	if r.budget == nil {
		return nil
	}
	need := int64(total) - freeBytes
	if need <= r.held {
		return nil
	}
	// Take in 64 KiB steps so a growing event does not hit the shared counter per line.
	step := need - r.held
	if step < freeBytes {
		step = freeBytes
	}
	if !r.budget.take(step) {
		return ErrBudget
	}
	r.held += step
	return nil
}

// readLine returns the next line without its line ending, refusing it (ErrTooLarge) once it
// is longer than limit bytes, before it is buffered further. The returned slice is valid until
// the next call.
func (r *Reader) readLine(limit int) ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		if len(r.line)+len(frag) > limit+2 { // +2: the line ending is not content
			r.line = nil
			return nil, ErrTooLarge
		}
		if err == bufio.ErrBufferFull {
			if err := r.reserve(len(r.line) + len(frag)); err != nil {
				r.line = nil
				return nil, err
			}
			if need := len(r.line) + len(frag); need > cap(r.line) {
				// Double, but never past the limit: append's 1.25x growth would allocate
				// five times the line on the way to refusing it.
				n := min(max(2*cap(r.line), need, 8<<10), limit+2)
				r.line = append(make([]byte, 0, n), r.line...)
			}
			r.line = append(r.line, frag...)
			continue
		}
		line := frag
		if len(r.line) > 0 {
			r.line = append(r.line, frag...)
			line = r.line
		}
		if err != nil && len(line) == 0 {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > limit {
			return nil, ErrTooLarge
		}
		return line, err
	}
}

// Next returns the next event. It returns io.EOF at the end of the stream; an event cut off by
// the end of the stream is returned if it had any field, then io.EOF. Comment lines (keepalives)
// do not count towards the event's size, but each line is bounded by the limit.
func (r *Reader) Next() (_ *Event, err error) {
	r.Release()
	if r.r == nil {
		return nil, ErrClosed
	}
	defer func() {
		if cap(r.line) > freeBytes {
			r.line = nil // keep no big line buffer between events
		}
		if err != nil {
			r.Release() // what a refused or unfinished event took
		}
	}()
	var ev Event // moved to the heap only when an event is returned (done), not at the stream's end
	var data bytes.Buffer
	seen := false
	size := 0
	done := func() (*Event, error) {
		out := new(Event)
		*out = ev
		out.Data = data.Bytes()
		return out, nil
	}
	for {
		line, err := r.readLine(r.limit - size)
		if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrBudget) {
			return nil, err
		}
		if err != nil && len(line) == 0 {
			if seen {
				return done()
			}
			return nil, err
		}
		if len(line) == 0 {
			if !seen {
				continue
			}
			return done()
		}
		if line[0] == ':' { // comment
			if err != nil {
				if seen {
					return done()
				}
				return nil, err
			}
			continue
		}
		size += len(line) + 1
		if size > r.limit {
			return nil, ErrTooLarge
		}
		if err := r.reserve(size); err != nil {
			return nil, err
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		seen = true
		switch string(field) {
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
		case "event":
			ev.Name = string(value)
		case "id":
			ev.ID = string(value)
		case "retry":
			ev.Retry = string(value)
		}
		if err != nil {
			return done()
		}
	}
}

// Write encodes ev to w: the id, event and retry lines where set, a data line for each line of
// Data, and the blank line that ends the event, in one Write of a buffer made once at its size.
func Write(w io.Writer, ev *Event) error {
	n := 1 + len(ev.Data) + (1+bytes.Count(ev.Data, nl))*len("data: \n")
	for _, f := range [...]string{ev.ID, ev.Name, ev.Retry} {
		n += len("retry: \n") + len(f)
	}
	b := make([]byte, 0, n)
	b = appendField(b, "id: ", ev.ID)
	b = appendField(b, "event: ", ev.Name)
	b = appendField(b, "retry: ", ev.Retry)
	data := ev.Data
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		b = append(append(append(b, "data: "...), data[:i]...), '\n')
		data = data[i+1:]
	}
	b = append(append(append(b, "data: "...), data...), '\n', '\n')
	_, err := w.Write(b)
	return err
}

var nl = []byte("\n")

// appendField appends the line "name value" when value is set.
func appendField(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	return append(append(append(b, name...), value...), '\n')
}

// ReadAll reads r to its end, holding at most limit bytes, and draws what it holds past the
// 64 KiB free allowance from b before reading it: a whole JSON body or answer counts in the
// same budget as the events being read. size is the length r announces (Content-Length), or
// -1 when unknown; a size over limit fails with ErrTooLarge before anything is read. It fails
// with ErrTooLarge once r holds more than limit bytes, and with ErrBudget when b cannot cover
// what is read. release gives back what the bytes took; call it once the bytes are no longer
// needed (it is non-nil, and a no-op after an error). A nil b counts nothing.
func (b *Budget) ReadAll(r io.Reader, size, limit int64) (_ []byte, release func(), err error) {
	var held int64 // drawn from b so far; given back here on an error, by release otherwise
	fail := func(err error) ([]byte, func(), error) {
		if b != nil && held > 0 {
			b.give(held)
		}
		return nil, noRelease, err
	}
	// grow makes the buffer's capacity n, drawing it from the budget first.
	grow := func(buf []byte, n int64) ([]byte, error) {
		if b != nil {
			if need := n - freeBytes - held; need > 0 {
				if !b.take(need) {
					return nil, ErrBudget
				}
				held += need
			}
		}
		return append(make([]byte, 0, n), buf...), nil
	}
	if size > limit {
		return fail(ErrTooLarge)
	}
	n := int64(8 << 10)
	if size >= 0 {
		n = size + 1 // +1: the read that sees the end
	}
	buf, err := grow(nil, min(n, limit+1))
	if err != nil {
		return fail(err)
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return fail(ErrTooLarge)
			}
			if buf, err = grow(buf, min(2*int64(cap(buf)), limit+1)); err != nil {
				return fail(err)
			}
		}
		m, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > limit {
			return fail(ErrTooLarge)
		}
		if rerr == io.EOF {
			return buf, releaseOf(b, held), nil
		}
		if rerr != nil {
			return fail(rerr)
		}
	}
}
