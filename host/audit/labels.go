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
	read, truncated := 0, false
	err = each(cons, func(m jetstream.Msg, md *jetstream.MsgMetadata) bool {
		read++
		s := scanned{seq: md.Sequence.Stream, hdr: m.Headers(), raw: m.Data()}
		if json.Unmarshal(m.Data(), &s.ev.Event) == nil && s.ev.Kind == KindLabel && s.ev.Label != nil &&
			(ref == "" || s.ev.Label.Ref == ref) {
			h.verify(ctx, &s)
			if s.ev.Verified {
				out = append(out, s.ev)
			}
		}
		if read >= h.o.MaxScan && md.NumPending > 0 {
			truncated = true
			return false
		}
		return true
	})
	if err != nil {
		return nil, false, fmt.Errorf("audit: labels: %w", err)
	}
	return out, truncated, nil
}
