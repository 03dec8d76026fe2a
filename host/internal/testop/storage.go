package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

var errNotFound = errors.New("not found")

func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// storage is op.Storage in memory.
type storage struct {
	cfg Config

	mu       sync.Mutex
	keys     []signingKey            // the last one signs; all are published
	requests map[string]*authRequest // by id
	codes    map[string]string       // code → request id
	tokens   map[string]*token       // by id
}

type token struct {
	subject, clientID string
	audience, scopes  []string
	expiration        time.Time
}

func newStorage(cfg Config, key *rsa.PrivateKey) *storage {
	return &storage{cfg: cfg, keys: []signingKey{{id: newID(), key: key}}, requests: map[string]*authRequest{}, codes: map[string]string{}, tokens: map[string]*token{}}
}

func (s *storage) clientCfg(id string) (Client, bool) {
	for _, c := range s.cfg.Clients {
		if c.ID == id {
			return c, true
		}
	}
	return Client{}, false
}

func (s *storage) userClaims(id string) (map[string]any, bool) {
	for _, u := range s.cfg.Users {
		if u.ID == id {
			return u.Claims, true
		}
	}
	return nil, false
}

// approve marks an auth request as logged in by its login_hint user, or the first user.
func (s *storage) approve(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.requests[id]
	if !ok {
		return fmt.Errorf("auth request %q: %w", id, errNotFound)
	}
	user := r.loginHint
	if user == "" && len(s.cfg.Users) > 0 {
		user = s.cfg.Users[0].ID
	}
	if _, ok := s.userClaims(user); !ok {
		return fmt.Errorf("user %q: %w", user, errNotFound)
	}
	r.subject, r.done, r.authTime = user, true, time.Now()
	return nil
}

// audience is the RFC 8707 resources asked for, else the client id.
func audience(ctx context.Context, clientID string) []string {
	if res := resourcesFrom(ctx); len(res) > 0 {
		return slices.Clone(res)
	}
	return []string{clientID}
}

// AuthStorage.

func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	r := &authRequest{
		id: newID(), clientID: req.ClientID, redirectURI: req.RedirectURI, scopes: req.Scopes,
		state: req.State, nonce: req.Nonce, responseType: req.ResponseType, responseMode: req.ResponseMode,
		loginHint: req.LoginHint, audience: audience(ctx, req.ClientID),
	}
	if req.CodeChallenge != "" {
		r.challenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}
	}
	s.mu.Lock()
	s.requests[r.id] = r
	s.mu.Unlock()
	return r, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.requests[id]; ok {
		return r, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errNotFound
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for c, rid := range s.codes {
		if rid == id {
			delete(s.codes, c)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	clientID := ""
	switch r := req.(type) {
	case *authRequest:
		clientID = r.clientID
	case *ccRequest:
		clientID = r.clientID
	case op.TokenExchangeRequest:
		clientID = r.GetClientID()
	}
	lifetime := 5 * time.Minute
	if c, ok := s.clientCfg(clientID); ok && c.Lifetime != 0 {
		lifetime = time.Duration(c.Lifetime)
	}
	t := &token{subject: req.GetSubject(), clientID: clientID, audience: req.GetAudience(), scopes: req.GetScopes(), expiration: time.Now().Add(lifetime)}
	id := newID()
	s.mu.Lock()
	s.tokens[id] = t
	s.mu.Unlock()
	return id, t.expiration, nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("testop issues no refresh tokens")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(_ context.Context, id, _, _ string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, id)
	return nil
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

// rotate adds a new signing key; the old ones stay published.
func (s *storage) rotate() error {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, signingKey{id: newID(), key: k})
	return nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1], nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

// OPStorage.

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.clientCfg(id)
	if !ok {
		return nil, fmt.Errorf("client %q: %w", id, errNotFound)
	}
	return &client{c: c}, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.clientCfg(id)
	if !ok || c.Secret == "" || c.Secret != secret {
		return errors.New("invalid client credentials")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest puts the user's claims in the ID token too (as an IdP's mappers do:
// groups, email), for the dashboard's sign-in.
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	info.Subject = req.GetSubject()
	if uc, ok := s.userClaims(req.GetSubject()); ok {
		for k, v := range uc {
			info.AppendClaims(k, v)
		}
	}
	return nil
}

func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	info.Subject = subject
	return nil
}

// SetIntrospectionFromToken answers for any authenticated client (the resource server).
func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || t.subject != subject || time.Now().After(t.expiration) {
		return errNotFound
	}
	resp.Subject, resp.ClientID, resp.Scope = t.subject, t.clientID, t.scopes
	resp.Audience, resp.Expiration, resp.TokenType = t.audience, oidc.FromTime(t.expiration), "Bearer"
	resp.Claims = s.claimsOf(t.subject, t.clientID)
	return nil
}

// claimsOf are the configured claims of a user, or of a client acting for itself.
func (s *storage) claimsOf(subject, clientID string) map[string]any {
	if uc, ok := s.userClaims(subject); ok {
		return maps.Clone(uc)
	}
	if c, ok := s.clientCfg(clientID); ok && subject == clientID {
		return maps.Clone(c.Claims)
	}
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, userID, clientID string, _ []string) (map[string]any, error) {
	return s.claimsOf(userID, clientID), nil
}

// GetPrivateClaimsFromRequest puts the granted scopes (RFC 9068 `scope`) and the subject's
// claims in a JWT access token.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	clientID := ""
	switch r := req.(type) {
	case *authRequest:
		clientID = r.clientID
	case *ccRequest:
		clientID = r.clientID
	}
	claims := s.claimsOf(req.GetSubject(), clientID)
	if claims == nil {
		claims = map[string]any{}
	}
	if sc := req.GetScopes(); len(sc) > 0 {
		claims["scope"] = strings.Join(sc, " ")
	}
	return claims, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

func (s *storage) ValidateJWTProfileScopes(_ context.Context, _ string, scopes []string) ([]string, error) {
	return scopes, nil
}

func (s *storage) Health(context.Context) error { return nil }

// ClientCredentialsStorage.

func (s *storage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := s.AuthorizeClientIDSecret(ctx, id, secret); err != nil {
		return nil, err
	}
	return s.GetClientByClientID(ctx, id)
}

func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return &ccRequest{clientID: id, scopes: scopes, audience: audience(ctx, id)}, nil
}

// ccRequest is a client_credentials token request: the client is the subject.
type ccRequest struct {
	clientID         string
	scopes, audience []string
}

func (r *ccRequest) GetSubject() string    { return r.clientID }
func (r *ccRequest) GetAudience() []string { return r.audience }
func (r *ccRequest) GetScopes() []string   { return r.scopes }

// TokenExchangeStorage (RFC 8693): a confidential client exchanges an access token this
// provider issued for an access token to another resource (the `audience` or `resource` it
// names), for the same subject, with the client as the actor (`act`).

func (s *storage) ValidateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	if r.GetRequestedTokenType() == "" {
		r.SetRequestedTokenType(oidc.AccessTokenType)
	}
	if r.GetRequestedTokenType() != oidc.AccessTokenType {
		return errors.New("testop exchanges for access tokens only")
	}
	if r.GetExchangeSubject() == "" {
		return errors.New("no subject token")
	}
	return nil
}

func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) (map[string]any, error) {
	claims := map[string]any{"act": map[string]any{"sub": r.GetClientID()}}
	for k, v := range r.GetExchangeSubjectTokenClaims() {
		if k == "groups" || k == "email" {
			claims[k] = v
		}
	}
	if sc := r.GetScopes(); len(sc) > 0 {
		claims["scope"] = strings.Join(sc, " ")
	}
	return claims, nil
}

func (s *storage) SetUserinfoFromTokenExchangeRequest(context.Context, *oidc.UserInfo, op.TokenExchangeRequest) error {
	return nil
}
