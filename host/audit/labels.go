package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// labelSubjects are where label events are published (Event.Subject).
var labelSubjects = []string{SubjectPrefix + ".label.>"}

// Labels returns the label events stored at or after from (zero = the whole stream), of the
// decision ref only when ref is set, oldest first: at most MaxScan of them (truncated says more
// were left). Only events whose signature verified are returned: a label decides what
// `palisade tune` proposes, and one nobody trusted signed must not.
func (h *StreamHistory) Labels(ctx context.Context, from time.Time, ref string) ([]HistoryEvent, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	js, err := h.js()
	if err != nil {
		return nil, false, err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: labelSubjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	if !from.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &from
	}
	cons, err := js.OrderedConsumer(ctx, h.o.Stream, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("audit: labels: %w", err)
	}
	var out []HistoryEvent
	if cons.CachedInfo().NumPending == 0 {
		return out, false, nil
	}
	read := 0
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, false, fmt.Errorf("audit: labels: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			read++
			md, err := m.Metadata()
			if err != nil {
				return nil, false, err
			}
			s := scanned{seq: md.Sequence.Stream, hdr: m.Headers(), raw: m.Data()}
			if json.Unmarshal(m.Data(), &s.ev.Event) == nil && s.ev.Kind == KindLabel && s.ev.Label != nil &&
				(ref == "" || s.ev.Label.Ref == ref) {
				h.verify(ctx, &s)
				if s.ev.Verified {
					out = append(out, s.ev)
				}
			}
			if md.NumPending == 0 {
				return out, false, nil
			}
			if read >= h.o.MaxScan {
				return out, true, nil
			}
		}
		if err := batch.Error(); err != nil {
			return nil, false, fmt.Errorf("audit: labels: %w", err)
		}
		if n == 0 {
			return out, false, nil
		}
	}
}
