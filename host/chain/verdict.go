package chain

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/added060/palisade/sdk/go/abi"
)

// decodeVerdictFast decodes the verdicts stages return on nearly every call without
// encoding/json's reflection: a JSON object with no whitespace, each key one of the
// verdict's lower-case field names at most once, string values of printable ASCII with no
// escape, a score that is a JSON number, labels an array of such strings, booleans as true or
// false, and metadata, arguments and result as a JSON object, array or string (kept raw). That is what sdk/go's
// jsonw.AppendVerdict writes for every verdict without evidence. Anything else (evidence, null,
// an escape, other bytes in a string, whitespace, an unknown or repeated key) returns ok false,
// and DecodeVerdict uses encoding/json: where this accepts, the result is the same as
// json.Unmarshal's, field for field (FuzzDecodeVerdictFast checks it).
func decodeVerdictFast(b []byte) (v abi.Verdict, ok bool) {
	// The bytes are a guest's: should an index here ever run past them, encoding/json decides
	// instead of the gateway panicking (the fuzzer found one such case, now fixed and kept in
	// testdata/fuzz).
	defer func() {
		if recover() != nil {
			v, ok = abi.Verdict{}, false
		}
	}()
	if len(b) < 2 || b[0] != '{' {
		return v, false
	}
	var seen uint16
	i := 1
	if b[i] == '}' {
		return v, i+1 == len(b)
	}
	for {
		key, n, ok := plainString(b, i)
		if !ok || n >= len(b) || b[n] != ':' {
			return v, false
		}
		i = n + 1
		if i >= len(b) {
			return v, false
		}
		bit, ok := verdictKeys[string(key)]
		if !ok || seen&bit != 0 {
			return v, false
		}
		seen |= bit
		switch string(key) {
		case "action", "reason", "rule", "guidance", "fallback":
			s, n, ok := plainString(b, i)
			if !ok {
				return v, false
			}
			i = n
			switch string(key) {
			case "action":
				v.Action = action(s)
			case "reason":
				v.Reason = string(s)
			case "rule":
				v.Rule = string(s)
			case "guidance":
				v.Guidance = string(s)
			default:
				v.Fallback = string(s)
			}
		case "score":
			n := numberEnd(b, i)
			if n == i || !jsonNumber(b[i:n]) {
				return v, false
			}
			f, err := strconv.ParseFloat(string(b[i:n]), 64)
			if err != nil {
				return v, false
			}
			v.Score, i = f, n
		case "labels":
			if b[i] != '[' {
				return v, false
			}
			i++
			v.Labels = []string{}
			for i < len(b) && b[i] != ']' {
				if len(v.Labels) > 0 {
					if b[i] != ',' {
						return v, false
					}
					i++
				}
				s, n, ok := plainString(b, i)
				if !ok {
					return v, false
				}
				v.Labels = append(v.Labels, string(s))
				i = n
			}
			if i >= len(b) {
				return v, false
			}
			i++
		case "final", "require_token", "incomplete":
			var t bool
			switch {
			case bytes.HasPrefix(b[i:], []byte("true")):
				t, i = true, i+4
			case bytes.HasPrefix(b[i:], []byte("false")):
				i += 5
			default:
				return v, false
			}
			switch string(key) {
			case "final":
				v.Final = t
			case "require_token":
				v.RequireToken = t
			default:
				v.Incomplete = t
			}
		default: // metadata, arguments, result
			if b[i] != '{' && b[i] != '[' && b[i] != '"' {
				return v, false // a literal or number: its end is not found without a scanner
			}
			n := valueEnd(b, i)
			if n <= i || n > len(b) || bytes.Equal(b[i:n], []byte("null")) || !json.Valid(b[i:n]) {
				return v, false
			}
			raw := json.RawMessage(bytes.Clone(b[i:n]))
			switch string(key) {
			case "metadata":
				v.Metadata = raw
			case "arguments":
				v.Arguments = raw
			default:
				v.Result = raw
			}
			i = n
		}
		if i >= len(b) {
			return v, false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return v, i+1 == len(b)
		default:
			return v, false
		}
	}
}

// verdictKeys are the keys decodeVerdictFast takes, each with its bit in the seen mask.
var verdictKeys = map[string]uint16{
	"action": 1 << 0, "reason": 1 << 1, "rule": 1 << 2, "score": 1 << 3, "labels": 1 << 4,
	"final": 1 << 5, "guidance": 1 << 6, "arguments": 1 << 7, "result": 1 << 8,
	"require_token": 1 << 9, "fallback": 1 << 10, "metadata": 1 << 11, "incomplete": 1 << 12,
}

// plainString reads the JSON string at b[i] when it holds printable ASCII only and no escape,
// and returns its contents and the index after its closing quote.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// numberEnd returns the index after the run of bytes a JSON number may hold at b[i] (i when
// there is none); jsonNumber says whether the run is one.
func numberEnd(b []byte, i int) int {
	j := i
	for j < len(b) && bytes.IndexByte([]byte("-+.eE0123456789"), b[j]) >= 0 {
		j++
	}
	return j
}

// valueEnd returns the index after the JSON value at b[i], if b holds one there: an object or
// an array to its matching bracket (skipping strings), a string to its closing quote, a literal
// or a number to the next delimiter. The caller checks the slice with json.Valid.
func valueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j++
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return len(b) // not closed: json.Valid refuses the slice
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return len(b)
}

// jsonNumber reports whether s is a number in JSON's grammar (RFC 8259 section 6), which
// strconv.ParseFloat alone is not: it also takes "+1", ".5", "1." and "01".
func jsonNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if i = digits(s, i+1); s[i-1] == '.' {
			return false // no digit after the point
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		if i = digits(s, i); i == d {
			return false
		}
	}
	return i == len(s)
}

// digits returns the index after the run of ASCII digits at s[i].
func digits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// action returns s as a string, the abi constant when it is one (no allocation).
func action(s []byte) string {
	for _, a := range [...]string{abi.ActionNone, abi.ActionAllow, abi.ActionDeny, abi.ActionAsk, abi.ActionUncertain, abi.ActionSample} {
		if string(s) == a {
			return a
		}
	}
	return string(s)
}
