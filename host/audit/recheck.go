package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A publish whose ack is lost (a disconnect, a timeout, a crash) may still have stored its
// events. The stream drops a retry with the same Nats-Msg-Id only within its de-duplication
// window (Options.Duplicates, 1 minute by default), which keeps one entry per event in the
// NATS server's memory for that long. A retry later than that is checked by the publisher
// instead: it reads the stream's headers for the span of time the unacked sends were made in,
// and does not send again the events it finds there (recheck). The span is kept on disk beside
// the spool (audit.spool.sent) whenever the events it covers are on disk, so a restart after a
// crash or a Close checks too.
const (
	// recheckSkew widens the span read on each side, for the difference between this host's
	// clock and the NATS server's, which stamps the stored messages.
	recheckSkew = time.Minute
	// recheckTimeout bounds one recheck.
	recheckTimeout = time.Minute
	spoolSentFile  = "audit.spool.sent"
)

// doubt is the span of time in which events were sent without an ack: a copy of any of them may
// be in the stream, stored by the server between from and to.
type doubt struct{ from, to time.Time }

func (d doubt) none() bool { return d.from.IsZero() }

// add widens d to cover [from, to].
func (d *doubt) add(from, to time.Time) {
	if d.none() || from.Before(d.from) {
		d.from = from
	}
	if to.After(d.to) {
		d.to = to
	}
}

// recheckDue says whether a send now could come after the stream forgot the ids of the sends
// in doubt: the last quarter of the window is left as a margin.
func (p *Publisher) recheckDue(now time.Time) bool {
	if p.doubt.none() || p.noRecheck.Load() {
		return false
	}
	w := time.Duration(p.window.Load())
	return now.Sub(p.doubt.from) >= w-w/4
}

// recheck reads the ids of the events the stream stored in the span in doubt (widened by
// recheckSkew, headers only) and marks the records of batch found there as stored: publish does
// not send them again, and counts them as published duplicates. Records not found are not
// stored: a copy the server stores after this read is younger than the window, which catches
// their resend. The doubt is cleared when the read reached its end.
func (p *Publisher) recheck(batch []record) error {
	p.rechecks.Add(1)
	want := make(map[string]int, len(batch))
	for i := range batch {
		if !batch[i].stored {
			want[batch[i].id] = i
		}
	}
	from, until := p.doubt.from.Add(-recheckSkew), p.doubt.to.Add(recheckSkew)
	ctx, cancel := context.WithTimeout(context.Background(), recheckTimeout)
	defer cancel()
	cons, err := p.js.OrderedConsumer(ctx, p.o.Stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &from, HeadersOnly: true,
	})
	if err != nil {
		return fmt.Errorf("audit: recheck: %w", err)
	}
	var found []int
	err = each(cons, func(m jetstream.Msg, md *jetstream.MsgMetadata) bool {
		if md.Timestamp.After(until) {
			return false
		}
		if i, ok := want[m.Headers().Get(HeaderMsgID)]; ok {
			found = append(found, i)
			delete(want, batch[i].id)
		}
		return len(want) > 0
	})
	if err != nil {
		return fmt.Errorf("audit: recheck: %w", err)
	}
	for _, i := range found {
		batch[i].stored = true
	}
	p.duplicates.Add(int64(len(found)))
	p.log.Info("audit recheck after the de-duplication window", "in_doubt_since", p.doubt.from,
		"events", len(batch), "already_stored", len(found))
	p.doubt = doubt{}
	return nil
}

// markSending records that batch is about to be sent: the span in doubt grows to cover the
// send and its ack timeout, on disk too when the batch's records are in the spool.
func (p *Publisher) markSending(batch []record, now time.Time) {
	p.doubt.add(now, now.Add(p.o.PublishTimeout))
	if len(batch) == 0 || batch[0].end == 0 {
		return
	}
	p.mu.Lock()
	err := p.sp.writeSent(p.doubt)
	p.mu.Unlock()
	p.sentOnDisk = true
	if err != nil {
		p.log.Warn("audit spool: cannot save the send span; a restart may not recheck it", "err", err)
	}
}

// settle clears the doubt once every record sent has its ack.
func (p *Publisher) settle() {
	p.doubt = doubt{}
	if !p.sentOnDisk {
		return
	}
	p.sentOnDisk = false
	p.mu.Lock()
	err := p.sp.writeSent(doubt{})
	p.mu.Unlock()
	if err != nil {
		p.log.Warn("audit spool: cannot clear the send span", "err", err)
	}
}

// writeSent saves d (or, when d is none, its absence) as two 20-digit Unix nanosecond times in
// one pwrite, like the offset. Nothing is written while there is nothing to save or clear.
func (s *spool) writeSent(d doubt) error {
	if d.none() && s.sent.none() && s.sentErr == nil {
		return nil
	}
	if s.sentF == nil {
		f, err := os.OpenFile(filepath.Join(s.dir, spoolSentFile), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("audit: save spool send span: %w", err)
		}
		s.sentF = f
	}
	var from, to int64
	if !d.none() {
		from, to = d.from.UnixNano(), d.to.UnixNano()
	}
	if _, err := s.sentF.WriteAt(fmt.Appendf(nil, "%020d %020d\n", from, to), 0); err != nil {
		return fmt.Errorf("audit: save spool send span: %w", err)
	}
	s.sent, s.sentErr = d, nil
	return nil
}

// errSentCorrupt says audit.spool.sent holds something else than two times.
var errSentCorrupt = errors.New("audit: spool send span (audit.spool.sent) unreadable")

// readSent loads the span saved by writeSent: none when the file is missing or says none.
func (s *spool) readSent() (doubt, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, spoolSentFile))
	if errors.Is(err, os.ErrNotExist) {
		return doubt{}, nil
	}
	if err != nil {
		return doubt{}, fmt.Errorf("%w: %w", errSentCorrupt, err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return doubt{}, fmt.Errorf("%w: %q", errSentCorrupt, b)
	}
	from, err1 := strconv.ParseInt(f[0], 10, 64)
	to, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || from < 0 || to < from {
		return doubt{}, fmt.Errorf("%w: %q", errSentCorrupt, b)
	}
	if from == 0 {
		return doubt{}, nil
	}
	return doubt{from: time.Unix(0, from), to: time.Unix(0, to)}, nil
}

// firstTime is the time of the first event still to replay, or the zero time when there is
// none or it cannot be read: no copy of it was sent before it was recorded.
func (s *spool) firstTime() time.Time {
	recs, _, _, _, err := s.readAt(s.off, s.size, 1)
	if err != nil || len(recs) == 0 {
		return time.Time{}
	}
	var ev struct {
		Time time.Time `json:"time"`
	}
	if json.Unmarshal(recs[0].data, &ev) != nil {
		return time.Time{}
	}
	return ev.Time
}
