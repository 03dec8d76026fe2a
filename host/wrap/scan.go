package wrap

import (
	"encoding/json"
	"errors"
	"fmt"
)

// span is a half-open byte range [start, end).
type span struct{ start, end int }

// member is one key/value pair of a JSON object, with the value's byte span.
type member struct {
	key string
	val span
}

var errSyntax = errors.New("wrap: malformed JSON")

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errSyntax
}

// skipValue returns the index after the JSON value starting at b[i] (no leading whitespace).
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		return j, nil
	}
}

// members lists the members of the object whose '{' is at b[s.start].
func members(b []byte, s span) ([]member, error) {
	if s.start >= len(b) || b[s.start] != '{' {
		return nil, fmt.Errorf("%w: not an object", errSyntax)
	}
	var out []member
	i := skipWS(b, s.start+1)
	if i < len(b) && b[i] == '}' {
		return nil, nil
	}
	for i < s.end {
		if b[i] != '"' {
			return nil, errSyntax
		}
		ke, err := skipString(b, i)
		if err != nil {
			return nil, err
		}
		var key string
		if err := json.Unmarshal(b[i:ke], &key); err != nil {
			return nil, fmt.Errorf("%w: %v", errSyntax, err)
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, errSyntax
		}
		i = skipWS(b, i+1)
		ve, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, member{key: key, val: span{i, ve}})
		i = skipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return out, nil
		}
		return nil, errSyntax
	}
	return nil, errSyntax
}

// elements lists the element spans of the array whose '[' is at b[s.start].
func elements(b []byte, s span) ([]span, error) {
	if s.start >= len(b) || b[s.start] != '[' {
		return nil, fmt.Errorf("%w: not an array", errSyntax)
	}
	var out []span
	i := skipWS(b, s.start+1)
	if i < len(b) && b[i] == ']' {
		return nil, nil
	}
	for i < s.end {
		e, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, span{i, e})
		i = skipWS(b, e)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return out, nil
		}
		return nil, errSyntax
	}
	return nil, errSyntax
}

// last returns the last member named key (JSON readers keep the last duplicate).
func last(ms []member, key string) (member, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return ms[i], true
		}
	}
	return member{}, false
}

func str(b []byte, s span) (string, bool) {
	var v string
	if json.Unmarshal(b[s.start:s.end], &v) != nil {
		return "", false
	}
	return v, true
}
