package riskscore

import (
	"math"
	"strconv"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
)

// The plugin runs inside Wasm, where encoding/json's reflection costs far more than natively;
// the verdict is small and fixed in shape, so it is encoded by hand. encode_test.go checks that
// the output decodes to exactly what Evaluate returns.

// EvaluateJSON is Evaluate encoded as verdict JSON, appended to buf.
func (s *Scorer) EvaluateJSON(envelope, buf []byte) []byte {
	v, r, scored := s.evaluate(envelope)
	return appendVerdict(buf, v, r, scored)
}

// EvaluateViewJSON is EvaluateView encoded as verdict JSON, appended to buf.
func (s *Scorer) EvaluateViewJSON(view *abi.View, buf []byte) ([]byte, error) {
	if !view.HasPrior() {
		return buf, ErrNoPrior
	}
	v, r, scored := s.evaluateFields(fromView(view))
	return appendVerdict(buf, v, r, scored), nil
}

func appendVerdict(buf []byte, v abi.Verdict, r Result, scored bool) []byte {
	b := append(buf, `{"action":`...)
	b = appendString(b, v.Action)
	if !scored {
		return append(b, '}')
	}
	b = append(b, `,"reason":`...)
	b = appendString(b, v.Reason)
	b = append(b, `,"rule":`...)
	b = appendString(b, v.Rule)
	if v.Score != 0 {
		b = append(b, `,"score":`...)
		b = appendFloat(b, v.Score)
	}
	b = append(b, `,"labels":[`...)
	b = appendString(b, r.Level)
	b = append(b, ']')
	if v.Guidance != "" {
		b = append(b, `,"guidance":`...)
		b = appendString(b, v.Guidance)
	}
	if v.RequireToken {
		b = append(b, `,"require_token":true`...)
	}
	if v.Fallback != "" {
		b = append(b, `,"fallback":`...)
		b = appendString(b, v.Fallback)
	}
	b = append(b, `,"metadata":`...)
	b = r.appendJSON(b)
	return append(b, '}')
}

// appendJSON encodes r as the metadata object.
func (r *Result) appendJSON(b []byte) []byte {
	b = append(b, `{"signals":{`...)
	for i, x := range r.Signals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, x.Name)
		b = append(b, ':')
		b = appendFloat(b, x.Value)
	}
	b = append(b, `},"weights":{`...)
	first := true
	for _, x := range r.Signals {
		if x.Weight <= 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, x.Name)
		b = append(b, ':')
		b = appendFloat(b, x.Weight)
	}
	b = append(b, '}')
	b = append(b, `,"composite":`...)
	b = appendFloat(b, r.Composite)
	b = append(b, `,"level":`...)
	b = appendString(b, r.Level)
	b = append(b, `,"criticality":`...)
	b = appendString(b, r.Criticality)
	if r.Irreversible {
		b = append(b, `,"irreversible":true`...)
	}
	if r.Regulatory {
		b = append(b, `,"regulatory":true`...)
	}
	b = append(b, `,"profiled":`...)
	b = strconv.AppendBool(b, r.Profiled)
	return append(b, '}')
}

// appendFloat writes f with at most 4 decimals (scores are rounded to 1e-4). It avoids strconv's
// shortest-float search, which is slow inside Wasm; values it cannot write exactly that way
// (huge, NaN, Inf) fall back to strconv.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1e12 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	n := int64(math.Round(math.Abs(f) * 1e4))
	if n == 0 {
		return append(b, '0')
	}
	if f < 0 {
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, n/1e4, 10)
	frac := n % 1e4
	if frac == 0 {
		return b
	}
	digits := [4]byte{byte('0' + frac/1000), byte('0' + frac/100%10), byte('0' + frac/10%10), byte('0' + frac%10)}
	end := 4
	for digits[end-1] == '0' {
		end--
	}
	b = append(b, '.')
	return append(b, digits[:end]...)
}

// appendString appends s as a JSON string (see sdk/go/jsonw).
func appendString(b []byte, s string) []byte { return jsonw.AppendString(b, s) }
