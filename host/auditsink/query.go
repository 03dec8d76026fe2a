package auditsink

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/added060/palisade/host/audit"
)

// GroupFields are the fields Query.By may group by, each with its column.
var GroupFields = map[string]string{
	"action":    "action",
	"rule":      "rule",
	"tool":      "tool",
	"server":    "server",
	"principal": "coalesce(principal_subject, principal_client_id)",
	"client":    "principal_client_id",
	"issuer":    "principal_issuer",
	"agent":     "agent",
	"gateway":   "gateway",
	"session":   "session",
	"kind":      "kind",
	"method":    "method",
	"stage":     "stage",
	"bundle":    "bundle_name",
	"risk":      "risk_level",
}

// Query selects events. Zero fields select everything; each list matches any of its values.
type Query struct {
	Since, Until time.Time // time range, [Since, Until); zero = open
	Action       []string  // final action: allow, deny, ask...
	Rule         []string
	Tool         []string
	Server       []string
	Principal    []string // the principal's subject or client id
	Kind         []string // "" = every kind but held (audit.KindHeld: not a decision)
	// Unverified includes events that failed verification (flagged); by default only verified
	// events are counted and listed.
	Unverified bool
	Limit      int // most rows; 0 = 100
}

// Row is one stored event, as `audit query` shows it.
type Row struct {
	AuditID       string    `json:"audit_id"`
	TraceID       string    `json:"trace_id"`
	Time          time.Time `json:"time"`
	Kind          string    `json:"kind"`
	Gateway       string    `json:"gateway,omitempty"`
	Method        string    `json:"method,omitempty"`
	Server        string    `json:"server,omitempty"`
	Tool          string    `json:"tool,omitempty"`
	Session       string    `json:"session,omitempty"`
	Action        string    `json:"action,omitempty"`
	Rule          string    `json:"rule,omitempty"`
	Stage         string    `json:"stage,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	Principal     string    `json:"principal,omitempty"`
	RiskScore     *float64  `json:"risk_score,omitempty"`
	RiskLevel     string    `json:"risk_level,omitempty"`
	ShadowAction  string    `json:"shadow_action,omitempty"`
	Approval      string    `json:"approval,omitempty"`
	DecisionID    string    `json:"decision_id,omitempty"`
	LatencyUS     int64     `json:"latency_us,omitempty"`
	Verified      bool      `json:"verified"`
	VerifyProblem string    `json:"verify_problem,omitempty"`
	StreamSeq     int64     `json:"stream_seq"` // the audit stream message it was read from
}

// Count is one group of Counts.
type Count struct {
	Value string `json:"value"` // "" for events without the field
	Count int64  `json:"count"`
}

const rowCols = `audit_id, trace_id, time, kind, coalesce(gateway,''), coalesce(method,''), coalesce(server,''), coalesce(tool,''),
coalesce(session,''), coalesce(action,''), coalesce(rule,''), coalesce(stage,''), coalesce(reason,''),
coalesce(principal_subject, principal_client_id, ''), risk_score, coalesce(risk_level,''), coalesce(shadow_action,''),
coalesce(approval_decision,''), coalesce(decision_id,''), coalesce(latency_us,0), verified, coalesce(verify_problem,''),
stream_seq`

func scanRows(rows pgx.Rows) ([]Row, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Row, error) {
		var x Row
		err := r.Scan(&x.AuditID, &x.TraceID, &x.Time, &x.Kind, &x.Gateway, &x.Method, &x.Server, &x.Tool, &x.Session,
			&x.Action, &x.Rule, &x.Stage, &x.Reason, &x.Principal, &x.RiskScore, &x.RiskLevel, &x.ShadowAction,
			&x.Approval, &x.DecisionID, &x.LatencyUS, &x.Verified, &x.VerifyProblem, &x.StreamSeq)
		x.Time = x.Time.UTC()
		return x, err
	})
}

// where builds q's WHERE clause and arguments.
func (q Query) where() (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if !q.Since.IsZero() {
		conds = append(conds, "time >= "+arg(q.Since))
	}
	if !q.Until.IsZero() {
		conds = append(conds, "time < "+arg(q.Until))
	}
	for _, f := range []struct {
		col  string
		vals []string
	}{{"action", q.Action}, {"rule", q.Rule}, {"tool", q.Tool}, {"server", q.Server}, {"kind", q.Kind}} {
		if len(f.vals) > 0 {
			conds = append(conds, f.col+" = ANY("+arg(f.vals)+")")
		}
	}
	if len(q.Principal) > 0 {
		a := arg(q.Principal)
		conds = append(conds, "(principal_subject = ANY("+a+") OR principal_client_id = ANY("+a+"))")
	}
	if len(q.Kind) == 0 {
		// A held record is not a decision: counted and listed only when Kind names it.
		conds = append(conds, "kind <> '"+audit.KindHeld+"'")
	}
	if !q.Unverified {
		conds = append(conds, "verified")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (q Query) limit() int {
	if q.Limit <= 0 {
		return 100
	}
	return q.Limit
}

// Events lists the events q selects, newest first.
func (s *Store) Events(ctx context.Context, q Query) ([]Row, error) {
	w, args := q.where()
	rows, err := s.db.Query(ctx, "SELECT "+rowCols+" FROM audit_events"+w+" ORDER BY time DESC, audit_id LIMIT "+strconv.Itoa(q.limit()), args...)
	if err != nil {
		return nil, fmt.Errorf("auditsink: query: %w", err)
	}
	out, err := scanRows(rows)
	if err != nil {
		return nil, fmt.Errorf("auditsink: query: %w", err)
	}
	return out, nil
}

// Counts counts the events q selects grouped by field (a key of GroupFields), largest first.
func (s *Store) Counts(ctx context.Context, q Query, field string) ([]Count, error) {
	col, ok := GroupFields[field]
	if !ok {
		return nil, fmt.Errorf("auditsink: group by %q: want one of %s", field, strings.Join(groupNames(), ", "))
	}
	w, args := q.where()
	rows, err := s.db.Query(ctx, "SELECT coalesce("+col+", '') AS v, count(*) AS n FROM audit_events"+w+
		" GROUP BY v ORDER BY n DESC, v LIMIT "+strconv.Itoa(q.limit()), args...)
	if err != nil {
		return nil, fmt.Errorf("auditsink: query: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Count, error) {
		var c Count
		return c, r.Scan(&c.Value, &c.Count)
	})
	if err != nil {
		return nil, fmt.Errorf("auditsink: query: %w", err)
	}
	return out, nil
}

// Story returns every event of one call in time order: the events of its trace (the call's
// decision and the approval events of a held call) found from id as an audit id, trace id or
// approval decision id, plus events naming id as their decision id; unverified ones included
// (flagged), since a forgery aimed at a call is part of its story. Only verified events lead
// from id to a trace.
func (s *Store) Story(ctx context.Context, id string) ([]Row, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT trace_id FROM audit_events
WHERE (audit_id = $1 AND verified) OR (decision_id = $1 AND verified)`, id)
	if err != nil {
		return nil, fmt.Errorf("auditsink: story %s: %w", id, err)
	}
	traces, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("auditsink: story %s: %w", id, err)
	}
	if !slices.Contains(traces, id) {
		traces = append(traces, id)
	}
	// Three branches, each on its own index, none repeating another's rows.
	rows, err = s.db.Query(ctx, `SELECT `+rowCols+` FROM audit_events WHERE trace_id = ANY($2)
UNION ALL SELECT `+rowCols+` FROM audit_events WHERE decision_id = $1 AND NOT trace_id = ANY($2)
UNION ALL SELECT `+rowCols+` FROM audit_events WHERE audit_id = $1 AND NOT verified AND NOT trace_id = ANY($2)
ORDER BY time, stream_seq`, id, traces)
	if err != nil {
		return nil, fmt.Errorf("auditsink: story %s: %w", id, err)
	}
	out, err := scanRows(rows)
	if err != nil {
		return nil, fmt.Errorf("auditsink: story %s: %w", id, err)
	}
	return out, nil
}

func groupNames() []string {
	names := make([]string, 0, len(GroupFields))
	for k := range GroupFields {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
