package authn

import (
	"errors"
	"strings"
)

// Sentinel errors of Verify and Authenticate; match them with errors.Is.
var (
	// ErrNoToken: the request carries no bearer token (401, no error code).
	ErrNoToken = errors.New("authn: no bearer token")
	// ErrInvalidToken: the token is malformed, expired, not yet valid, badly signed, signed
	// with an algorithm not allowed, from another issuer or for another resource, or
	// introspection says it is not active (401 invalid_token).
	ErrInvalidToken = errors.New("authn: invalid token")
	// ErrInsufficientScope: the token is valid but lacks a required scope (403
	// insufficient_scope); the error is a *ScopeError.
	ErrInsufficientScope = errors.New("authn: insufficient scope")
)

// ScopeError is the ErrInsufficientScope of a valid token: who it is and what it lacks.
type ScopeError struct {
	Principal *Principal
	Missing   []string
}

// Error names the missing scopes.
func (e *ScopeError) Error() string {
	return "authn: insufficient scope: missing " + strings.Join(e.Missing, " ")
}

// Unwrap makes errors.Is(err, ErrInsufficientScope) hold.
func (e *ScopeError) Unwrap() error { return ErrInsufficientScope }
