package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/added060/palisade/sdk/go/abi"
)

// Event kinds.
const (
	KindDecision        = "decision"
	KindBundleActivated = "bundle.activated"
	KindBundleRejected  = "bundle.rejected"
	KindApproval        = "approval"
	KindToolChanged     = "tool.changed"
	// KindBundleShadow: a shadow bundle was loaded beside the active one, or cleared
	// (detail.cleared); docs/DESIGN.md "Shadow bundle".
	KindBundleShadow = "bundle.shadow"
	// KindLabel: a person marked a decision as correct, a false positive or a false negative
	// (Event.Label); the event repeats the decision's call and verdicts, so the label is kept
	// with what it refers to (docs/DESIGN.md "Feedback that tunes").
	KindLabel = "label"
	// KindHeld: a call was held for a person. Recorded when it starts waiting, with the call's
	// fields and verdicts and Approval{ID: the call's audit id, Decision: "held"}; the call's
	// own decision event follows when it ends. It is not a decision: it has its own subject
	// (palisade.audit.held.<server>.<tool>) and counts nowhere a decision counts.
	KindHeld = "held"
)

// Label verdicts (Label.Verdict).
const (
	LabelCorrect       = "correct"
	LabelFalsePositive = "false_positive" // flagged (denied, asked), should have passed
	LabelFalseNegative = "false_negative" // passed, should have been stopped
)

// LabelVerdicts are the verdicts a label may give.
var LabelVerdicts = []string{LabelCorrect, LabelFalsePositive, LabelFalseNegative}

// Approval decisions (Approval.Decision), also the last subject token of an
// approval event.
const (
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalTimeout  = "timeout"
	// ApprovalForged: a decision or grant in the approvals bucket that no trusted approver
	// signed, or that was signed for other call content, replayed or expired; or a queue entry
	// that disagrees with the held call. It was ignored (subject palisade.audit.approval.forged).
	ApprovalForged = "forged"
	// ApprovalHeld is the Approval.Decision of a held record (KindHeld): nobody decided yet.
	ApprovalHeld = "held"
)

// SubjectPrefix is the first two tokens of every audit subject; the stream
// binds SubjectPrefix + ".>".
const SubjectPrefix = "palisade.audit"

// HeaderMsgID is the JetStream de-duplication header.
const HeaderMsgID = "Nats-Msg-Id"

// Event is one audit record. JSON names are the wire format described by
// sdk/schema/audit-event.schema.json; empty optional fields are omitted.
type Event struct {
	// Chain links the event to its publisher's previous one (set by Publisher.Record, which
	// replaces any value given; VerifyChain checks it).
	Chain   *Link     `json:"chain,omitempty"`
	ID      string    `json:"id"`                // NewID(); Record fills it when empty
	Time    time.Time `json:"time"`              // Record fills it when zero
	Kind    string    `json:"kind"`              // Kind*; Record fills "decision" when empty
	Gateway string    `json:"gateway,omitempty"` // gateway instance id
	Bundle  *Bundle   `json:"bundle,omitempty"`  // bundle that decided, or the one (de)activated

	Transport string          `json:"transport,omitempty"`  // http, sse, stdio, hook, mcp
	Method    string          `json:"method,omitempty"`     // JSON-RPC method, e.g. tools/call
	Server    string          `json:"server,omitempty"`     // upstream name
	Session   string          `json:"session,omitempty"`    // MCP session id
	Agent     string          `json:"agent,omitempty"`      // client/agent name
	Tool      string          `json:"tool,omitempty"`       // tool name
	RequestID json.RawMessage `json:"request_id,omitempty"` // JSON-RPC id, string or number as sent
	// TraceID is the W3C trace id (32 lower-case hex) of the OpenTelemetry trace the call's
	// span belongs to: the client's when it sent a traceparent; "" with tracing off.
	TraceID string `json:"trace_id,omitempty"`

	// Principal is who called: the identity the gateway verified (an OAuth access token on
	// HTTP, host/authn) or the OS user in the local modes; the same value the envelope's
	// principal carries. Nil when the endpoint took an unauthenticated call. The token itself
	// is never recorded.
	Principal *abi.Principal `json:"principal,omitempty"`

	ArgumentsSHA256 string          `json:"arguments_sha256,omitempty"` // hex sha256 of the raw arguments
	Arguments       json.RawMessage `json:"arguments,omitempty"`        // only when policy allows, redacted

	Action          string            `json:"action,omitempty"`           // final: allow, deny, ask, sample, none
	RequestedAction string            `json:"requested_action,omitempty"` // what the chain asked before a fallback
	Reason          string            `json:"reason,omitempty"`
	Rule            string            `json:"rule,omitempty"`
	Stage           string            `json:"stage,omitempty"` // deciding stage
	Stages          []abi.StageResult `json:"stages,omitempty"`
	LatencyUS       int64             `json:"latency_us,omitempty"` // gateway decision latency

	Upstream    *Upstream       `json:"upstream,omitempty"`
	TokenSHA256 string          `json:"token_sha256,omitempty"` // hex sha256 of an approval token
	Approval    *Approval       `json:"approval,omitempty"`
	Detail      json.RawMessage `json:"detail,omitempty"` // free JSON (bundle rejection cause, tool diff, ...)

	// Shadow is the shadow bundle's verdict on the same call, when one is loaded: judged off
	// the hot path after the active bundle decided (docs/DESIGN.md "Shadow bundle").
	Shadow *Shadow `json:"shadow,omitempty"`

	// Label is a person's verdict on a decision (kind label).
	Label *Label `json:"label,omitempty"`
}

// Label is a person's verdict on an earlier decision.
type Label struct {
	Ref     string `json:"ref"`            // the decision's audit id
	Verdict string `json:"verdict"`        // correct, false_positive, false_negative
	By      string `json:"by"`             // the verified identity that labelled it
	Note    string `json:"note,omitempty"` // free text
}

// Shadow is a shadow bundle's verdict on a call the active bundle decided. It changes nothing
// the client saw; it says what the shadow bundle would have decided.
type Shadow struct {
	Bundle    *Bundle `json:"bundle,omitempty"` // the shadow bundle
	Action    string  `json:"action,omitempty"` // its own action: allow, deny, ask, sample
	Rule      string  `json:"rule,omitempty"`
	Stage     string  `json:"stage,omitempty"` // its deciding stage
	Reason    string  `json:"reason,omitempty"`
	LatencyUS int64   `json:"latency_us,omitempty"` // the shadow chain's judging time
	// Disagrees is set when Action differs from the active bundle's own action (its
	// requested_action, with none resolved to its default).
	Disagrees bool `json:"disagrees,omitempty"`
	// Dropped is set when the shadow queue was full: the call was not judged by the shadow.
	Dropped bool   `json:"dropped,omitempty"`
	Error   string `json:"error,omitempty"` // the shadow chain failed (a stage error, its timeout)
}

// Bundle identifies a policy bundle.
type Bundle struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest,omitempty"` // e.g. sha256:...
}

// Upstream is the forwarded call's outcome.
type Upstream struct {
	Status    int    `json:"status,omitempty"` // HTTP status, or 0 for stdio
	LatencyUS int64  `json:"latency_us,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Approval is a human (or timeout) decision on an ask.
type Approval struct {
	ID        string `json:"id"`
	DecidedBy string `json:"decided_by,omitempty"` // the verified identity (approver[:name]) or timeout...
	Decision  string `json:"decision"`             // approved, denied, timeout, forged
	Scope     string `json:"scope,omitempty"`      // once, session, always
	Signer    string `json:"signer,omitempty"`     // nkey public key that signed the decision
	ClaimedBy string `json:"claimed_by,omitempty"` // the decided_by written, when it differs (forged: all of it)
	// DecisionID is the signed decision's own id (single use), when a person's decision was
	// applied or refused.
	DecisionID string `json:"decision_id,omitempty"`
}

// ArgumentsHash returns the hex sha256 of raw tool arguments, for
// Event.ArgumentsSHA256 (and for logs, which never carry the values).
func ArgumentsHash(args []byte) string {
	sum := sha256.Sum256(args)
	var h [2 * sha256.Size]byte // the hex on the stack: the string is the one allocation
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// Subject is the NATS subject the event is published on:
//
//	decision          palisade.audit.decision.<action>.<server>.<tool>
//	bundle.activated  palisade.audit.bundle.activated
//	bundle.rejected   palisade.audit.bundle.rejected
//	bundle.shadow     palisade.audit.bundle.shadow
//	approval          palisade.audit.approval.<approved|denied|timeout>
//	held              palisade.audit.held.<server>.<tool>
//	tool.changed      palisade.audit.tool.changed
//	label             palisade.audit.label.<correct|false_positive|false_negative>
//	other kinds       palisade.audit.event.<kind>
//
// Every variable token goes through SubjectToken, so untrusted names cannot
// add tokens or wildcards. An empty kind counts as decision.
func (e Event) Subject() string {
	switch e.Kind {
	case KindDecision, "":
		return SubjectPrefix + ".decision." + SubjectToken(e.Action) + "." + SubjectToken(e.Server) + "." + SubjectToken(e.Tool)
	case KindHeld:
		return SubjectPrefix + ".held." + SubjectToken(e.Server) + "." + SubjectToken(e.Tool)
	case KindBundleActivated, KindBundleRejected, KindBundleShadow, KindToolChanged:
		return SubjectPrefix + "." + e.Kind
	case KindLabel:
		v := ""
		if e.Label != nil {
			v = e.Label.Verdict
		}
		return SubjectPrefix + ".label." + SubjectToken(v)
	case KindApproval:
		d := ""
		if e.Approval != nil {
			d = e.Approval.Decision
		}
		return SubjectPrefix + ".approval." + SubjectToken(d)
	}
	return SubjectPrefix + ".event." + SubjectToken(e.Kind)
}

// MaxTokenLen caps a sanitized subject token, in bytes, so a long tool name
// cannot make a subject the server refuses.
const MaxTokenLen = 64

// SubjectToken makes s one safe NATS subject token: lower case, only
// [a-z0-9_-], every other rune replaced by '_', at most MaxTokenLen bytes;
// empty becomes "_".
func SubjectToken(s string) string {
	if s == "" {
		return "_"
	}
	if cleanToken(s) {
		return s // what the loop below would build, byte for byte, without building it
	}
	var b strings.Builder
	b.Grow(min(len(s), MaxTokenLen))
	for i := 0; i < len(s) && b.Len() < MaxTokenLen; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// cleanToken reports whether s is already a token: at most MaxTokenLen bytes, each a lower-case
// letter, a digit, '_' or '-'.
func cleanToken(s string) bool {
	if len(s) > MaxTokenLen {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
