// Package token issues and verifies Palisade execution tokens: short-lived ed25519-signed
// statements that the gateway allowed one specific tool call (server, tool, arguments digest,
// audit id). The gateway attaches a token to the forwarded request's params._meta; a tool server
// verifies it with the gateway's published public key (see sdk/TOKENS.md). Only the token's hash
// goes into the audit event.
//
// The wire format is compact and stdlib-only to verify:
//
//	base64url(payload JSON) "." base64url(ed25519 signature over the first part's ASCII bytes)
//
// This package imports only the standard library. It must not import anything from host/.
package token
