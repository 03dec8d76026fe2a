// Package bundle owns policy bundles: the format (a folder or .tar.gz with bundle.yaml, Wasm files
// pinned by sha256, data files, fixtures and signature.json), the canonical digest and its
// ed25519 signature, deterministic archives, and activation.
//
//   - Build loads a bundle folder into a chain: compile (cached), fill instance pools, run the
//     bundle's own fixtures. A bundle that fails any step is an error and leaves nothing running.
//   - Digest, Sign, Verify: the digest covers every file except the root signature.json;
//     signature.json names the key id, algorithm and digest. KeySet holds trusted public keys.
//   - Manager activates bundles like caddy's Load: stage a private copy, verify, Build, one
//     atomic chain.Active.Swap, then close the old chain once drained. Failures keep the current
//     bundle and record bundle.rejected; success records bundle.activated. The last Keep bundles
//     stay on disk for Rollback, ActivateKept and Restore. With a shadow slot it also loads a
//     shadow bundle the same way (LoadShadow) and promotes it through activation (PromoteShadow).
//   - Sources feed a Target (a Manager, or its ShadowTarget): DirSource (folder or archive, polled with debounce), HTTPSource
//     (ETag), ObjectStoreSource (NATS Object Store, watched plus resync); Push publishes.
//
// It imports chain, plugin, hostfn, audit (the event type) and nats.go; never proxy, admin or
// gateway.
package bundle
