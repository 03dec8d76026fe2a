// Package pin pins MCP tool definitions: on the first tools/list answer from a server it records
// each tool's name, description and a hash of its schemas; when a later answer changes a pinned
// definition, calls to that tool are denied until a person approves the change, and an audit
// event (kind tool.changed) carries the difference. It also strips ANSI escapes and invisible
// characters from the tool descriptions passed on to clients.
//
// Pinner implements proxy.Hook (the request-phase check) and proxy.ToolsObserver (the
// tools/list response-phase helper). It imports host/proxy and host/audit; nothing in host/proxy
// imports it.
package pin
