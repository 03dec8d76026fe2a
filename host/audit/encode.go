package audit

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
)

// appendEvent appends ev's JSON encoding to dst: byte for byte what json.Marshal(ev) writes
// (TestAppendEventEveryField, TestAppendEventEqualsMarshal, FuzzAppendEvent), without its
// reflection and its intermediate buffer. ok is false, and dst is to be dropped, where
// json.Marshal would fail or where this encoder does not vouch for its bytes: a raw member
// (request_id, arguments, detail) that is not JSON, a score that is not finite, a time outside
// RFC 3339 (a year past 9999, an offset of a day), claims json.Marshal refuses. Record then
// takes json.Marshal's path, which says what was wrong. Every field of Event and of the structs
// in it must be written here: TestAppendEventEveryField sets each one by reflection, so a field
// added later and not here fails it.
func appendEvent(dst []byte, ev *Event) (_ []byte, ok bool) {
	if l := ev.Chain; l != nil {
		dst = append(dst, `{"chain":{"publisher":`...)
		dst = jsonw.AppendStringStd(dst, l.Publisher)
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, l.Seq, 10)
		dst = optString(dst, `,"prev":`, l.Prev)
		dst = append(dst, `},"id":`...)
	} else {
		dst = append(dst, `{"id":`...)
	}
	dst = jsonw.AppendStringStd(dst, ev.ID)
	if dst, ok = appendTime(append(dst, `,"time":`...), ev.Time); !ok {
		return dst, false
	}
	dst = append(dst, `,"kind":`...)
	dst = jsonw.AppendStringStd(dst, ev.Kind)
	dst = optString(dst, `,"gateway":`, ev.Gateway)
	if b := ev.Bundle; b != nil {
		dst = appendBundle(append(dst, `,"bundle":`...), b)
	}
	dst = optString(dst, `,"transport":`, ev.Transport)
	dst = optString(dst, `,"method":`, ev.Method)
	dst = optString(dst, `,"server":`, ev.Server)
	dst = optString(dst, `,"session":`, ev.Session)
	dst = optString(dst, `,"agent":`, ev.Agent)
	dst = optString(dst, `,"tool":`, ev.Tool)
	if dst, ok = optRaw(dst, `,"request_id":`, ev.RequestID); !ok {
		return dst, false
	}
	dst = optString(dst, `,"trace_id":`, ev.TraceID)
	if p := ev.Principal; p != nil {
		dst = append(dst, `,"principal":{"issuer":`...)
		dst = jsonw.AppendStringStd(dst, p.Issuer)
		dst = append(dst, `,"subject":`...)
		dst = jsonw.AppendStringStd(dst, p.Subject)
		dst = optString(dst, `,"client_id":`, p.ClientID)
		dst = optStrings(dst, `,"scopes":`, p.Scopes)
		if len(p.Claims) > 0 {
			// Free JSON values by claim name: encoding/json writes them (keys sorted), as it
			// does inside the whole event.
			b, err := json.Marshal(p.Claims)
			if err != nil {
				return dst, false
			}
			dst = append(append(dst, `,"claims":`...), b...)
		}
		dst = append(dst, '}')
	}
	dst = optString(dst, `,"arguments_sha256":`, ev.ArgumentsSHA256)
	if dst, ok = optRaw(dst, `,"arguments":`, ev.Arguments); !ok {
		return dst, false
	}
	dst = optString(dst, `,"action":`, ev.Action)
	dst = optString(dst, `,"requested_action":`, ev.RequestedAction)
	dst = optString(dst, `,"reason":`, ev.Reason)
	dst = optString(dst, `,"rule":`, ev.Rule)
	dst = optString(dst, `,"stage":`, ev.Stage)
	if len(ev.Stages) > 0 {
		dst = append(dst, `,"stages":[`...)
		for i := range ev.Stages {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = appendStageResult(dst, &ev.Stages[i]); !ok {
				return dst, false
			}
		}
		dst = append(dst, ']')
	}
	dst = optInt(dst, `,"latency_us":`, ev.LatencyUS)
	if u := ev.Upstream; u != nil {
		dst = append(dst, `,"upstream":{`...)
		n := len(dst)
		dst = optInt(dst, `,"status":`, int64(u.Status))
		dst = optInt(dst, `,"latency_us":`, u.LatencyUS)
		dst = optString(dst, `,"error":`, u.Error)
		dst = closeObject(dst, n)
	}
	dst = optString(dst, `,"token_sha256":`, ev.TokenSHA256)
	if a := ev.Approval; a != nil {
		dst = append(dst, `,"approval":{"id":`...)
		dst = jsonw.AppendStringStd(dst, a.ID)
		dst = optString(dst, `,"decided_by":`, a.DecidedBy)
		dst = append(dst, `,"decision":`...)
		dst = jsonw.AppendStringStd(dst, a.Decision)
		dst = optString(dst, `,"scope":`, a.Scope)
		dst = optString(dst, `,"signer":`, a.Signer)
		dst = optString(dst, `,"claimed_by":`, a.ClaimedBy)
		dst = optString(dst, `,"decision_id":`, a.DecisionID)
		dst = append(dst, '}')
	}
	if dst, ok = optRaw(dst, `,"detail":`, ev.Detail); !ok {
		return dst, false
	}
	if s := ev.Shadow; s != nil {
		dst = append(dst, `,"shadow":{`...)
		n := len(dst)
		if s.Bundle != nil {
			dst = appendBundle(append(dst, `,"bundle":`...), s.Bundle)
		}
		dst = optString(dst, `,"action":`, s.Action)
		dst = optString(dst, `,"rule":`, s.Rule)
		dst = optString(dst, `,"stage":`, s.Stage)
		dst = optString(dst, `,"reason":`, s.Reason)
		dst = optInt(dst, `,"latency_us":`, s.LatencyUS)
		dst = optTrue(dst, `,"disagrees":true`, s.Disagrees)
		dst = optTrue(dst, `,"dropped":true`, s.Dropped)
		dst = optString(dst, `,"error":`, s.Error)
		dst = closeObject(dst, n)
	}
	if l := ev.Label; l != nil {
		dst = append(dst, `,"label":{"ref":`...)
		dst = jsonw.AppendStringStd(dst, l.Ref)
		dst = append(dst, `,"verdict":`...)
		dst = jsonw.AppendStringStd(dst, l.Verdict)
		dst = append(dst, `,"by":`...)
		dst = jsonw.AppendStringStd(dst, l.By)
		dst = optString(dst, `,"note":`, l.Note)
		dst = append(dst, '}')
	}
	return append(dst, '}'), true
}

// appendTime appends t as time.Time's MarshalJSON writes it (RFC 3339 with nanoseconds, quoted);
// ok is false where MarshalJSON fails (a year outside [0,9999], an offset of 24 hours or more).
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return dst, false
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), true
}

func appendBundle(dst []byte, b *Bundle) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonw.AppendStringStd(dst, b.Name)
	dst = optString(dst, `,"version":`, b.Version)
	dst = optString(dst, `,"digest":`, b.Digest)
	return append(dst, '}')
}

func appendStageResult(dst []byte, r *abi.StageResult) ([]byte, bool) {
	dst = append(dst, `{"stage":`...)
	dst = jsonw.AppendStringStd(dst, r.Stage)
	dst = optString(dst, `,"phase":`, r.Phase)
	dst = optString(dst, `,"action":`, r.Action)
	if r.Score != 0 {
		if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) {
			return dst, false
		}
		dst = jsonw.AppendFloat(append(dst, `,"score":`...), r.Score)
	}
	dst = optStrings(dst, `,"labels":`, r.Labels)
	dst = optString(dst, `,"reason":`, r.Reason)
	dst = optString(dst, `,"rule":`, r.Rule)
	dst = optInt(dst, `,"latency_us":`, r.LatencyUS)
	dst = optString(dst, `,"error":`, r.Error)
	dst = optTrue(dst, `,"skipped":true`, r.Skipped)
	dst = optTrue(dst, `,"observe":true`, r.Observe)
	dst = optTrue(dst, `,"uncertain":true`, r.Uncertain)
	if len(r.Evidence) > 0 {
		dst = append(dst, `,"evidence":[`...)
		for i := range r.Evidence {
			e := &r.Evidence[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			n := len(dst)
			dst = optString(dst, `,"label":`, e.Label)
			dst = optString(dst, `,"path":`, e.Path)
			dst = optString(dst, `,"match":`, e.Match)
			dst = optStrings(dst, `,"rules":`, e.Rules)
			dst = closeObject(dst, n)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), true
}

// closeObject ends an object whose members were each written with a leading comma from n on:
// the first member's comma is dropped.
func closeObject(dst []byte, n int) []byte {
	if len(dst) > n {
		copy(dst[n:], dst[n+1:])
		dst = dst[:len(dst)-1]
	}
	return append(dst, '}')
}

// optString appends key and s unless s is empty (omitempty).
func optString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return jsonw.AppendStringStd(append(dst, key...), s)
}

// optStrings appends key and the array of ss unless it is empty (omitempty).
func optStrings(dst []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		return dst
	}
	dst = append(append(dst, key...), '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.AppendStringStd(dst, s)
	}
	return append(dst, ']')
}

// optInt appends key and n unless n is 0 (omitempty).
func optInt(dst []byte, key string, n int64) []byte {
	if n == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), n, 10)
}

// optTrue appends member (key and true) when b is set (omitempty).
func optTrue(dst []byte, member string, b bool) []byte {
	if !b {
		return dst
	}
	return append(dst, member...)
}

// optRaw appends key and raw compacted, as json.Marshal writes a json.RawMessage, unless raw is
// empty (omitempty); ok is false when raw is not JSON (json.Marshal fails on it).
func optRaw(dst []byte, key string, raw json.RawMessage) ([]byte, bool) {
	if len(raw) == 0 {
		return dst, true
	}
	if !json.Valid(raw) {
		return dst, false
	}
	return jsonw.AppendCompact(append(dst, key...), raw), true
}
