// Package audit owns the audit event (one per decision, bundle change,
// approval or tool-list change), its NATS subject, and its durable delivery
// to a JetStream stream: Publisher.Record queues an event off the request
// path, publishes it with Nats-Msg-Id = event id so retries never double,
// and spools to disk while NATS is unreachable, replaying the spool in order
// on reconnect. Tail subscribes to the stream and prints events. With a
// Signer each event carries an ed25519 signature in its headers; Tail (Verify)
// and Signers flag events that are unsigned, badly signed or signed by a key
// no gateway registered.
//
// It imports nats.go, nkeys (signature checks) and the standard library only: never nats-server (that
// is host/bus), never other host/ packages. The JSON shape of Event is
// normative in sdk/schema/audit-event.schema.json.
package audit
