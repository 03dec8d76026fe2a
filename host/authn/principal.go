package authn

import (
	"context"
	"os/user"

	"github.com/added060/palisade/sdk/go/abi"
)

// Principal is the verified caller: the envelope's and the audit event's principal
// (sdk/go/abi), so the transport hands the same value to both.
type Principal = abi.Principal

// LocalIssuer is the issuer of a LocalPrincipal.
const LocalIssuer = "local"

type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

type tokenKey struct{}

// WithToken returns a copy of ctx carrying the access token the middleware verified. Only an
// upstream's token exchange (RFC 8693) reads it: the token itself is never forwarded.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// TokenFrom returns the verified access token a middleware put in ctx, or "".
func TokenFrom(ctx context.Context) string {
	t, _ := ctx.Value(tokenKey{}).(string)
	return t
}

// FromContext returns the principal a middleware put in ctx, or nil.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// LocalPrincipal is the caller in the local modes (stdio, hook, wrap), where no token is
// presented and the process runs as the user: {issuer: "local", subject: OS user name}. The
// subject is the user id when the name cannot be looked up, and "unknown" when neither can.
func LocalPrincipal() *Principal {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		switch {
		case u.Username != "":
			name = u.Username
		case u.Uid != "":
			name = u.Uid
		}
	}
	return &Principal{Issuer: LocalIssuer, Subject: name}
}
