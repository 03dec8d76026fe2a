// Package approval holds calls whose final verdict is ask until a person decides. Manager
// implements engine.Approver: Hold parks the call, sends MCP progress notifications while it
// waits, and returns when someone approves or denies it (dashboard, CLI, NATS), when its timeout
// passes (deny unless the rule says otherwise), or when the client goes away.
//
// With a NATS connection the held calls, the decisions and the scoped grants live in one
// JetStream KV bucket, so in a fleet any gateway or operator can resolve any held call; the first
// decision written wins (KV create), and only the gateway holding the call records its audit
// event.
//
// Decisions and grants read from the bucket count only when a trusted approver key signed them;
// others are ignored and audited as forged (see Options.Approvers).
//
// It imports proxy (for Held and Resolution), chain, audit and nats.go; it must not import admin,
// gateway or cmd.
package approval
