package auditsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/added060/palisade/host/audit"
)

// SourcePostgres names this source in history pages (audit.HistoryPage.Source).
const SourcePostgres = "postgres"

// History answers the dashboard's history questions (host/admin's HistorySource) from the
// sink's table: the stored decisions, and the held records of calls not decided yet.
type History struct {
	st *Store
}

// NewHistory returns a History reading st.
func NewHistory(st *Store) *History { return &History{st: st} }

// heldAction is the action column as the history sees it: a held record's is "held".
const heldAction = `CASE WHEN e.kind = 'held' THEN 'held' ELSE e.action END`

// historyGroups are the chart fields (audit.HistoryFields) and their columns.
var historyGroups = map[string]string{
	"action":    heldAction,
	"rule":      "e.rule",
	"tool":      "e.tool",
	"server":    "e.server",
	"principal": "coalesce(e.principal_subject, e.principal_client_id)",
}

// historyWhere builds the WHERE clause of q, without its cursor: decisions, and held records
// whose call has no verified decision stored.
func historyWhere(q audit.HistoryQuery) (string, []any) {
	conds := []string{`(e.kind = 'decision' OR (e.kind = 'held' AND NOT EXISTS (SELECT 1 FROM audit_events d
WHERE d.audit_id = e.trace_id AND d.kind = 'decision' AND d.verified)))`}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if !q.From.IsZero() {
		conds = append(conds, "e.time >= "+arg(q.From))
	}
	if !q.To.IsZero() {
		conds = append(conds, "e.time < "+arg(q.To))
	}
	for _, f := range []struct {
		col  string
		vals []string
	}{{heldAction, q.Action}, {"e.rule", q.Rule}, {"e.tool", q.Tool}, {"e.server", q.Server}} {
		if len(f.vals) > 0 {
			conds = append(conds, f.col+" = ANY("+arg(f.vals)+")")
		}
	}
	if len(q.Principal) > 0 {
		a := arg(q.Principal)
		conds = append(conds, "(e.principal_subject = ANY("+a+") OR e.principal_client_id = ANY("+a+"))")
	}
	if q.Text != "" {
		a := arg(strings.ToLower(q.Text))
		conds = append(conds, "(strpos(lower(coalesce(e.reason,'')), "+a+") > 0 OR strpos(lower(coalesce(e.tool,'')), "+a+") > 0)")
	}
	if !q.Unverified {
		conds = append(conds, "e.verified")
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const historyCols = `e.event, e.verified, coalesce(e.verify_problem, ''), e.kind = 'held', e.time, e.audit_id`

// Search returns a page of the events q selects, newest first; its cursor is the last event's
// time and audit id.
func (h *History) Search(ctx context.Context, q audit.HistoryQuery) (audit.HistoryPage, error) {
	page := audit.HistoryPage{Events: []audit.HistoryEvent{}, Source: SourcePostgres}
	w, args := historyWhere(q)
	if q.Cursor != "" {
		ts, id, ok := strings.Cut(q.Cursor, "|")
		t, err := time.Parse(time.RFC3339Nano, ts)
		if !ok || err != nil {
			return page, fmt.Errorf("auditsink: history: %w %q", audit.ErrHistoryCursor, q.Cursor)
		}
		args = append(args, t, id)
		w += " AND (e.time, e.audit_id) < ($" + strconv.Itoa(len(args)-1) + ", $" + strconv.Itoa(len(args)) + ")"
	}
	limit := q.PageLimit()
	rows, err := h.st.db.Query(ctx, "SELECT "+historyCols+" FROM audit_events e"+w+
		" ORDER BY e.time DESC, e.audit_id DESC LIMIT "+strconv.Itoa(limit+1), args...)
	if err != nil {
		return page, fmt.Errorf("auditsink: history: %w", err)
	}
	evs, err := collectHistory(rows)
	if err != nil {
		return page, fmt.Errorf("auditsink: history: %w", err)
	}
	if len(evs) > limit {
		evs = evs[:limit]
		last := evs[limit-1]
		page.Next = last.t.UTC().Format(time.RFC3339Nano) + "|" + last.id
	}
	for _, e := range evs {
		page.Events = append(page.Events, e.ev)
	}
	return page, nil
}

// historyRow is one scanned row with the keys its cursor needs.
type historyRow struct {
	ev audit.HistoryEvent
	t  time.Time
	id string
}

func collectHistory(rows pgx.Rows) ([]historyRow, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (historyRow, error) {
		var (
			x   historyRow
			raw []byte
		)
		if err := r.Scan(&raw, &x.ev.Verified, &x.ev.VerifyProblem, &x.ev.Held, &x.t, &x.id); err != nil {
			return x, err
		}
		if err := json.Unmarshal(raw, &x.ev.Event); err != nil {
			return x, fmt.Errorf("event %s: %w", x.id, err)
		}
		return x, nil
	})
}

// Event returns the call with audit id: its decision (the trusted one when a forgery used the
// same id), or while it waits its held record, and the events stored under its trace (its held
// record, approval events).
func (h *History) Event(ctx context.Context, id string) (audit.HistoryDetail, error) {
	d := audit.HistoryDetail{Source: SourcePostgres}
	// The trusted row, else the first forgery under that id: each on its own partial index.
	var found []historyRow
	for _, verified := range []string{"e.verified", "NOT e.verified"} {
		rows, err := h.st.db.Query(ctx, "SELECT "+historyCols+` FROM audit_events e
WHERE e.audit_id = $1 AND `+verified+` AND e.kind NOT IN ('held', 'approval') ORDER BY e.stream_seq LIMIT 1`, id)
		if err != nil {
			return d, fmt.Errorf("auditsink: history %s: %w", id, err)
		}
		if found, err = collectHistory(rows); err != nil {
			return d, fmt.Errorf("auditsink: history %s: %w", id, err)
		}
		if len(found) > 0 {
			break
		}
	}
	rows, err := h.st.db.Query(ctx, "SELECT "+historyCols+` FROM audit_events e
WHERE e.trace_id = $1 AND e.audit_id <> $1 ORDER BY e.time, e.stream_seq`, id)
	if err != nil {
		return d, fmt.Errorf("auditsink: history %s: %w", id, err)
	}
	related, err := collectHistory(rows)
	if err != nil {
		return d, fmt.Errorf("auditsink: history %s: %w", id, err)
	}
	for _, r := range related {
		r.ev.Held = false
		d.Related = append(d.Related, r.ev)
	}
	switch {
	case len(found) > 0:
		d.Event = found[0].ev
	default:
		i := slices.IndexFunc(d.Related, func(e audit.HistoryEvent) bool { return e.Kind == audit.KindHeld })
		if i < 0 {
			return d, audit.ErrHistoryNotFound
		}
		d.Event = d.Related[i]
		d.Event.Held = true
		d.Related = slices.Delete(d.Related, i, i+1)
	}
	return d, nil
}

// Chart counts the events q selects (its Cursor and Limit ignored) per bucket of width bucket
// counted from q.From (zero = the Unix epoch), grouped by field by (audit.HistoryFields).
func (h *History) Chart(ctx context.Context, q audit.HistoryQuery, by string, bucket time.Duration) (audit.HistoryChart, error) {
	c := audit.HistoryChart{By: by, BucketS: int64(bucket / time.Second), Buckets: []audit.HistoryBucket{}, Source: SourcePostgres}
	col, ok := historyGroups[by]
	if !ok {
		return c, fmt.Errorf("auditsink: history: group by %q: want one of %v", by, audit.HistoryFields)
	}
	if bucket < time.Second {
		return c, errors.New("auditsink: history: bucket under a second")
	}
	origin := q.From
	if origin.IsZero() {
		origin = time.Unix(0, 0)
	}
	w, args := historyWhere(q)
	args = append(args, bucket.Seconds(), origin)
	n := len(args)
	rows, err := h.st.db.Query(ctx, "SELECT date_bin(make_interval(secs => $"+strconv.Itoa(n-1)+"), e.time, $"+strconv.Itoa(n)+
		") AS b, coalesce("+col+", '') AS k, count(*) FROM audit_events e"+w+" GROUP BY 1, 2 ORDER BY 1", args...)
	if err != nil {
		return c, fmt.Errorf("auditsink: history chart: %w", err)
	}
	var (
		start time.Time
		key   string
		count int64
	)
	_, err = pgx.ForEachRow(rows, []any{&start, &key, &count}, func() error {
		start = start.UTC()
		if len(c.Buckets) == 0 || !c.Buckets[len(c.Buckets)-1].Start.Equal(start) {
			c.Buckets = append(c.Buckets, audit.HistoryBucket{Start: start, Counts: map[string]int64{}})
		}
		c.Buckets[len(c.Buckets)-1].Counts[key] = count
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("auditsink: history chart: %w", err)
	}
	return c, nil
}

// Labels returns the label events stored at or after from (zero = all), of the decision ref
// only when ref is set, oldest first: at most audit.MaxHistoryLimit × 50 (truncated says more
// were left). Only rows whose signature verified: a label decides what `palisade tune`
// proposes.
func (h *History) Labels(ctx context.Context, from time.Time, ref string) ([]audit.HistoryEvent, bool, error) {
	const max = audit.MaxHistoryLimit * 50
	args := []any{from}
	cond := ""
	if ref != "" {
		args = append(args, ref)
		cond = " AND e.trace_id = $2"
	}
	rows, err := h.st.db.Query(ctx, "SELECT "+historyCols+` FROM audit_events e
WHERE e.kind = 'label' AND e.verified AND e.time >= $1`+cond+` ORDER BY e.time, e.stream_seq LIMIT `+strconv.Itoa(max+1), args...)
	if err != nil {
		return nil, false, fmt.Errorf("auditsink: labels: %w", err)
	}
	found, err := collectHistory(rows)
	if err != nil {
		return nil, false, fmt.Errorf("auditsink: labels: %w", err)
	}
	out := make([]audit.HistoryEvent, 0, len(found))
	for _, r := range found {
		out = append(out, r.ev)
	}
	if len(out) > max {
		return out[:max], true, nil
	}
	return out, false, nil
}
