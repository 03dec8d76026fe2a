package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// introspect asks the introspection endpoint about an opaque token (RFC 7662) as the
// configured confidential client, and checks what it answers as a JWT's claims would be:
// active, iss (when given), aud (required: a token that names no audience could be for any
// resource), exp and nbf (when given).
func (v *Verifier) introspect(ctx context.Context, token string) (*Principal, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.introURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("introspect: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	in := v.c.Introspection
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret)) // RFC 6749 2.3.1
	resp, err := v.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("introspect: %w", err)
	}
	defer drain(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("introspect: %s answered %s", v.introURL, resp.Status)
	}
	var claims map[string]any
	dec := json.NewDecoder(io.LimitReader(resp.Body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, fmt.Errorf("introspect: %w", err)
	}
	if active, _ := claims["active"].(bool); !active {
		return nil, fmt.Errorf("%w: introspection: not active", ErrInvalidToken)
	}
	if iss := str(claims["iss"]); iss != "" && iss != v.c.Issuer {
		return nil, fmt.Errorf("%w: introspection: iss %q is not %q", ErrInvalidToken, iss, v.c.Issuer)
	}
	if !audienceHolds(claims["aud"], v.c.Audience) {
		return nil, fmt.Errorf("%w: introspection: aud %v names none of %q", ErrInvalidToken, claims["aud"], v.c.Audience)
	}
	now := time.Now()
	if exp, ok := numericDate(claims["exp"]); ok && !now.Before(exp.Add(v.c.Leeway)) {
		return nil, fmt.Errorf("%w: introspection: expired at %s", ErrInvalidToken, exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := numericDate(claims["nbf"]); ok && now.Add(v.c.Leeway).Before(nbf) {
		return nil, fmt.Errorf("%w: introspection: not valid before %s", ErrInvalidToken, nbf.UTC().Format(time.RFC3339))
	}
	for k, val := range claims { // json.Number back to float64, as a JWT's claims decode
		if n, ok := val.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				claims[k] = f
			}
		}
	}
	p := v.principal(claims)
	if p.Subject == "" {
		p.Subject = str(claims["username"])
	}
	return p, nil
}

func audienceHolds(aud any, want []string) bool {
	switch a := aud.(type) {
	case string:
		return slices.Contains(want, a)
	case []any:
		for _, e := range a {
			if s, ok := e.(string); ok && slices.Contains(want, s) {
				return true
			}
		}
	}
	return false
}

func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}
