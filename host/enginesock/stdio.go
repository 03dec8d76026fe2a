package enginesock

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// A stdio session (POST /v1/stdio, upgraded to StdioProtocol) carries a thin `palisade proxy`'s
// two byte streams to the engine and back, in frames: one kind byte, a 4-byte big-endian length,
// the bytes. The thin proxy runs the MCP server as the agent's user and moves bytes; the engine
// judges every line (host/proxy.RelayStdio) and says what reaches the client and the server.
// Nothing passes between client and server except through the engine.
const (
	StdioProtocol = "palisade-stdio/1"
	StdioPath     = "/v1/stdio"
	// SelfProtocol (POST SelfPath, upgraded) is a thin `palisade mcp`'s session: the raw
	// newline-delimited JSON-RPC of Palisade's own MCP server, served by the engine.
	SelfProtocol = "palisade-self/1"
	SelfPath     = "/v1/self"

	// FrameClient: thin→engine, bytes from the MCP client; engine→thin, bytes for the client.
	FrameClient byte = 'c'
	// FrameServer: thin→engine, bytes the server wrote; engine→thin, bytes for its stdin.
	FrameServer byte = 's'
	// FrameClientEOF: thin→engine, the client closed its stdin.
	FrameClientEOF byte = 'C'
	// FrameServerEOF: thin→engine, the server's stdout ended.
	FrameServerEOF byte = 'S'
	// FrameCloseServer: engine→thin, close the server's stdin (the MCP stdio shutdown).
	FrameCloseServer byte = 'x'
)

// MaxFrame bounds one frame's bytes; writers split larger writes.
const MaxFrame = 1 << 20

// FrameWriter writes frames, one at a time.
type FrameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewFrameWriter returns a FrameWriter on w.
func NewFrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{w: w} }

// Write sends p as frames of kind (at most MaxFrame bytes each; an empty p sends one empty frame).
func (f *FrameWriter) Write(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for first := true; first || len(p) > 0; first = false {
		n := min(len(p), MaxFrame)
		var h [5]byte
		h[0] = kind
		binary.BigEndian.PutUint32(h[1:], uint32(n))
		if _, err := f.w.Write(h[:]); err != nil {
			return err
		}
		if _, err := f.w.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// Stream is an io.WriteCloser sending frames of one kind; Close sends closeKind (0 = nothing).
type Stream struct {
	F         *FrameWriter
	Kind      byte
	CloseKind byte
	once      sync.Once
}

func (s *Stream) Write(p []byte) (int, error) {
	if err := s.F.Write(s.Kind, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close sends CloseKind once.
func (s *Stream) Close() error {
	var err error
	s.once.Do(func() {
		if s.CloseKind != 0 {
			err = s.F.Write(s.CloseKind, nil)
		}
	})
	return err
}

// ReadFrame reads one frame.
func ReadFrame(r *bufio.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("enginesock: frame of %d bytes (limit %d)", n, MaxFrame)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, err
	}
	return h[0], p, nil
}

// Queue is an io.Reader fed by Push: each direction of a session reads from its own queue, so a
// client line waiting for a person does not hold up the server's lines behind it on the socket.
type Queue struct {
	ch   chan []byte
	cur  []byte
	once sync.Once
	err  error
	mu   sync.Mutex
}

// NewQueue returns a queue holding up to depth chunks before Push blocks.
func NewQueue(depth int) *Queue { return &Queue{ch: make(chan []byte, depth)} }

// Push adds p (the queue keeps it).
func (q *Queue) Push(p []byte) { q.ch <- p }

// Close ends the stream after what was pushed: err nil reads as io.EOF.
func (q *Queue) Close(err error) {
	q.once.Do(func() {
		q.mu.Lock()
		q.err = err
		q.mu.Unlock()
		close(q.ch)
	})
}

func (q *Queue) Read(p []byte) (int, error) {
	for len(q.cur) == 0 {
		c, ok := <-q.ch
		if !ok {
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.err != nil {
				return 0, q.err
			}
			return 0, io.EOF
		}
		q.cur = c
	}
	n := copy(p, q.cur)
	q.cur = q.cur[n:]
	return n, nil
}

// ErrSessionEnded is what a session's streams read when the connection ends before its EOF.
var ErrSessionEnded = errors.New("enginesock: the session ended")

// EngineSide demultiplexes a stdio session on the engine: what the client and the server wrote
// (clientIn, serverOut) and where to write what reaches them (clientOut, serverIn, whose Close
// asks the thin proxy to close the server's stdin). It reads r until the connection ends.
func EngineSide(r *bufio.Reader, w io.Writer) (clientIn, serverOut io.Reader, clientOut io.Writer, serverIn io.WriteCloser) {
	f := NewFrameWriter(w)
	cq, sq := NewQueue(64), NewQueue(64) // at most 64 frames (64 MiB) waiting per direction
	go func() {
		for {
			kind, p, err := ReadFrame(r)
			if err != nil {
				cq.Close(ErrSessionEnded)
				sq.Close(ErrSessionEnded)
				return
			}
			switch kind {
			case FrameClient:
				cq.Push(p)
			case FrameServer:
				sq.Push(p)
			case FrameClientEOF:
				cq.Close(nil)
			case FrameServerEOF:
				sq.Close(nil)
			}
		}
	}()
	return cq, sq, &Stream{F: f, Kind: FrameClient}, &Stream{F: f, Kind: FrameServer, CloseKind: FrameCloseServer}
}

// ThinSide runs a stdio session on the thin proxy: the client's stdin and the server's stdout
// go to the engine, and what the engine sends goes to the client's stdout and the server's
// stdin (closed on FrameCloseServer). It returns when the engine ends the session (nil) or the
// connection fails.
func ThinSide(r *bufio.Reader, w io.Writer, stdin io.Reader, stdout io.Writer, childIn io.WriteCloser, childOut io.Reader) error {
	f := NewFrameWriter(w)
	pump := func(src io.Reader, kind, eof byte) {
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if f.Write(kind, buf[:n]) != nil {
					return
				}
			}
			if err != nil {
				_ = f.Write(eof, nil)
				return
			}
		}
	}
	go pump(stdin, FrameClient, FrameClientEOF)
	go pump(childOut, FrameServer, FrameServerEOF)
	var closeChild sync.Once
	for {
		kind, p, err := ReadFrame(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch kind {
		case FrameClient:
			if _, err := stdout.Write(p); err != nil {
				return err
			}
		case FrameServer:
			_, _ = childIn.Write(p) // a server that stopped reading is the server's end
		case FrameCloseServer:
			closeChild.Do(func() { childIn.Close() })
		}
	}
}
