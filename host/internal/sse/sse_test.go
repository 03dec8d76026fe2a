package sse

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader) []*Event {
	t.Helper()
	sr := NewReader(r, 1<<20)
	var out []*Event
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func TestReadEvents(t *testing.T) {
	in := ": comment\n\nid: 1\nevent: message\ndata: {\"a\":1}\n\ndata: line1\ndata: line2\r\n\r\nretry: 10\ndata: x"
	for name, r := range map[string]io.Reader{
		"whole":    bytes.NewReader([]byte(in)),
		"one byte": iotest.OneByteReader(bytes.NewReader([]byte(in))),
	} {
		t.Run(name, func(t *testing.T) {
			evs := readAll(t, r)
			if len(evs) != 3 {
				t.Fatalf("got %d events", len(evs))
			}
			if evs[0].ID != "1" || evs[0].Name != "message" || string(evs[0].Data) != `{"a":1}` {
				t.Errorf("event 0: %+v", evs[0])
			}
			if string(evs[1].Data) != "line1\nline2" {
				t.Errorf("event 1 data %q", evs[1].Data)
			}
			if evs[2].Retry != "10" || string(evs[2].Data) != "x" {
				t.Errorf("event 2 (cut off by EOF): %+v", evs[2])
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	ev := &Event{ID: "7", Name: "message", Data: []byte("a\nb")}
	var b bytes.Buffer
	if err := Write(&b, ev); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, &b)
	if len(got) != 1 || got[0].ID != "7" || string(got[0].Data) != "a\nb" {
		t.Fatalf("round trip: %+v", got)
	}
}

func TestLimit(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 100)
	r := NewReader(bytes.NewReader(append([]byte("data: "), big...)), 50)
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("data: x\n\n"))
	f.Add([]byte("id: 1\r\nevent: e\r\ndata: {}\r\n\r\n"))
	f.Add([]byte(":\n\n\n"))
	f.Add([]byte("data"))
	f.Add([]byte("data: " + strings.Repeat("z", 5000) + "\n\n"))
	f.Add([]byte(":" + strings.Repeat("k", 9000)))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), 4096)
		for i := 0; i < 10000; i++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			// Whatever was read must survive a write/read round trip.
			var b bytes.Buffer
			Write(&b, ev)
			again, err := NewReader(&b, 1<<20).Next()
			if err != nil || !bytes.Equal(again.Data, ev.Data) {
				t.Fatalf("round trip of %+v: %+v %v", ev, again, err)
			}
		}
	})
}

// endless is a stream that never ends a line: what a hostile upstream sends.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestEndlessLineIsRefusedBeforeBuffering(t *testing.T) {
	for _, prefix := range []string{"data: ", ": comment ", "id: ", ""} {
		t.Run(prefix, func(t *testing.T) {
			src := &endless{}
			const limit = 1 << 20
			r := NewReader(io.MultiReader(strings.NewReader(prefix), src), limit)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := r.Next()
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if src.n > limit+8<<10 {
				t.Errorf("read %d bytes of the endless line, limit %d", src.n, limit)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*limit {
				t.Errorf("allocated %d bytes for a line refused at %d", alloc, limit)
			}
		})
	}
}

func TestManyLinesOverLimit(t *testing.T) {
	in := strings.Repeat("data: 0123456789\n", 100) + "\n"
	if _, err := NewReader(strings.NewReader(in), 1000).Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	// Keepalive comments do not count towards an event.
	in = strings.Repeat(":\n", 5000) + "data: x\n\n"
	ev, err := NewReader(strings.NewReader(in), 1000).Next()
	if err != nil || string(ev.Data) != "x" {
		t.Fatalf("after keepalives: %+v %v", ev, err)
	}
}

func TestBudget(t *testing.T) {
	b := NewBudget(1 << 20)
	big := "data: " + strings.Repeat("y", 600<<10) + "\n\n"
	r1 := NewReader(strings.NewReader(big+big), 4<<20).WithBudget(b)
	r2 := NewReader(strings.NewReader(big), 4<<20).WithBudget(b)
	if _, err := r1.Next(); err != nil {
		t.Fatal(err)
	}
	if b.InUse() == 0 {
		t.Fatal("a 600 KiB event took nothing from the budget")
	}
	if _, err := r2.Next(); !errors.Is(err, ErrBudget) {
		t.Fatalf("second reader: err = %v, want ErrBudget while the first holds its event", err)
	}
	if b.InUse() > 1<<20 {
		t.Fatalf("in use %d over the budget", b.InUse())
	}
	if _, err := r1.Next(); err != nil { // gives back the first event, takes for the second
		t.Fatal(err)
	}
	r1.Release()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after Release", b.InUse())
	}
	small := NewReader(strings.NewReader("data: small\n\n"), 0).WithBudget(NewBudget(0))
	if ev, err := small.Next(); err != nil || string(ev.Data) != "small" {
		t.Fatalf("an event under the free allowance needs no budget: %+v %v", ev, err)
	}
}

// TestBudgetReadAll: whole bodies draw from the shared budget before they are read, are
// refused past the limit or the budget, and give back what they took on release.
func TestBudgetReadAll(t *testing.T) {
	const free = 64 << 10
	body := bytes.Repeat([]byte("z"), 1<<20)
	for _, tc := range []struct {
		name         string
		size, limit  int64
		budget       int64
		err          error
		holdsAtLeast int64
	}{
		{"known size within budget", int64(len(body)), 2 << 20, 2 << 20, nil, 1<<20 - free},
		{"unknown size within budget", -1, 2 << 20, 4 << 20, nil, 1<<20 - free},
		{"known size over limit, nothing read", int64(len(body)), 1 << 19, 8 << 20, ErrTooLarge, 0},
		{"unknown size over limit", -1, 1 << 19, 8 << 20, ErrTooLarge, 0},
		{"known size over budget", int64(len(body)), 2 << 20, 1 << 19, ErrBudget, 0},
		{"unknown size over budget", -1, 2 << 20, 1 << 19, ErrBudget, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(tc.budget)
			got, release, err := b.ReadAll(bytes.NewReader(body), tc.size, tc.limit)
			if !errors.Is(err, tc.err) {
				t.Fatalf("ReadAll: %v, want %v", err, tc.err)
			}
			if err == nil {
				if !bytes.Equal(got, body) {
					t.Fatalf("read %d bytes, want %d", len(got), len(body))
				}
				if b.InUse() < tc.holdsAtLeast || b.InUse() > tc.budget {
					t.Fatalf("holds %d bytes of the budget, want %d..%d", b.InUse(), tc.holdsAtLeast, tc.budget)
				}
			}
			release()
			release()
			if b.InUse() != 0 {
				t.Fatalf("after release: %d bytes still held", b.InUse())
			}
		})
	}
}

// TestBudgetReadAllShared: two bodies that each fit the budget but not together.
func TestBudgetReadAllShared(t *testing.T) {
	b := NewBudget(1 << 20)
	body := bytes.Repeat([]byte("z"), 700<<10)
	_, release, err := b.ReadAll(bytes.NewReader(body), int64(len(body)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.ReadAll(bytes.NewReader(body), int64(len(body)), 1<<20); !errors.Is(err, ErrBudget) {
		t.Fatalf("second body while the first is held: %v, want ErrBudget", err)
	}
	release()
	_, release, err = b.ReadAll(bytes.NewReader(body), -1, 1<<20)
	if err != nil {
		t.Fatalf("second body after the first was released: %v", err)
	}
	if _, ok := b.Hold(700 << 10); ok {
		t.Fatal("Hold past what is left succeeded")
	}
	release()
	hold, ok := b.Hold(700 << 10)
	if !ok {
		t.Fatal("Hold within the budget failed")
	}
	hold()
	hold()
	if b.InUse() != 0 {
		t.Fatalf("after release: %d bytes still held", b.InUse())
	}
}

// TestBudgetNothingTaken: a hold of 0 bytes and a body within the free allowance take nothing,
// so their release is the shared no-op (no closure a call) and calling it, once or twice, after
// other holds came and went gives nothing back that someone else took.
func TestBudgetNothingTaken(t *testing.T) {
	b := NewBudget(1 << 20)
	small := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	hold0, ok := b.Hold(0)
	if !ok {
		t.Fatal("Hold(0) failed on an unused budget")
	}
	_, readRelease, err := b.ReadAll(bytes.NewReader(small), int64(len(small)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	big, ok := b.Hold(512 << 10) // someone else's bytes, held across the releases below
	if !ok {
		t.Fatal("Hold within the budget failed")
	}
	hold0()
	readRelease()
	hold0()
	readRelease()
	if got := b.InUse(); got != 512<<10 {
		t.Fatalf("after releasing what took nothing: %d bytes in use, want %d", got, 512<<10)
	}
	big()
	big()
	if got := b.InUse(); got != 0 {
		t.Fatalf("after the real release (twice): %d bytes in use, want 0", got)
	}
	if n := testing.AllocsPerRun(100, func() {
		r, _ := b.Hold(0)
		r()
	}); n != 0 {
		t.Errorf("Hold(0) allocates %v times, want 0", n)
	}
	// A nil budget counts nothing, and its release is a no-op too.
	var nb *Budget
	if _, r, err := nb.ReadAll(bytes.NewReader(small), -1, 1<<20); err != nil {
		t.Fatal(err)
	} else {
		r()
	}
}

// TestCloseReusesBuffer: Close gives back the budget share and the read buffer; a reader made
// after reads only its own stream (nothing buffered by a closed reader leaks into it), events
// returned before Close keep their bytes while the buffer is reused, and a closed reader
// returns ErrClosed.
func TestCloseReusesBuffer(t *testing.T) {
	b := NewBudget(1 << 20)
	big := strings.Repeat("y", 100<<10)
	r1 := NewReader(strings.NewReader("id: 7\nevent: message\ndata: first\n\ndata: "+big+"\n\ndata: LEFTOVER\n\n"), 1<<20).WithBudget(b)
	first, err := r1.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Next(); err != nil { // over the free allowance: takes from the budget
		t.Fatal(err)
	}
	if b.InUse() == 0 {
		t.Fatal("a 100 KiB event took nothing from the budget")
	}
	r1.Close()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after Close", b.InUse())
	}
	if ev, err := r1.Next(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close = %+v, %v; want ErrClosed", ev, err)
	}
	r1.Close() // a second Close does nothing
	// The pool may drop a buffer (it does at random under -race): several rounds.
	for i := range 8 {
		in := strings.Repeat("id: 9\nevent: other\ndata: "+strings.Repeat("z", 1000)+"\n\n", 3)
		r := NewReader(strings.NewReader(in), 1<<20)
		n := 0
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.ID != "9" || ev.Name != "other" || len(ev.Data) != 1000 {
				t.Fatalf("round %d event %d: %q %q %d bytes, not this stream's", i, n, ev.ID, ev.Name, len(ev.Data))
			}
			n++
		}
		if n != 3 {
			t.Fatalf("round %d: %d events, want 3 (none left over from a closed reader)", i, n)
		}
		r.Close()
	}
	if first.ID != "7" || first.Name != "message" || string(first.Data) != "first" {
		t.Fatalf("event read before Close changed with the buffer reused: %+v", first)
	}
}

// BenchmarkReaderSmallStream is one short SSE answer read whole, as the proxy relays an
// upstream's answer a call.
func BenchmarkReaderSmallStream(b *testing.B) {
	in := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n")
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(in), 1<<20)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		r.Close()
	}
}
