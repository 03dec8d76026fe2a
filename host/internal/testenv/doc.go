// Package testenv holds helpers that start real dependencies for tests:
// an in-process nats-server with JetStream (StartNATS, StartRestartableNATS), and a
// three-server JetStream cluster with the bus's role identities (StartCluster).
// Other engineers add their helpers (StartUpstream, BuildPlugin) in their own
// files here.
//
// It is imported only by _test.go files. It never mocks: every helper runs
// the real thing on loopback and cleans up with t.Cleanup.
package testenv
