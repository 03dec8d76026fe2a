package token

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Attach returns tools/call params with the token set at _meta["palisade/token"], keeping every
// other field (and other _meta keys) as they were. params must be a JSON object (or empty).
func Attach(params json.RawMessage, tok string) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if t := bytes.TrimSpace(params); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &p); err != nil {
			return nil, fmt.Errorf("token: attach: params: %w", err)
		}
	}
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := p["_meta"]; ok && !bytes.Equal(bytes.TrimSpace(m), []byte("null")) {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("token: attach: params._meta: %w", err)
		}
	}
	t, _ := json.Marshal(tok)
	meta[MetaKey] = t
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("token: attach: %w", err)
	}
	p["_meta"] = mb
	out, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("token: attach: %w", err)
	}
	return out, nil
}

// FromParams returns the token in params._meta["palisade/token"], if any.
func FromParams(params json.RawMessage) (string, bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	var tok string
	if json.Unmarshal(p.Meta[MetaKey], &tok) != nil || tok == "" {
		return "", false
	}
	return tok, true
}
