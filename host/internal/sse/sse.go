// Package sse reads and writes Server-Sent Events as the MCP Streamable HTTP transport uses them:
// one event at a time, as it arrives, so a proxy can pass events through without buffering the
// whole stream.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Event is one server-sent event.
type Event struct {
	ID    string
	Name  string // the "event:" field; "" means message
	Data  []byte // data lines joined by \n
	Retry string
}

// ErrTooLarge is returned when one event exceeds the reader's limit.
var ErrTooLarge = errors.New("sse: event too large")

// Reader reads events from a stream.
type Reader struct {
	r     *bufio.Reader
	limit int
}

// NewReader returns a reader that refuses events larger than limit bytes (0 = 16 MiB).
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 {
		limit = 16 << 20
	}
	return &Reader{r: bufio.NewReaderSize(r, 4<<10), limit: limit}
}

// Next returns the next event. It returns io.EOF at the end of the stream; an event cut off by
// the end of the stream is returned if it had any field, then io.EOF.
func (r *Reader) Next() (*Event, error) {
	var ev Event
	var data bytes.Buffer
	seen := false
	size := 0
	for {
		line, err := r.r.ReadString('\n')
		size += len(line)
		if size > r.limit {
			return nil, ErrTooLarge
		}
		if err != nil && line == "" {
			if seen {
				ev.Data = data.Bytes()
				return &ev, nil
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !seen {
				if err != nil {
					return nil, err
				}
				continue
			}
			ev.Data = data.Bytes()
			return &ev, nil
		}
		if strings.HasPrefix(line, ":") { // comment
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		case "event":
			ev.Name = value
		case "id":
			ev.ID = value
		case "retry":
			ev.Retry = value
		}
		if err != nil {
			ev.Data = data.Bytes()
			return &ev, nil
		}
	}
}

// Write encodes ev to w.
func Write(w io.Writer, ev *Event) error {
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
	_, err := w.Write(b.Bytes())
	return err
}
