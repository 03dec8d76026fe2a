// Package proxy holds the transports: Streamable HTTP with SSE pass-through (http.go), the
// aggregated endpoint over many upstreams (aggregate.go), the stdio proxy and its supervised
// stdio upstreams, and the hook's HTTP handler and client (hook_http.go). A transport moves
// bytes in and out of an engine.Exchange (host/engine): it parses the client's message, calls
// Engine.Begin, sends what Forward says and writes what Answer returns.
//
// Echo stays in the HTTP handlers. It depends on host/engine and must not import the hooks built
// on the engine (approval, pin, token), the servers (admin, selfmcp), host/gateway or cmd.
package proxy
