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
		k, ok := verdictKeys[string(key)]
		if !ok || seen&(1<<k) != 0 {
			return v, false
		}
		seen |= 1 << k
		if i, ok = readField(&v, k, b, i); !ok || i >= len(b) {
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

// The keys decodeVerdictFast takes, each by its index in verdictKeyNames, which is also its bit in
// the mask of keys seen; the name is written only in verdictKeyNames.
const (
	keyAction = iota
	keyReason
	keyRule
	keyGuidance
	keyFallback
	keyFinal
	keyRequireToken
	keyIncomplete
	keyMetadata
	keyArguments
	keyResult
	keyScore
	keyLabels
)

var (
	verdictKeyNames = [...]string{
		keyAction: "action", keyReason: "reason", keyRule: "rule", keyGuidance: "guidance",
		keyFallback: "fallback", keyFinal: "final", keyRequireToken: "require_token",
		keyIncomplete: "incomplete", keyMetadata: "metadata", keyArguments: "arguments",
		keyResult: "result", keyScore: "score", keyLabels: "labels",
	}
	verdictKeys = func() map[string]int {
		m := make(map[string]int, len(verdictKeyNames))
		for k, name := range verdictKeyNames {
			m[name] = k
		}
		return m
	}()
)

// readField reads the value of key k at b[i] into v and returns the index after it.
func readField(v *abi.Verdict, k int, b []byte, i int) (int, bool) {
	switch k {
	case keyAction, keyReason, keyRule, keyGuidance, keyFallback:
		s, n, ok := plainString(b, i)
		if !ok {
			return i, false
		}
		switch k {
		case keyAction:
			v.Action = action(s)
		case keyReason:
			v.Reason = string(s)
		case keyRule:
			v.Rule = string(s)
		case keyGuidance:
			v.Guidance = string(s)
		default:
			v.Fallback = string(s)
		}
		return n, true
	case keyFinal, keyRequireToken, keyIncomplete:
		t, n, ok := readBool(b, i)
		switch k {
		case keyFinal:
			v.Final = t
		case keyRequireToken:
			v.RequireToken = t
		default:
			v.Incomplete = t
		}
		return n, ok
	case keyMetadata, keyArguments, keyResult:
		r, n, ok := readRaw(b, i)
		switch k {
		case keyMetadata:
			v.Metadata = r
		case keyArguments:
			v.Arguments = r
		default:
			v.Result = r
		}
		return n, ok
	case keyScore:
		return readScore(v, b, i)
	default:
		return readLabels(v, b, i)
	}
}

// readBool reads true or false.
func readBool(b []byte, i int) (bool, int, bool) {
	switch {
	case bytes.HasPrefix(b[i:], []byte("true")):
		return true, i + 4, true
	case bytes.HasPrefix(b[i:], []byte("false")):
		return false, i + 5, true
	}
	return false, i, false
}

// readRaw reads an object, an array or a string, checked with json.Valid, as a copy. A literal
// or a number is refused: its end is not found without a scanner.
func readRaw(b []byte, i int) (json.RawMessage, int, bool) {
	if b[i] != '{' && b[i] != '[' && b[i] != '"' {
		return nil, i, false
	}
	n := valueEnd(b, i)
	if n <= i || !json.Valid(b[i:n]) {
		return nil, i, false
	}
	return json.RawMessage(bytes.Clone(b[i:n])), n, true
}

// readScore reads a JSON number into the verdict's score.
func readScore(v *abi.Verdict, b []byte, i int) (int, bool) {
	n := numberEnd(b, i)
	if n == i || !jsonNumber(b[i:n]) {
		return i, false
	}
	f, err := strconv.ParseFloat(string(b[i:n]), 64)
	if err != nil {
		return i, false
	}
	v.Score = f
	return n, true
}

// readLabels reads an array of plain strings into the verdict's labels.
func readLabels(v *abi.Verdict, b []byte, i int) (int, bool) {
	if b[i] != '[' {
		return i, false
	}
	i++
	v.Labels = []string{}
	for i < len(b) && b[i] != ']' {
		if len(v.Labels) > 0 {
			if b[i] != ',' {
				return i, false
			}
			i++
		}
		s, n, ok := plainString(b, i)
		if !ok {
			return i, false
		}
		v.Labels = append(v.Labels, string(s))
		i = n
	}
	if i >= len(b) {
		return i, false
	}
	return i + 1, true
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
