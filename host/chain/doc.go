// Package chain runs an envelope through a bundle's stages: it skips stages that do not match
// without entering Wasm, runs independent stages of a group concurrently, merges verdicts by
// severity (deny > ask > sample > allow > none), short-circuits on deny and on a final allow, and
// applies the stage's failure mode when a plugin traps, times out or answers badly.
//
// It also holds the active chain for a gateway (Active): acquire is one atomic load plus a
// reference, and a swapped-out chain closes once its last request has released it.
//
// It imports host/plugin (through the Evaluator interface) and host/mcp; never bundle, proxy or
// gateway.
package chain
