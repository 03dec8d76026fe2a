// Package authn makes the gateway an OAuth 2.1 resource server, as the MCP authorization
// specification (2025-11-25) asks of an MCP server on HTTP: it verifies the bearer access token
// of each request (a JWT against the issuer's JWKS, or an opaque token by RFC 7662
// introspection), answers 401/403 with the WWW-Authenticate challenge that points clients to
// the RFC 9728 protected resource metadata it also serves, and puts the verified caller, a
// Principal, in the request context for the envelope and the audit event.
//
// It owns token verification and the HTTP challenge, nothing else: which routes it guards and
// where the principal goes are the transport's business. It must not import host/proxy,
// host/gateway, host/chain, host/bundle or NATS (host/layering_test.go).
//
// # Notes
//
// The transport must call StripToken on every request it forwards upstream: a token issued for
// the gateway is never passed through to an MCP server (the specification forbids token
// passthrough).
package authn
