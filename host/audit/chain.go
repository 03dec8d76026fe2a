package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Link chains an event to the one its publisher recorded before it, so the history can be
// checked without trusting the bus (VerifyChain): a deleted, altered or reordered event breaks
// the chain. It is part of the event's JSON, so the event's signature covers it.
type Link struct {
	// Publisher names one Publisher's chain (a fresh id per Publisher; a restart starts a new
	// chain, and the spooled events of the old one keep theirs).
	Publisher string `json:"publisher"`
	// Seq counts this publisher's events from 1, in Record order.
	Seq uint64 `json:"seq"`
	// Prev is the hex sha256 of the previous event's JSON exactly as stored ("" for Seq 1).
	Prev string `json:"prev,omitempty"`
}

// chainer links a publisher's events; its methods run under Publisher.mu.
type chainer struct {
	id   string
	seq  uint64
	prev [sha256.Size]byte
}

// link returns data (an encoded event without a chain) with the next link spliced in first.
func (c *chainer) link(data []byte) []byte {
	c.seq++
	b := make([]byte, 0, len(data)+160)
	b = append(b, `{"chain":{"publisher":`...)
	b = strconv.AppendQuote(b, c.id)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, c.seq, 10)
	if c.seq > 1 {
		b = append(b, `,"prev":"`...)
		b = hex.AppendEncode(b, c.prev[:])
		b = append(b, '"')
	}
	b = append(b, '}')
	if len(data) > 2 {
		b = append(b, ',')
	}
	b = append(b, data[1:]...)
	c.prev = sha256.Sum256(b)
	return b
}

// Chain problems VerifyChain reports (ChainError.Problem).
const (
	ChainGap       = "gap"       // an event of a chain is missing (deleted)
	ChainRewrite   = "rewrite"   // an event differs from the one its successor was chained to
	ChainReorder   = "reorder"   // an event is stored before one its publisher recorded earlier
	ChainUnchained = "unchained" // an event carries no chain link (older than chaining, or forged)
)

// ErrChainBroken is what a ChainError wraps.
var ErrChainBroken = errors.New("audit: chain broken")

// ChainError names the first stored event at which the history is not what its publishers
// recorded.
type ChainError struct {
	Seq       uint64 // stream sequence of the first bad event
	Problem   string // ChainGap, ChainRewrite, ChainReorder, ChainUnchained
	Publisher string
	Detail    string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("audit: chain broken at stream sequence %d: %s (publisher %s): %s", e.Seq, e.Problem, e.Publisher, e.Detail)
}

// Unwrap makes errors.Is(err, ErrChainBroken) hold.
func (e *ChainError) Unwrap() error { return ErrChainBroken }

// ChainReport is what VerifyChain read.
type ChainReport struct {
	Events     int    // events read
	Publishers int    // chains seen
	FirstSeq   uint64 // the stream's first and last sequence when the check started
	LastSeq    uint64
}

// VerifyChain reads the audit stream from its first to its last stored event and checks every
// publisher's chain: sequence numbers follow one another, and each event's prev is the hash of
// the one before it. It returns a *ChainError (wrapping ErrChainBroken) naming the first bad
// stream sequence. Events unchained are an error unless allowUnchained (a stream older than
// chaining). A chain whose first event is missing is a gap only while the stream still holds
// its sequence 1 (limits never removed anything).
//
// # Notes
//
// The last events of a chain can be removed without a trace here: nothing follows them.
// Signatures (Tail's Verify) are what stop an attacker from writing a consistent new chain.
func VerifyChain(ctx context.Context, nc *nats.Conn, stream string, allowUnchained bool) (ChainReport, error) {
	if stream == "" {
		stream = DefaultStream
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return ChainReport{}, err
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return ChainReport{}, fmt.Errorf("audit: stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return ChainReport{}, fmt.Errorf("audit: stream %s: %w", stream, err)
	}
	rep := ChainReport{FirstSeq: info.State.FirstSeq, LastSeq: info.State.LastSeq}
	if info.State.Msgs == 0 {
		return rep, nil
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return rep, fmt.Errorf("audit: read %s: %w", stream, err)
	}
	type entry struct {
		seq  uint64 // stream sequence
		link Link
		hash [sha256.Size]byte
	}
	var all []entry
	seen := map[string]map[uint64]bool{}
	check := func() (ChainReport, error) {
		type state struct {
			seq, streamSeq uint64
			hash           [sha256.Size]byte
		}
		chains := map[string]*state{}
		for _, e := range all {
			l := e.link
			s := chains[l.Publisher]
			bad := func(at uint64, problem, detail string) (ChainReport, error) {
				return rep, &ChainError{Seq: at, Problem: problem, Publisher: l.Publisher, Detail: detail}
			}
			switch {
			case s == nil && l.Seq > 1 && rep.FirstSeq <= 1:
				if seen[l.Publisher][l.Seq-1] {
					return bad(e.seq, ChainReorder, fmt.Sprintf("its event %d is stored before its event %d", l.Seq, l.Seq-1))
				}
				return bad(e.seq, ChainGap, fmt.Sprintf("the chain starts at its event %d; events 1-%d are missing", l.Seq, l.Seq-1))
			case s == nil:
				rep.Publishers++
			case l.Seq <= s.seq:
				return bad(e.seq, ChainReorder, fmt.Sprintf("its event %d is stored after its event %d", l.Seq, s.seq))
			case l.Seq > s.seq+1:
				if seen[l.Publisher][s.seq+1] {
					return bad(e.seq, ChainReorder, fmt.Sprintf("its event %d is stored before its event %d", l.Seq, s.seq+1))
				}
				return bad(e.seq, ChainGap, fmt.Sprintf("its events %d-%d are missing", s.seq+1, l.Seq-1))
			case l.Prev != hex.EncodeToString(s.hash[:]):
				return bad(s.streamSeq, ChainRewrite, fmt.Sprintf("its event %d is not the one its event %d (stream sequence %d) was chained to", s.seq, l.Seq, e.seq))
			}
			chains[l.Publisher] = &state{seq: l.Seq, streamSeq: e.seq, hash: e.hash}
		}
		return rep, nil
	}
	for {
		msgs, err := cons.Fetch(256, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return rep, fmt.Errorf("audit: read %s: %w", stream, err)
		}
		n := 0
		for m := range msgs.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return rep, err
			}
			seq := md.Sequence.Stream
			if seq > rep.LastSeq {
				return check()
			}
			rep.Events++
			var ev struct {
				Chain *Link `json:"chain"`
			}
			if json.Unmarshal(m.Data(), &ev) != nil || ev.Chain == nil || ev.Chain.Publisher == "" || ev.Chain.Seq == 0 {
				if !allowUnchained {
					return rep, &ChainError{Seq: seq, Problem: ChainUnchained, Detail: "the event has no chain link"}
				}
			} else {
				all = append(all, entry{seq: seq, link: *ev.Chain, hash: sha256.Sum256(m.Data())})
				if seen[ev.Chain.Publisher] == nil {
					seen[ev.Chain.Publisher] = map[uint64]bool{}
				}
				seen[ev.Chain.Publisher][ev.Chain.Seq] = true
			}
			if seq == rep.LastSeq {
				return check()
			}
		}
		if err := msgs.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return rep, fmt.Errorf("audit: read %s: %w", stream, err)
		}
		if n == 0 {
			return rep, fmt.Errorf("audit: read %s: stopped at %d of %d events", stream, rep.Events, info.State.Msgs)
		}
	}
}
