// Package plugin runs Palisade plugins on the Extism go-sdk (wazero): it compiles a module once
// (with an on-disk compilation cache shared by every stage), keeps a pool of instances per stage,
// enforces a per-call timeout and a memory cap, and discards and replaces an instance that traps
// or times out.
//
// It owns the Extism runtime and nothing above it: it knows no chain, envelope or verdict merge.
// Host functions arrive as values (see host/hostfn). It must not import host/chain, host/bundle,
// host/proxy or host/gateway.
package plugin
