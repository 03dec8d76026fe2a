// Package jsonenc holds the pieces the host's hand-written JSON encoders share (the envelope a
// stage reads, host/chain; the audit event, host/audit): members written as encoding/json's
// omitempty writes them, an object closed after optional members, and the caller's principal.
// Each encoder proves its whole output byte for byte against json.Marshal in its own tests.
package jsonenc

import (
	"encoding/json"
	"strconv"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
)

// CloseObject ends an object whose members were each written with a leading comma from n on:
// the first member's comma is dropped.
func CloseObject(dst []byte, n int) []byte {
	if len(dst) > n {
		copy(dst[n:], dst[n+1:])
		dst = dst[:len(dst)-1]
	}
	return append(dst, '}')
}

// OptString appends key and s unless s is empty (omitempty).
func OptString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return jsonw.AppendStringStd(append(dst, key...), s)
}

// OptList appends key and the array of xs, each written by one, unless xs is empty (omitempty).
func OptList[T any](dst []byte, key string, xs []T, one func([]byte, T) []byte) []byte {
	if len(xs) == 0 {
		return dst
	}
	dst = append(append(dst, key...), '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = one(dst, x)
	}
	return append(dst, ']')
}

// OptStrings appends key and the array of ss unless it is empty (omitempty).
func OptStrings(dst []byte, key string, ss []string) []byte {
	return OptList(dst, key, ss, jsonw.AppendStringStd)
}

// OptInt appends key and n unless n is 0 (omitempty).
func OptInt(dst []byte, key string, n int64) []byte {
	if n == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), n, 10)
}

// OptTrue appends member (key and true) when b is set (omitempty).
func OptTrue(dst []byte, member string, b bool) []byte {
	if !b {
		return dst
	}
	return append(dst, member...)
}

// OptRaw appends key and the JSON text raw compacted, as json.Marshal writes a
// json.RawMessage, unless raw is empty (omitempty). raw must be JSON: a caller that cannot
// vouch for it checks json.Valid first.
func OptRaw(dst []byte, key string, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return dst
	}
	return jsonw.AppendCompact(append(dst, key...), raw)
}

// AppendPrincipal appends `,"principal":{…}` for p (nothing when p is nil): issuer and subject
// always, client_id and scopes when set, claims (free JSON values by name) through
// encoding/json, its keys sorted, as json.Marshal writes them inside a whole value. The error
// is json.Marshal's on the claims.
func AppendPrincipal(dst []byte, p *abi.Principal) ([]byte, error) {
	if p == nil {
		return dst, nil
	}
	dst = append(dst, `,"principal":{"issuer":`...)
	dst = jsonw.AppendStringStd(dst, p.Issuer)
	dst = append(dst, `,"subject":`...)
	dst = jsonw.AppendStringStd(dst, p.Subject)
	dst = OptString(dst, `,"client_id":`, p.ClientID)
	dst = OptStrings(dst, `,"scopes":`, p.Scopes)
	if len(p.Claims) > 0 {
		b, err := json.Marshal(p.Claims)
		if err != nil {
			return dst, err
		}
		dst = append(append(dst, `,"claims":`...), b...)
	}
	return append(dst, '}'), nil
}
