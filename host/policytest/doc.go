// Package policytest is the logic of `palisade policy test`: it builds a bundle (without running
// its own fixtures), evaluates fixture files (MCP requests with an optional expected action) and
// reports each decision with every stage's action and score, as text or one JSON object per
// fixture.
//
// It imports host/bundle, host/plugin and host/chain; it never imports host/proxy or cmd.
package policytest
