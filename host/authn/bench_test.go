package authn_test

import (
	"context"
	"testing"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/internal/testenv"
)

// BenchmarkVerifyJWT is the per-request cost of a JWT access token: cached key set, RS256
// signature, claims, principal.
func BenchmarkVerifyJWT(b *testing.B) {
	op := testenv.StartOP(b, testenv.OPConfig{})
	v, err := authn.New(context.Background(), authn.Options{Config: authn.Config{Issuer: op.Issuer, Resource: resource,
		Scopes: []string{"mcp:tools"}, Claims: []string{"groups"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	tok := op.ClientCredentials(b, testenv.OPService, testenv.OPServiceSecret, resource, "mcp:tools")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
