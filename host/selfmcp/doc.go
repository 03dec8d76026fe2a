// Package selfmcp is Palisade's own MCP server, for agents that ask before they act: tools
// checkIntent, reportAction and getPolicy, and resources config://rules and
// audit://recent, all answered by the same chain and engine as the proxies. It serves stdio and
// Streamable HTTP (bearer token) on the official Go SDK (github.com/modelcontextprotocol/go-sdk),
// limits each caller's rate per tool, and notifies resource subscribers when the bundle changes.
//
// It imports host/proxy, host/chain, host/bundle and host/audit; nothing imports it but cmd and
// host/gateway.
package selfmcp
