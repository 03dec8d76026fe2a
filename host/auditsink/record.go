package auditsink

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/added060/palisade/host/audit"
)

// Principal is who made the call, as the event names it (the event's optional "principal"
// object). Every field may be empty: events recorded before authentication carry none.
type Principal struct {
	Issuer   string `json:"issuer,omitempty"`
	Subject  string `json:"subject,omitempty"`
	ClientID string `json:"client_id,omitempty"`
}

// wireEvent is an event as read from the stream: audit.Event plus the fields the sink reads
// that audit.Event does not declare (yet).
type wireEvent struct {
	audit.Event
	Principal json.RawMessage `json:"principal,omitempty"`
}

// shadow is what observe mode recorded in detail.observed / detail.observed_response: what the
// bundle would have done had it enforced.
type shadow struct {
	Action string `json:"action"`
	Rule   string `json:"rule"`
	Stage  string `json:"stage"`
}

// record is one row of audit_events (or, with reject set, of audit_rejects).
type record struct {
	seq     uint64
	subject string
	raw     []byte
	ev      wireEvent
	p       Principal
	problem string // "" = verified; else an audit.Problem* constant
	signer  string
	reject  string // not an event at all: why
	headers map[string][]string
}

var errNoID = errors.New("event has no id")

// parse decodes raw into r.ev; an error means the message is not an event.
func (r *record) parse() error {
	if err := json.Unmarshal(r.raw, &r.ev); err != nil {
		return fmt.Errorf("not an audit event: %w", err)
	}
	if r.ev.ID == "" {
		return errNoID
	}
	if r.ev.Time.IsZero() {
		return errors.New("event has no time")
	}
	if r.ev.Kind == "" {
		r.ev.Kind = audit.KindDecision
	}
	if len(r.ev.Principal) > 0 && string(r.ev.Principal) != "null" {
		if err := json.Unmarshal(r.ev.Principal, &r.p); err != nil {
			r.ev.Principal = nil // kept in event; the columns stay empty
		}
	} else {
		r.ev.Principal = nil
	}
	return nil
}

// traceID is the call the event belongs to: the decision's own id, or for an approval event
// or a held record the held call's id.
func (r *record) traceID() string {
	return r.ev.CallID()
}

// risk is the highest stage score and its level: nil when no stage scored.
func (r *record) risk() (score *float64, level *string) {
	found := false
	var m float64
	for _, s := range r.ev.Stages {
		if s.Score != 0 && (!found || s.Score > m) {
			m, found = s.Score, true
		}
	}
	if !found {
		return nil, nil
	}
	l := RiskLevel(m)
	return &m, &l
}

// RiskLevel names a risk score: low below 0.5, medium below 0.8, high from 0.8.
func RiskLevel(score float64) string {
	switch {
	case score >= 0.8:
		return "high"
	case score >= 0.5:
		return "medium"
	}
	return "low"
}

// shadowOf reads the shadow bundle's verdict (audit.Event.Shadow) when one judged the call,
// else what observe mode would have done (request first, then response).
func (r *record) shadowOf() *shadow {
	if s := r.ev.Shadow; s != nil && s.Action != "" {
		return &shadow{Action: s.Action, Rule: s.Rule, Stage: s.Stage}
	}
	if len(r.ev.Detail) == 0 {
		return nil
	}
	var d struct {
		Observed         *shadow `json:"observed"`
		ObservedResponse *shadow `json:"observed_response"`
	}
	if json.Unmarshal(r.ev.Detail, &d) != nil {
		return nil
	}
	if d.Observed != nil {
		return d.Observed
	}
	return d.ObservedResponse
}

func (r *record) dataSHA256() string {
	s := sha256.Sum256(r.raw)
	return hex.EncodeToString(s[:])
}

// columns are audit_events' columns in the order values() returns them.
var columns = []string{
	"audit_id", "trace_id", "time", "kind", "gateway", "transport", "method", "server", "tool", "session", "agent",
	"request_id", "action", "requested_action", "reason", "rule", "stage", "risk_score", "risk_level",
	"shadow_action", "shadow_rule", "shadow_stage", "latency_us", "upstream_status", "upstream_latency_us", "upstream_error",
	"bundle_name", "bundle_version", "bundle_digest", "arguments_sha256", "token_sha256",
	"principal_issuer", "principal_subject", "principal_client_id", "principal",
	"approval_id", "approval_decision", "approval_decided_by", "decision_id", "stages", "event",
	"verified", "verify_problem", "signer", "subject", "stream_seq", "otel_trace_id",
}

func values(r *record) []any {
	e := &r.ev.Event
	score, level := r.risk()
	var sh shadow
	if s := r.shadowOf(); s != nil {
		sh = *s
	}
	var upStatus, upLatency, upErr any
	if u := e.Upstream; u != nil {
		upStatus, upLatency, upErr = nz(int64(u.Status)), nz(u.LatencyUS), ns(u.Error)
	}
	var bName, bVersion, bDigest any
	if b := e.Bundle; b != nil {
		bName, bVersion, bDigest = ns(b.Name), ns(b.Version), ns(b.Digest)
	}
	var aID, aDecision, aBy, dID any
	if a := e.Approval; a != nil {
		aID, aDecision, aBy, dID = ns(a.ID), ns(a.Decision), ns(a.DecidedBy), ns(a.DecisionID)
	}
	var stages, principal any
	if len(e.Stages) > 0 {
		if b, err := json.Marshal(e.Stages); err == nil {
			stages = string(b)
		}
	}
	if len(r.ev.Principal) > 0 {
		principal = string(r.ev.Principal)
	}
	var reqID any
	if len(e.RequestID) > 0 {
		reqID = string(e.RequestID)
	}
	var problem any
	if r.problem != "" {
		problem = r.problem
	}
	return []any{
		e.ID, r.traceID(), e.Time, e.Kind, ns(e.Gateway), ns(e.Transport), ns(e.Method), ns(e.Server), ns(e.Tool), ns(e.Session), ns(e.Agent),
		reqID, ns(e.Action), ns(e.RequestedAction), ns(e.Reason), ns(e.Rule), ns(e.Stage), score, level,
		ns(sh.Action), ns(sh.Rule), ns(sh.Stage), nz(e.LatencyUS), upStatus, upLatency, upErr,
		bName, bVersion, bDigest, ns(e.ArgumentsSHA256), ns(e.TokenSHA256),
		ns(r.p.Issuer), ns(r.p.Subject), ns(r.p.ClientID), principal,
		aID, aDecision, aBy, dID, stages, string(r.raw),
		r.problem == "", problem, ns(r.signer), r.subject, int64(r.seq), ns(e.TraceID),
	}
}

// ns is s, or SQL NULL when empty.
func ns(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nz is n, or SQL NULL when zero.
func nz(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
