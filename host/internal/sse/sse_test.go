package sse

import (
	"bytes"
	"errors"
	"io"
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
