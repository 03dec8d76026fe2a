// Package mcp holds the JSON-RPC 2.0 and MCP wire types Palisade needs, parses a message once into
// the envelope plugins see (Parse), and maps Palisade failures to JSON-RPC error codes.
// It imports only the standard library and sdk/go/abi.
package mcp
