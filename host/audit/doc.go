// Package audit owns the audit event (one per decision, bundle change,
// approval or tool-list change), its NATS subject, and its durable delivery
// to a JetStream stream: Publisher.Record queues an event off the request
// path, publishes it with Nats-Msg-Id = event id so retries never double,
// and spools to disk while NATS is unreachable, replaying the spool in order
// on reconnect. Tail subscribes to the stream and prints events. With a
// Signer each batch of events is signed once (an ed25519 signature over the batch's
// RFC 6962 tree hash) and each event carries the signature and its own inclusion proof in its
// headers, so it is checked alone; Tail (Verify)
// and Signers flag events that are unsigned, badly signed or signed by a key
// no gateway registered. Event.FillDefaults is the one place an event's id,
// time and kind defaults are set; Ring keeps a process's recent events for the
// dashboard and the own MCP server alike. The History types are what the dashboard's stored
// history speaks; StreamHistory answers them from the stream (a bounded, verified scan).
//
// It imports nats.go, nkeys (signature checks), golang.org/x/mod/sumdb/tlog (the batch's Merkle
// tree), sdk/go/abi (StageResult) and the standard library only: never nats-server (that is host/bus), never other host/ packages. The JSON shape of Event is
// normative in sdk/schema/audit-event.schema.json.
package audit
