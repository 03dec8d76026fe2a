package testenv

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// claims decodes a JWT's payload without verifying it (host/authn verifies; this checks what
// the OP minted).
func claims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %s", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStartOP(t *testing.T) {
	op := StartOP(t, OPConfig{})
	const res = "https://gw.example.test/mcp"
	for _, tc := range []struct {
		name, token, sub string
		groups           []any
	}{
		{"client credentials", op.ClientCredentials(t, OPService, OPServiceSecret, res, "mcp:tools"), OPService, []any{"sre"}},
		{"authorization code", op.AuthCode(t, OPPublic, OPPublicRedirect, OPUserDeveloper, res, "mcp:tools"), OPUserDeveloper, []any{"dev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := claims(t, tc.token)
			aud, _ := c["aud"].([]any)
			if c["iss"] != op.Issuer || c["sub"] != tc.sub || !slices.Equal(aud, []any{res}) || c["scope"] != "mcp:tools" {
				t.Errorf("claims = %v", c)
			}
			if g, _ := c["groups"].([]any); !slices.Equal(g, tc.groups) {
				t.Errorf("groups = %v, want %v", c["groups"], tc.groups)
			}
		})
	}
}
