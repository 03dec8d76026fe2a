// Package engine decides messages: the Engine (one decision per message: acquire the active
// chain, run the request phase, resolve ask and sample, run the response phase, record one audit
// event), the Exchange that sequences one call's lifecycle (judge, hold, forward, fallback, judge
// the answer, finish) for every transport, the shadow judge that tries a second bundle on the
// same calls off the hot path (Shadow), the Claude Code hook's judgment (Engine.Hook), and the
// small interfaces the hooks built on it implement (Recorder, Approver, Granter, Hook, Check,
// ToolInfoSource, ToolsObserver).
//
// It takes context.Context and typed values and imports no transport (host/proxy), no hook
// built on it (approval, pin, token) and no server (admin, selfmcp, gateway): they depend on it.
// host/layering_test.go enforces the arrows.
package engine
