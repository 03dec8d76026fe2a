package sse

import (
	"bytes"
	"fmt"
	"testing"
)

// writeRef is Write as it was before it built its buffer by hand (fmt and bytes.Split): the
// reference the hand-built encoding must match byte for byte.
func writeRef(ev *Event) []byte {
	var b bytes.Buffer
	if ev.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", ev.ID)
	}
	if ev.Name != "" {
		fmt.Fprintf(&b, "event: %s\n", ev.Name)
	}
	if ev.Retry != "" {
		fmt.Fprintf(&b, "retry: %s\n", ev.Retry)
	}
	for _, line := range bytes.Split(ev.Data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// countingWriter records each Write it gets.
type countingWriter struct {
	b      bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.b.Write(p)
}

func checkWrite(t *testing.T, ev *Event) {
	t.Helper()
	var w countingWriter
	if err := Write(&w, ev); err != nil {
		t.Fatal(err)
	}
	if want := writeRef(ev); !bytes.Equal(w.b.Bytes(), want) {
		t.Fatalf("Write(%+v) = %q, want %q", ev, w.b.Bytes(), want)
	}
	if w.writes != 1 {
		t.Fatalf("Write(%+v) made %d writes, want 1", ev, w.writes)
	}
}

func TestWriteMatchesReference(t *testing.T) {
	for _, ev := range []*Event{
		{},
		{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{ID: "7", Name: "message", Data: []byte("a")},
		{Name: "message", Retry: "1000", Data: []byte("one\ntwo\n\nthree")},
		{Data: []byte("\n")},
		{Data: []byte("\n\n")},
		{ID: "x", Data: []byte("trailing\n")},
		{Name: "e", Data: []byte("\r\nnot a line end for Split\r")},
	} {
		checkWrite(t, ev)
	}
}

func FuzzWrite(f *testing.F) {
	f.Add("1", "message", "", []byte("a\nb"))
	f.Add("", "", "5", []byte("\n"))
	f.Fuzz(func(t *testing.T, id, name, retry string, data []byte) {
		ev := &Event{ID: id, Name: name, Retry: retry, Data: data}
		var w countingWriter
		if err := Write(&w, ev); err != nil {
			t.Fatal(err)
		}
		if want := writeRef(ev); !bytes.Equal(w.b.Bytes(), want) {
			t.Fatalf("Write(%+v) = %q, want %q", ev, w.b.Bytes(), want)
		}
	})
}
