// Package proxy is where MCP traffic meets the chain: the Engine (one decision per message:
// acquire the active chain, run the request phase, resolve ask and sample, run the response
// phase, record one audit event), the Exchange that sequences one call's lifecycle (judge, hold,
// forward, fallback, judge the answer, finish) for every transport, and the transports that feed
// it — Streamable HTTP with SSE pass-through (http.go), and the stdio proxy and Claude Code hook
// adapters.
//
// Echo stays in the HTTP handlers; the Engine takes context.Context and typed values. It must not
// import host/gateway or cmd.
package proxy
