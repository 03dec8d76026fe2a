// Package bundle loads a policy bundle (a folder with bundle.yaml, Wasm files pinned by sha256,
// data files and fixtures), verifies it, and builds the chain it describes: compile (cached),
// fill instance pools, run the bundle's own fixtures. A bundle that fails any step is an error
// and leaves nothing running.
//
// It imports chain, plugin and hostfn; never proxy or gateway.
package bundle
