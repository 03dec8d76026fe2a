// Package plugin runs Palisade plugins on wazero, in either calling convention (sdk/ABI.md): the
// direct one (a module exporting palisade_alloc: the envelope is written into guest memory
// once, the verdict read once; every SDK builds for it) straight on wazero, and Extism, kept
// for compatibility with plugins built on an Extism PDK, on the Extism go-sdk. It compiles a module once (with an on-disk compilation cache shared by every
// stage; stages running identical direct-convention modules share one runtime and compiled
// module, each keeping its own config, host functions and memory cap), keeps a pool of
// instances per stage, enforces a per-call timeout and a memory cap, and
// discards and replaces an instance that traps or times out, or (direct convention) that has
// grown to three quarters of its memory cap by the end of a call, before a later call traps
// there; a trap's error carries the first line the guest wrote to stderr. Untrusted direct plugins are
// instrumented at load (instrument.go) so a timer can stop them without wazero's
// close-on-context-done. A module that is byte for byte one the host was given natively
// (Options.Native: the first-party module, host/firstparty) runs as that Go code instead, with
// the same pool, failure classes and host functions (native.go).
//
// It owns the Extism runtime and nothing above it: it knows no chain, envelope or verdict merge.
// Host functions arrive as values (see host/hostfn). It must not import host/chain, host/bundle,
// host/proxy or host/gateway.
package plugin
