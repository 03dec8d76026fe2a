// Package mcp holds the JSON-RPC 2.0 and MCP wire types Palisade needs and the one strict parse
// every way into the gateway uses: Parse and ParseBody read request bytes in a single
// non-recursive scan (ambiguous keys refused, nesting limited to MaxDepth) and return the message
// with its request envelope. It also maps Palisade failures to JSON-RPC error codes.
// It imports only the standard library and sdk/go/abi.
package mcp
