// Package scaffold is the logic of `palisade plugin new`: it writes a new plugin project (source,
// Makefile, README, unit test, fixtures and a stage config) for Go, Rust, C or AssemblyScript
// that builds and passes its tests on its own. The Rust, C and AssemblyScript SDKs are vendored
// into the project from the sdk package, so the project does not depend on this repository.
//
// It imports only the standard library and github.com/added060/palisade/sdk.
package scaffold
