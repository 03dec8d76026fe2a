// Package version owns the one version string Palisade reports: `palisade version`, `--version`,
// the serverInfo of Palisade's own MCP server. It imports only the standard library, so any
// package may use it.
package version
