// Package pin pins MCP tool definitions: on the first tools/list answer from a server it records
// each tool's name, description and a hash of its schemas; when a later answer changes a pinned
// definition, calls to that tool are denied until a person approves the change, and an audit
// event (kind tool.changed) carries the difference. It also strips ANSI escapes and invisible
// characters from the tool descriptions passed on to clients, and from the descriptions and
// titles inside their input and output schemas.
//
// Pinner implements engine.Check (the request-phase check, run before a held call is shown to a
// person), engine.Hook (the same check again once the call is resolved) and engine.ToolsObserver
// (the tools/list response-phase helper; the proxy hands it every tools/list answer, however
// the upstream delivered it). It imports host/proxy and host/audit; nothing in host/proxy
// imports it.
package pin
