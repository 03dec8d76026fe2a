package main

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequest is op.AuthRequest.
type authRequest struct {
	id, clientID, redirectURI, state, nonce, loginHint string
	scopes, audience                                   []string
	responseType                                       oidc.ResponseType
	responseMode                                       oidc.ResponseMode
	challenge                                          *oidc.CodeChallenge
	subject                                            string
	done                                               bool
	authTime                                           time.Time
}

func (r *authRequest) GetID() string                         { return r.id }
func (r *authRequest) GetACR() string                        { return "" }
func (r *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (r *authRequest) GetAudience() []string                 { return r.audience }
func (r *authRequest) GetAuthTime() time.Time                { return r.authTime }
func (r *authRequest) GetClientID() string                   { return r.clientID }
func (r *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return r.challenge }
func (r *authRequest) GetNonce() string                      { return r.nonce }
func (r *authRequest) GetRedirectURI() string                { return r.redirectURI }
func (r *authRequest) GetResponseType() oidc.ResponseType    { return r.responseType }
func (r *authRequest) GetResponseMode() oidc.ResponseMode    { return r.responseMode }
func (r *authRequest) GetScopes() []string                   { return r.scopes }
func (r *authRequest) GetState() string                      { return r.state }
func (r *authRequest) GetSubject() string                    { return r.subject }
func (r *authRequest) Done() bool                            { return r.done }

// client is op.Client for a configured Client.
type client struct{ c Client }

func (c *client) GetID() string                    { return c.c.ID }
func (c *client) RedirectURIs() []string           { return c.c.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return nil }
func (c *client) ApplicationType() op.ApplicationType {
	if c.c.Secret == "" {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}
func (c *client) AuthMethod() oidc.AuthMethod {
	if c.c.Secret == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	if c.c.Secret == "" {
		return []oidc.GrantType{oidc.GrantTypeCode}
	}
	return []oidc.GrantType{oidc.GrantTypeClientCredentials, oidc.GrantTypeCode, oidc.GrantTypeTokenExchange}
}
func (c *client) LoginURL(id string) string { return "/login?id=" + id }
func (c *client) AccessTokenType() op.AccessTokenType {
	if c.c.Opaque {
		return op.AccessTokenTypeBearer
	}
	return op.AccessTokenTypeJWT
}
func (c *client) IDTokenLifetime() time.Duration { return 5 * time.Minute }
func (c *client) DevMode() bool                  { return true }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }

// ClockSkew is 0, except for a client whose tokens are born expired: op computes expires_in
// as exp+skew-now, and a negative value breaks clients, so the skew puts it 5m ahead (op also
// backdates iat and nbf by it).
func (c *client) ClockSkew() time.Duration {
	if c.c.Lifetime < 0 {
		return -time.Duration(c.c.Lifetime) + 5*time.Minute
	}
	return 0
}
