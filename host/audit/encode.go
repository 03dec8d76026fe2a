package audit

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/added060/palisade/host/internal/jsonenc"
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
		dst = jsonenc.OptString(dst, `,"prev":`, l.Prev)
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
	dst = jsonenc.OptString(dst, `,"gateway":`, ev.Gateway)
	if b := ev.Bundle; b != nil {
		dst = appendBundle(append(dst, `,"bundle":`...), b)
	}
	dst = jsonenc.OptString(dst, `,"transport":`, ev.Transport)
	dst = jsonenc.OptString(dst, `,"method":`, ev.Method)
	dst = jsonenc.OptString(dst, `,"server":`, ev.Server)
	dst = jsonenc.OptString(dst, `,"session":`, ev.Session)
	dst = jsonenc.OptString(dst, `,"agent":`, ev.Agent)
	dst = jsonenc.OptString(dst, `,"tool":`, ev.Tool)
	if dst, ok = optRaw(dst, `,"request_id":`, ev.RequestID); !ok {
		return dst, false
	}
	dst = jsonenc.OptString(dst, `,"trace_id":`, ev.TraceID)
	var err error
	if dst, err = jsonenc.AppendPrincipal(dst, ev.Principal); err != nil {
		return dst, false
	}
	dst = jsonenc.OptString(dst, `,"arguments_sha256":`, ev.ArgumentsSHA256)
	if dst, ok = optRaw(dst, `,"arguments":`, ev.Arguments); !ok {
		return dst, false
	}
	dst = jsonenc.OptString(dst, `,"action":`, ev.Action)
	dst = jsonenc.OptString(dst, `,"requested_action":`, ev.RequestedAction)
	dst = jsonenc.OptString(dst, `,"reason":`, ev.Reason)
	dst = jsonenc.OptString(dst, `,"rule":`, ev.Rule)
	dst = jsonenc.OptString(dst, `,"stage":`, ev.Stage)
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
	dst = jsonenc.OptInt(dst, `,"latency_us":`, ev.LatencyUS)
	if u := ev.Upstream; u != nil {
		dst = append(dst, `,"upstream":{`...)
		n := len(dst)
		dst = jsonenc.OptInt(dst, `,"status":`, int64(u.Status))
		dst = jsonenc.OptInt(dst, `,"latency_us":`, u.LatencyUS)
		dst = jsonenc.OptString(dst, `,"error":`, u.Error)
		dst = jsonenc.CloseObject(dst, n)
	}
	dst = jsonenc.OptString(dst, `,"token_sha256":`, ev.TokenSHA256)
	if a := ev.Approval; a != nil {
		dst = append(dst, `,"approval":{"id":`...)
		dst = jsonw.AppendStringStd(dst, a.ID)
		dst = jsonenc.OptString(dst, `,"decided_by":`, a.DecidedBy)
		dst = append(dst, `,"decision":`...)
		dst = jsonw.AppendStringStd(dst, a.Decision)
		dst = jsonenc.OptString(dst, `,"scope":`, a.Scope)
		dst = jsonenc.OptString(dst, `,"signer":`, a.Signer)
		dst = jsonenc.OptString(dst, `,"claimed_by":`, a.ClaimedBy)
		dst = jsonenc.OptString(dst, `,"decision_id":`, a.DecisionID)
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
		dst = jsonenc.OptString(dst, `,"action":`, s.Action)
		dst = jsonenc.OptString(dst, `,"rule":`, s.Rule)
		dst = jsonenc.OptString(dst, `,"stage":`, s.Stage)
		dst = jsonenc.OptString(dst, `,"reason":`, s.Reason)
		dst = jsonenc.OptInt(dst, `,"latency_us":`, s.LatencyUS)
		dst = jsonenc.OptTrue(dst, `,"disagrees":true`, s.Disagrees)
		dst = jsonenc.OptTrue(dst, `,"dropped":true`, s.Dropped)
		dst = jsonenc.OptString(dst, `,"error":`, s.Error)
		dst = jsonenc.CloseObject(dst, n)
	}
	if l := ev.Label; l != nil {
		dst = append(dst, `,"label":{"ref":`...)
		dst = jsonw.AppendStringStd(dst, l.Ref)
		dst = append(dst, `,"verdict":`...)
		dst = jsonw.AppendStringStd(dst, l.Verdict)
		dst = append(dst, `,"by":`...)
		dst = jsonw.AppendStringStd(dst, l.By)
		dst = jsonenc.OptString(dst, `,"note":`, l.Note)
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
	dst = jsonenc.OptString(dst, `,"version":`, b.Version)
	dst = jsonenc.OptString(dst, `,"digest":`, b.Digest)
	return append(dst, '}')
}

func appendStageResult(dst []byte, r *abi.StageResult) ([]byte, bool) {
	dst = append(dst, `{"stage":`...)
	dst = jsonw.AppendStringStd(dst, r.Stage)
	dst = jsonenc.OptString(dst, `,"phase":`, r.Phase)
	dst = jsonenc.OptString(dst, `,"action":`, r.Action)
	if r.Score != 0 {
		if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) {
			return dst, false
		}
		dst = jsonw.AppendFloat(append(dst, `,"score":`...), r.Score)
	}
	dst = jsonenc.OptStrings(dst, `,"labels":`, r.Labels)
	dst = jsonenc.OptString(dst, `,"reason":`, r.Reason)
	dst = jsonenc.OptString(dst, `,"rule":`, r.Rule)
	dst = jsonenc.OptInt(dst, `,"latency_us":`, r.LatencyUS)
	dst = jsonenc.OptString(dst, `,"error":`, r.Error)
	dst = jsonenc.OptTrue(dst, `,"skipped":true`, r.Skipped)
	dst = jsonenc.OptTrue(dst, `,"observe":true`, r.Observe)
	dst = jsonenc.OptTrue(dst, `,"uncertain":true`, r.Uncertain)
	if len(r.Evidence) > 0 {
		dst = append(dst, `,"evidence":[`...)
		for i := range r.Evidence {
			e := &r.Evidence[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			n := len(dst)
			dst = jsonenc.OptString(dst, `,"label":`, e.Label)
			dst = jsonenc.OptString(dst, `,"path":`, e.Path)
			dst = jsonenc.OptString(dst, `,"match":`, e.Match)
			dst = jsonenc.OptStrings(dst, `,"rules":`, e.Rules)
			dst = jsonenc.CloseObject(dst, n)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), true
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
	return jsonenc.OptRaw(dst, key, raw), true
}
