// Package auditsink copies the audit stream into PostgreSQL, where it can be queried: a
// durable JetStream consumer verifies each event's signature (audit.Signers, the check `audit
// tail` makes) and writes it exactly once, in batches, acknowledging a batch only after its
// transaction committed.
//
// An event that fails verification is stored with verified = false and the reason
// (verify_problem: unsigned, bad-signature, untrusted-signer), never under the audit id of a
// trusted event, and queries leave it out unless asked. A message that is not an event at all,
// or that PostgreSQL refuses as data, is kept in audit_rejects. Nothing is dropped.
//
// The schema is versioned: embedded migrations/NNNN_name.sql files, applied in order, each in
// one transaction recorded in schema_migrations (Migrate). Retention deletes events older than
// Options.Retention. Store answers the questions of `palisade audit query`; History answers
// the dashboard's stored history (audit.HistoryQuery) from the same table.
//
// It owns the record in PostgreSQL and imports audit (the event, verification), nats.go and
// pgx. It must not import host/proxy or host/gateway; the gateway runs it as its audit_sink
// feature. See README.md for the schema.
package auditsink
