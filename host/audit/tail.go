package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TailOptions configures Tail.
type TailOptions struct {
	// Stream to read; "" = PALISADE_AUDIT.
	Stream string
	// JSON prints each event's raw JSON on its own line; otherwise one
	// human line: time, action (or kind), server/tool, stage, reason.
	JSON bool
	// Filter keeps events whose fields match every key=value given; the same
	// key repeated means any of its values. Values are path.Match globs,
	// case-insensitive. Keys: id kind gateway action requested_action server
	// tool stage rule agent session method transport bundle label.
	Filter []string
	// Subject narrows on the server side; "" = palisade.audit.>.
	Subject string
	// Since starts with events recorded at or after this time; zero = only
	// new events (unless Last is set).
	Since time.Time
	// Last first prints the last N matching events already in the stream
	// (from Since, if set; else from the start), then follows new ones.
	Last int
	// Count stops after printing this many events; 0 = until ctx ends.
	Count int
	// Verify checks each event's signature (see Signers): an unsigned event, a bad signature
	// or an untrusted signer is flagged, in human lines with a leading "FORGED(problem)" and in
	// JSON with a "forged" field holding the problem.
	Verify bool
	// Signers are the trusted keys; nil = the signers bucket (SignersBucket) plus TrustedKeys.
	Signers *Signers
	// TrustedKeys are signer public keys trusted besides the signers bucket.
	TrustedKeys []string
	// SignersBucket is the KV bucket of trusted keys; "" = PALISADE_AUDIT_SIGNERS.
	SignersBucket string
	// Signed (with JSON) writes each event as a SignedEvent line: its signature headers and the
	// stored bytes, so a reader of the file can check them (`palisade tune --events`).
	Signed bool
}

var tailKeys = map[string]func(*Event) []string{
	"id":               func(e *Event) []string { return []string{e.ID} },
	"kind":             func(e *Event) []string { return []string{e.Kind} },
	"gateway":          func(e *Event) []string { return []string{e.Gateway} },
	"action":           func(e *Event) []string { return []string{e.Action} },
	"requested_action": func(e *Event) []string { return []string{e.RequestedAction} },
	"server":           func(e *Event) []string { return []string{e.Server} },
	"tool":             func(e *Event) []string { return []string{e.Tool} },
	"stage":            func(e *Event) []string { return []string{e.Stage} },
	"rule":             func(e *Event) []string { return []string{e.Rule} },
	"agent":            func(e *Event) []string { return []string{e.Agent} },
	"session":          func(e *Event) []string { return []string{e.Session} },
	"method":           func(e *Event) []string { return []string{e.Method} },
	"transport":        func(e *Event) []string { return []string{e.Transport} },
	"bundle": func(e *Event) []string {
		if e.Bundle == nil {
			return []string{""}
		}
		return []string{e.Bundle.Name}
	},
	"label": func(e *Event) []string {
		var ls []string
		for _, s := range e.Stages {
			ls = append(ls, s.Labels...)
		}
		return ls
	},
}

// Matcher is a parsed TailOptions.Filter.
type Matcher map[string][]string

// ParseFilter parses key=value filters; an unknown key or a bad glob is an
// error naming it.
func ParseFilter(filters []string) (Matcher, error) {
	m := Matcher{}
	for _, f := range filters {
		k, v, ok := strings.Cut(f, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			return nil, fmt.Errorf("audit: filter %q: want key=value", f)
		}
		if _, known := tailKeys[k]; !known {
			return nil, fmt.Errorf("audit: filter %q: unknown key %q", f, k)
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if _, err := path.Match(v, ""); err != nil {
			return nil, fmt.Errorf("audit: filter %q: %w", f, err)
		}
		m[k] = append(m[k], v)
	}
	return m, nil
}

// Match reports whether ev passes every key (any of its values).
func (m Matcher) Match(ev *Event) bool {
	for k, pats := range m {
		if !anyMatch(pats, tailKeys[k](ev)) {
			return false
		}
	}
	return true
}

func anyMatch(pats, vals []string) bool {
	for _, p := range pats {
		for _, v := range vals {
			if ok, _ := path.Match(p, strings.ToLower(v)); ok {
				return true
			}
		}
	}
	return false
}

// FormatLine is the human form of an event, without a newline.
func FormatLine(ev *Event) string {
	var b strings.Builder
	b.WriteString(ev.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteByte(' ')
	switch ev.Kind {
	case KindDecision, "":
		fmt.Fprintf(&b, "%-6s %s/%s", orDash(ev.Action), orDash(ev.Server), orDash(ev.Tool))
		if ev.Stage != "" {
			b.WriteString(" stage=" + ev.Stage)
		}
		if ev.RequestedAction != "" && ev.RequestedAction != ev.Action {
			b.WriteString(" requested=" + ev.RequestedAction)
		}
		if ev.Rule != "" {
			b.WriteString(" rule=" + ev.Rule)
		}
	case KindHeld:
		fmt.Fprintf(&b, "%-6s %s/%s", "held", orDash(ev.Server), orDash(ev.Tool))
		if ev.Rule != "" {
			b.WriteString(" rule=" + ev.Rule)
		}
		b.WriteString(" call=" + ev.CallID())
	case KindApproval:
		b.WriteString("approval")
		if ev.Approval != nil {
			fmt.Fprintf(&b, " %s %s", ev.Approval.Decision, ev.Approval.ID)
			if ev.Approval.DecidedBy != "" {
				b.WriteString(" by=" + ev.Approval.DecidedBy)
			}
		}
		if ev.Tool != "" {
			fmt.Fprintf(&b, " %s/%s", orDash(ev.Server), ev.Tool)
		}
	default:
		b.WriteString(ev.Kind)
		if ev.Bundle != nil {
			fmt.Fprintf(&b, " %s@%s", ev.Bundle.Name, orDash(ev.Bundle.Version))
		}
		if ev.Tool != "" || ev.Server != "" {
			fmt.Fprintf(&b, " %s/%s", orDash(ev.Server), orDash(ev.Tool))
		}
	}
	if ev.Reason != "" {
		b.WriteString(" " + strconv.Quote(ev.Reason))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Tail follows the audit stream and writes one line per matching event to
// w until ctx ends (then it returns nil) or Count events were written. It
// uses an ordered consumer, which the client recreates after a reconnect.
func Tail(ctx context.Context, nc *nats.Conn, o TailOptions, w io.Writer) error {
	m, err := ParseFilter(o.Filter)
	if err != nil {
		return err
	}
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.Subject == "" {
		o.Subject = SubjectPrefix + ".>"
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("audit: tail: %w", err)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{o.Subject}, DeliverPolicy: jetstream.DeliverNewPolicy}
	switch {
	case !o.Since.IsZero():
		t := o.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	case o.Last > 0:
		cfg.DeliverPolicy = jetstream.DeliverAllPolicy
	}
	cons, err := js.OrderedConsumer(ctx, o.Stream, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("audit: tail stream %s: %w", o.Stream, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("audit: tail stream %s: %w", o.Stream, err)
	}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			it.Stop()
		case <-stopped:
			it.Stop()
		}
	}()

	signers := o.Signers
	if o.Verify && signers == nil {
		signers = NewSigners(ctx, nc, o.SignersBucket, o.TrustedKeys...)
	}
	written := 0
	emit := func(ev *Event, raw []byte, hdr nats.Header, problem string) error {
		var err error
		switch {
		case o.JSON && o.Signed:
			if b := hdr.Get(HeaderBatch); b != "" {
				_, err = fmt.Fprintf(w, "{\"signer\":%q,\"signature\":%q,\"batch\":%q,\"event\":%s}\n", hdr.Get(HeaderSigner), hdr.Get(HeaderSignature), b, raw)
			} else {
				_, err = fmt.Fprintf(w, "{\"signer\":%q,\"signature\":%q,\"event\":%s}\n", hdr.Get(HeaderSigner), hdr.Get(HeaderSignature), raw)
			}
		case o.JSON && problem != "":
			_, err = fmt.Fprintf(w, "{\"forged\":%q,%s\n", problem, bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("{")))
		case o.JSON:
			_, err = fmt.Fprintf(w, "%s\n", raw)
		case problem != "":
			_, err = fmt.Fprintf(w, "FORGED(%s) %s\n", problem, FormatLine(ev))
		default:
			_, err = fmt.Fprintln(w, FormatLine(ev))
		}
		if err != nil {
			return fmt.Errorf("audit: tail write: %w", err)
		}
		written++
		return nil
	}
	// With Last, hold the last N matches until the backlog is read.
	type held struct {
		ev      *Event
		raw     []byte
		hdr     nats.Header
		problem string
	}
	var ring []held
	catchingUp := o.Last > 0
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("audit: tail: %w", err)
		}
		var pending uint64
		if md, err := msg.Metadata(); err == nil {
			pending = md.NumPending
		}
		var ev Event
		raw := msg.Data()
		if err := json.Unmarshal(raw, &ev); err == nil && m.Match(&ev) {
			problem := ""
			if signers != nil {
				problem = signers.Verify(ctx, msg.Headers(), raw)
			}
			if catchingUp {
				ring = append(ring, held{&ev, raw, msg.Headers(), problem})
				if len(ring) > o.Last {
					ring = ring[1:]
				}
			} else if err := emit(&ev, raw, msg.Headers(), problem); err != nil {
				return err
			}
		}
		if catchingUp && pending == 0 {
			catchingUp = false
			for _, h := range ring {
				if o.Count > 0 && written >= o.Count {
					break
				}
				if err := emit(h.ev, h.raw, h.hdr, h.problem); err != nil {
					return err
				}
			}
			ring = nil
		}
		if o.Count > 0 && written >= o.Count {
			return nil
		}
	}
}

// ParseSince reads a --since value: a duration back from now ("10m",
// "24h") or an RFC 3339 time ("2026-11-22T10:00:00Z").
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("audit: since %q: negative duration", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("audit: since %q: want a duration (10m) or an RFC 3339 time", s)
	}
	return t, nil
}
