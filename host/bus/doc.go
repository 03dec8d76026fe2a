// Package bus gives the gateway its NATS connection: either an embedded
// nats-server with JetStream (file store under the data directory, client
// port 127.0.0.1:4222 so that external subscribers can connect) or an
// external server or cluster named by URL.
//
// The embedded server requires credentials: one nkey per role (gateway,
// admin, reader, approver, sink) kept in DATA_DIR/nats-auth with mode 0600,
// each with least-privilege permissions (see Permissions). External servers
// are reached with creds files.
//
// It is the only package that imports github.com/nats-io/nats-server. Other
// packages receive a *nats.Conn from Bus.Connect and never know which kind of
// server is behind it. It imports nothing else from host/.
package bus
