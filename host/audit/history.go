package audit

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// History is what the dashboard's history view asks of stored decisions (docs/DESIGN.md
// "History in the dashboard"). Two sources answer it: the audit stream itself (StreamHistory,
// stream_history.go) and the PostgreSQL sink (host/auditsink History); host/admin declares the
// interface and takes either.

// ErrHistoryNotFound is returned by a history source's Event when no stored decision has the id.
var ErrHistoryNotFound = errors.New("audit: no stored decision with that id")

// ErrHistoryCursor is returned by a history source's Search for a cursor it did not give.
var ErrHistoryCursor = errors.New("audit: bad history cursor")

// MaxHistoryLimit is the most events one history page holds.
const MaxHistoryLimit = 1000

// HistoryFields are the fields history charts group by (HistoryQuery fields of the same names).
var HistoryFields = []string{"action", "rule", "tool", "server", "principal"}

// HistoryQuery selects stored decisions. Zero fields select everything; each list matches any
// of its values exactly.
type HistoryQuery struct {
	From, To  time.Time // the event's time in [From, To); zero = open
	Action    []string  // final action: allow, deny...; "held" selects calls still held
	Rule      []string
	Tool      []string
	Server    []string
	Principal []string // the principal's subject or client id
	// Text matches, case-insensitively, a substring of the reason or the tool name.
	Text string
	// Limit is the most events in a page; 0 = 100, above MaxHistoryLimit = MaxHistoryLimit.
	Limit int
	// Cursor continues from a previous page's Next; "" = the newest events.
	Cursor string
	// Unverified includes events whose signature did not verify (flagged); by default they
	// are left out.
	Unverified bool
}

// PageLimit is q.Limit with its default and cap applied.
func (q HistoryQuery) PageLimit() int {
	switch {
	case q.Limit <= 0:
		return 100
	case q.Limit > MaxHistoryLimit:
		return MaxHistoryLimit
	}
	return q.Limit
}

// HistoryEvent is one stored event as the history shows it: a decision, or the held record of
// a call still waiting for a person (Held; its Approval.ID is the call's audit id).
type HistoryEvent struct {
	Event
	// Verified is true when the event's signature verified against a trusted signer.
	Verified bool `json:"verified"`
	// VerifyProblem says why it did not (a Problem* constant).
	VerifyProblem string `json:"verify_problem,omitempty"`
	// Held is set on a held record whose call has no final decision stored (yet).
	Held bool `json:"held,omitempty"`
}

// CallID is the audit id of the call the event belongs to: its own id for a decision, the held
// call's for a held record or an approval event, the labelled decision's for a label.
func (e *Event) CallID() string {
	if (e.Kind == KindHeld || e.Kind == KindApproval) && e.Approval != nil && e.Approval.ID != "" {
		return e.Approval.ID
	}
	if e.Kind == KindLabel && e.Label != nil && e.Label.Ref != "" {
		return e.Label.Ref
	}
	return e.ID
}

// HistoryPage is one page of a search, newest first.
type HistoryPage struct {
	Events []HistoryEvent `json:"events"`
	// Next continues with older events (HistoryQuery.Cursor); "" = none.
	Next string `json:"next,omitempty"`
	// Truncated says the source stopped at its scan bound: older matches may exist beyond
	// Next (the stream source; docs/DESIGN.md).
	Truncated bool `json:"truncated,omitempty"`
	// Source names where the page came from: "jetstream" or "postgres".
	Source string `json:"source"`
}

// HistoryDetail is one call's story: its decision (or its held record while it waits) and the
// events that name it (its held record, approval events).
type HistoryDetail struct {
	Event   HistoryEvent   `json:"event"`
	Related []HistoryEvent `json:"related,omitempty"`
	Source  string         `json:"source"`
}

// HistoryBucket is one time bucket of a chart: counts per value of the grouped field.
type HistoryBucket struct {
	Start  time.Time        `json:"start"`
	Counts map[string]int64 `json:"counts"`
}

// HistoryChart counts the decisions a query selects per time bucket, grouped by one field.
type HistoryChart struct {
	By        string          `json:"by"`
	BucketS   int64           `json:"bucket_s"` // bucket width, seconds
	Buckets   []HistoryBucket `json:"buckets"`  // oldest first; empty buckets left out
	Truncated bool            `json:"truncated,omitempty"`
	Source    string          `json:"source"`
}

// HistoryGroup is ev's value of a chart field (one of HistoryFields); a held call counts
// under action "held".
func HistoryGroup(ev *HistoryEvent, by string) string {
	switch by {
	case "action":
		if ev.Held {
			return ActionHeld
		}
		return ev.Action
	case "rule":
		return ev.Rule
	case "tool":
		return ev.Tool
	case "server":
		return ev.Server
	case "principal":
		return principalName(&ev.Event)
	}
	return ""
}

// ActionHeld is the action the history gives a call still held for a person.
const ActionHeld = "held"

func principalName(e *Event) string {
	if e.Principal == nil {
		return ""
	}
	if e.Principal.Subject != "" {
		return e.Principal.Subject
	}
	return e.Principal.ClientID
}

// Match reports whether ev passes every filter of q (the time range included). A held record
// matches as action "held".
func (q HistoryQuery) Match(ev *HistoryEvent) bool {
	if !q.From.IsZero() && ev.Time.Before(q.From) {
		return false
	}
	if !q.To.IsZero() && !ev.Time.Before(q.To) {
		return false
	}
	if !q.Unverified && !ev.Verified {
		return false
	}
	action := ev.Action
	if ev.Kind == KindHeld {
		action = ActionHeld
	}
	if !anyOf(q.Action, action) || !anyOf(q.Rule, ev.Rule) || !anyOf(q.Tool, ev.Tool) || !anyOf(q.Server, ev.Server) {
		return false
	}
	if len(q.Principal) > 0 && (ev.Principal == nil ||
		!(slices.Contains(q.Principal, ev.Principal.Subject) || slices.Contains(q.Principal, ev.Principal.ClientID))) {
		return false
	}
	if q.Text != "" {
		t := strings.ToLower(q.Text)
		if !strings.Contains(strings.ToLower(ev.Reason), t) && !strings.Contains(strings.ToLower(ev.Tool), t) {
			return false
		}
	}
	return true
}

func anyOf(want []string, v string) bool { return len(want) == 0 || slices.Contains(want, v) }

// BucketStart is the start of the bucket of width w that t falls in, counted from origin.
func BucketStart(t, origin time.Time, w time.Duration) time.Time {
	if w <= 0 {
		return origin
	}
	d := t.Sub(origin)
	n := d / w
	if d < 0 && d%w != 0 {
		n--
	}
	return origin.Add(n * w).UTC()
}
