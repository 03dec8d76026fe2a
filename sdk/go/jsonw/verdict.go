package jsonw

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/added060/palisade/sdk/go/abi"
)

// ErrInvalidRaw is AppendVerdict's error for a raw JSON field (arguments, result, metadata)
// that is not valid JSON, or a score that is not a finite number.
var ErrInvalidRaw = errors.New("jsonw: verdict field is not valid JSON")

// AppendVerdict appends v as the JSON object encoding/json would write for it (the same fields,
// order and omitempty rules; raw fields verbatim, not compacted), without reflection: the SDK's
// Output uses it so a plugin's verdict costs no encoding/json inside Wasm.
func AppendVerdict(b []byte, v abi.Verdict) ([]byte, error) {
	b = append(b, `{"action":`...)
	b = AppendString(b, v.Action)
	b = field(b, "reason", v.Reason)
	b = field(b, "rule", v.Rule)
	if v.Score != 0 {
		if math.IsNaN(v.Score) || math.IsInf(v.Score, 0) {
			return b, ErrInvalidRaw
		}
		b = append(b, `,"score":`...)
		b = AppendFloat(b, v.Score)
	}
	if len(v.Labels) > 0 {
		b = append(b, `,"labels":[`...)
		for i, l := range v.Labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, l)
		}
		b = append(b, ']')
	}
	if len(v.Evidence) > 0 {
		b = append(b, `,"evidence":[`...)
		for i, e := range v.Evidence {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			n := len(b)
			b = field(b, "label", e.Label)
			b = field(b, "path", e.Path)
			b = field(b, "match", e.Match)
			if len(e.Rules) > 0 {
				b = append(b, `,"rules":[`...)
				for i, r := range e.Rules {
					if i > 0 {
						b = append(b, ',')
					}
					b = AppendString(b, r)
				}
				b = append(b, ']')
			}
			if len(b) > n {
				b = append(b[:n], b[n+1:]...) // the first field's comma
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if v.Final {
		b = append(b, `,"final":true`...)
	}
	b = field(b, "guidance", v.Guidance)
	var err error
	if b, err = raw(b, "arguments", v.Arguments); err != nil {
		return b, err
	}
	if b, err = raw(b, "result", v.Result); err != nil {
		return b, err
	}
	if v.RequireToken {
		b = append(b, `,"require_token":true`...)
	}
	b = field(b, "fallback", v.Fallback)
	if b, err = raw(b, "metadata", v.Metadata); err != nil {
		return b, err
	}
	if v.Incomplete {
		b = append(b, `,"incomplete":true`...)
	}
	return append(b, '}'), nil
}

// AppendFloat appends f as encoding/json writes a float64 (shortest form; exponent only below
// 1e-6 or from 1e21).
func AppendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// field appends ,"name":"s" unless s is empty.
func field(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return AppendString(b, s)
}

// raw appends ,"name":r unless r is empty; r must be valid JSON.
func raw(b []byte, name string, r json.RawMessage) ([]byte, error) {
	if len(r) == 0 {
		return b, nil
	}
	if !json.Valid(r) {
		return b, ErrInvalidRaw
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, r...), nil
}
